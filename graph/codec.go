package graph

import (
	"bytes"
	"encoding"
	"encoding/binary"
	"encoding/gob"
	"errors"
	"fmt"
	"hash/crc32"
	"maps"
	"math"
	"reflect"
	"slices"
	"sync"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/util"
	"google.golang.org/protobuf/proto"

	"github.com/shoal-data/shoal/graph/graphpb"
)

// Codec turns values of one Go type into bytes and back, so that they can
// cross a process boundary or be spilled to disk.
type Codec interface {
	// Name identifies the codec on the wire; every process must register
	// the same codec under the same name.
	Name() string
	// Type is the Go type the codec handles. An interface type matches
	// every value that implements it.
	Type() reflect.Type
	Encode(v any) ([]byte, error)
	Decode(data []byte) (any, error)
}

// Value is an encoded Go value.
type Value struct {
	Codec string
	Data  []byte
}

// UnencodableError says that a value cannot be encoded for the wire.
type UnencodableError struct {
	Type   string
	Reason string
}

func (e *UnencodableError) Error() string {
	return fmt.Sprintf("cannot encode a value of type %s: %s; register a codec for it with graph.RegisterCodec, "+
		"or use a type that encoding/gob can encode (exported fields, no funcs or channels)", e.Type, e.Reason)
}

type funcCodec[T any] struct {
	name string
	enc  func(T) ([]byte, error)
	dec  func([]byte) (T, error)
}

func (c *funcCodec[T]) Name() string       { return c.name }
func (c *funcCodec[T]) Type() reflect.Type { return reflect.TypeFor[T]() }
func (c *funcCodec[T]) Encode(v any) ([]byte, error) {
	t, ok := v.(T)
	if !ok {
		return nil, fmt.Errorf("codec %s: got a %T", c.name, v)
	}
	return c.enc(t)
}
func (c *funcCodec[T]) Decode(b []byte) (any, error) {
	v, err := c.dec(b)
	if err != nil {
		return nil, fmt.Errorf("codec %s: %w", c.name, err)
	}
	return v, nil
}

// NewCodec returns a codec for T from an encode and a decode function.
func NewCodec[T any](name string, encode func(T) ([]byte, error), decode func([]byte) (T, error)) Codec {
	return &funcCodec[T]{name: name, enc: encode, dec: decode}
}

// GobCodec returns a codec for T that uses encoding/gob. Its name is
// "gob:" followed by T's package path and name.
func GobCodec[T any]() Codec {
	t := reflect.TypeFor[T]()
	return NewCodec(gobName(t), func(v T) ([]byte, error) {
		var b bytes.Buffer
		if err := gob.NewEncoder(&b).Encode(&v); err != nil {
			return nil, err
		}
		return b.Bytes(), nil
	}, func(data []byte) (T, error) {
		var v T
		err := gob.NewDecoder(bytes.NewReader(data)).Decode(&v)
		return v, err
	})
}

func gobName(t reflect.Type) string {
	return "gob:" + typeName(t)
}

// typeName names a type with full package paths, so that two types of the
// same short name in different packages get different names.
func typeName(t reflect.Type) string {
	if t.Name() != "" && t.PkgPath() != "" {
		return t.PkgPath() + "." + t.Name()
	}
	switch t.Kind() {
	case reflect.Pointer:
		return "*" + typeName(t.Elem())
	case reflect.Slice:
		return "[]" + typeName(t.Elem())
	case reflect.Array:
		return fmt.Sprintf("[%d]%s", t.Len(), typeName(t.Elem()))
	case reflect.Map:
		return "map[" + typeName(t.Key()) + "]" + typeName(t.Elem())
	}
	return t.String()
}

// checkGobable reports why gob cannot encode values of type t, or nil.
func checkGobable(t reflect.Type) error {
	seen := map[reflect.Type]bool{}
	var walk func(t reflect.Type, path string) error
	walk = func(t reflect.Type, path string) error {
		if seen[t] {
			return nil
		}
		seen[t] = true
		if encodesItself(t) {
			return nil // gob calls its GobEncode, MarshalBinary or MarshalText
		}
		switch t.Kind() {
		case reflect.Func, reflect.Chan, reflect.UnsafePointer, reflect.Complex64, reflect.Complex128:
			if t.Kind() == reflect.Complex64 || t.Kind() == reflect.Complex128 {
				return nil
			}
			return &UnencodableError{Type: typeName(t), Reason: path + "is a " + t.Kind().String()}
		case reflect.Pointer, reflect.Slice, reflect.Array:
			return walk(t.Elem(), path)
		case reflect.Map:
			if err := walk(t.Key(), path); err != nil {
				return err
			}
			return walk(t.Elem(), path)
		case reflect.Struct:
			if t == reflect.TypeFor[time.Time]() {
				return nil
			}
			exported := 0
			for i := range t.NumField() {
				f := t.Field(i)
				if !f.IsExported() {
					continue
				}
				exported++
				if err := walk(f.Type, path+"field "+f.Name+" "); err != nil {
					return err
				}
			}
			if exported == 0 {
				return &UnencodableError{Type: typeName(t), Reason: path + "has no exported fields"}
			}
		}
		return nil
	}
	return walk(t, "")
}

var marshalerTypes = []reflect.Type{
	reflect.TypeFor[gob.GobEncoder](),
	reflect.TypeFor[encoding.BinaryMarshaler](),
	reflect.TypeFor[encoding.TextMarshaler](),
}

// encodesItself reports whether gob encodes values of type t through one of
// their methods rather than field by field.
func encodesItself(t reflect.Type) bool {
	for _, m := range marshalerTypes {
		if t.Implements(m) || reflect.PointerTo(t).Implements(m) {
			return true
		}
	}
	return false
}

// RegisterCodec adds a codec. A second codec for the same name or type is
// an error.
func (r *Registry) RegisterCodec(c Codec) error {
	return r.update(func(s *regSnapshot) error {
		if _, ok := s.codecs[c.Name()]; ok {
			return fmt.Errorf("codec %q is already registered", c.Name())
		}
		t := c.Type()
		if t.Kind() == reflect.Interface {
			s.ifaces = append(s.ifaces, ifaceCodec{typ: t, c: c})
		} else {
			if old, ok := s.byType[t]; ok {
				return fmt.Errorf("type %s already has codec %q", t, old.Name())
			}
			s.byType[t] = c
		}
		s.codecs[c.Name()] = c
		return nil
	})
}

// RegisterCodec adds a codec for T built from an encode and a decode
// function to the default registry.
func RegisterCodec[T any](name string, encode func(T) ([]byte, error), decode func([]byte) (T, error)) error {
	return Default().RegisterCodec(NewCodec(name, encode, decode))
}

// ensureCodecFor registers a gob codec for t in r unless r can already
// encode values of type t.
func ensureCodecFor[T any](r *Registry) error {
	t := reflect.TypeFor[T]()
	if _, ok := r.codecForType(t); ok {
		return nil
	}
	if t.Kind() == reflect.Interface {
		return nil // values are encoded by their dynamic type
	}
	if err := checkGobable(t); err != nil {
		return err
	}
	err := r.RegisterCodec(GobCodec[T]())
	if err != nil {
		if _, ok := r.codecForType(t); ok {
			return nil // registered concurrently
		}
	}
	return err
}

func (r *Registry) codecForType(t reflect.Type) (Codec, bool) {
	for c := r; c != nil; c = c.parent {
		if cd, ok := c.snap.Load().byType[t]; ok {
			return cd, true
		}
	}
	for c := r; c != nil; c = c.parent {
		for _, ic := range c.snap.Load().ifaces {
			if t.Implements(ic.typ) {
				return ic.c, true
			}
		}
	}
	return nil, false
}

// Codec returns the codec registered under name.
func (r *Registry) Codec(name string) (Codec, bool) {
	for c := r; c != nil; c = c.parent {
		if cd, ok := c.snap.Load().codecs[name]; ok {
			return cd, true
		}
	}
	return nil, false
}

// EncodeValue encodes v with the codec registered for its type.
func (r *Registry) EncodeValue(v any) (Value, error) {
	if v == nil {
		return Value{Codec: "nil"}, nil
	}
	c, ok := r.codecForType(reflect.TypeOf(v))
	if !ok {
		return Value{}, &UnencodableError{Type: typeName(reflect.TypeOf(v)), Reason: "no codec is registered for it"}
	}
	var b []byte
	var err error
	if rc, ok := c.(registryCodec); ok {
		b, err = rc.encodeIn(r, v)
	} else {
		b, err = c.Encode(v)
	}
	if err != nil {
		return Value{}, fmt.Errorf("encode %T with codec %s: %w", v, c.Name(), err)
	}
	return Value{Codec: c.Name(), Data: b}, nil
}

// DecodeValue decodes a value that EncodeValue encoded.
func (r *Registry) DecodeValue(v Value) (any, error) {
	if v.Codec == "nil" {
		return nil, nil
	}
	c, ok := r.Codec(v.Codec)
	if !ok {
		return nil, fmt.Errorf("decode value: codec %q is not registered in this process", v.Codec)
	}
	if rc, ok := c.(registryCodec); ok {
		return rc.decodeIn(r, v.Data)
	}
	return c.Decode(v.Data)
}

// MarshalValue encodes v into one byte slice that holds the codec name too.
func (r *Registry) MarshalValue(v any) ([]byte, error) {
	ev, err := r.EncodeValue(v)
	if err != nil {
		return nil, err
	}
	return proto.Marshal(&graphpb.Value{Codec: ev.Codec, Data: ev.Data})
}

// UnmarshalValue decodes bytes written by MarshalValue.
func (r *Registry) UnmarshalValue(b []byte) (any, error) {
	var pv graphpb.Value
	if err := proto.Unmarshal(b, &pv); err != nil {
		return nil, fmt.Errorf("decode value: %w", err)
	}
	return r.DecodeValue(Value{Codec: pv.Codec, Data: pv.Data})
}

// Sizer is implemented by values that know how many bytes of memory they
// hold. Executors use it to account memory.
type Sizer interface {
	SizeBytes() int64
}

// SizeOf returns the number of bytes of memory v holds: the buffer sizes of
// Arrow data, SizeBytes for a Sizer, and an estimate from the Go type
// otherwise.
func SizeOf(v any) int64 {
	switch x := v.(type) {
	case nil:
		return 0
	case Sizer:
		return x.SizeBytes()
	case arrow.RecordBatch:
		return util.TotalRecordSize(x)
	case arrow.Table:
		var n int64
		for i := range int(x.NumCols()) {
			for _, c := range x.Column(i).Data().Chunks() {
				n += util.TotalArraySize(c)
			}
		}
		return n
	case arrow.Array:
		return util.TotalArraySize(x)
	case string:
		return int64(len(x)) + 16
	case []byte:
		return int64(cap(x)) + 24
	case []any:
		n := int64(24 + 16*len(x))
		for _, e := range x {
			n += SizeOf(e)
		}
		return n
	}
	return sizeOfReflect(reflect.ValueOf(v), 0)
}

func sizeOfReflect(v reflect.Value, depth int) int64 {
	if depth > 4 {
		return 8
	}
	t := v.Type()
	switch v.Kind() {
	case reflect.String:
		return int64(v.Len()) + 16
	case reflect.Slice:
		n := int64(24)
		ek := t.Elem().Kind()
		if ek <= reflect.Complex128 && ek != reflect.Invalid {
			return n + int64(v.Cap())*int64(t.Elem().Size())
		}
		for i := range v.Len() {
			n += sizeOfReflect(v.Index(i), depth+1)
		}
		return n
	case reflect.Map:
		n := int64(48)
		it := v.MapRange()
		for it.Next() {
			n += sizeOfReflect(it.Key(), depth+1) + sizeOfReflect(it.Value(), depth+1)
		}
		return n
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			return 8
		}
		return 8 + sizeOfReflect(v.Elem(), depth+1)
	case reflect.Struct:
		n := int64(t.Size())
		for i := range v.NumField() {
			f := v.Field(i)
			switch f.Kind() {
			case reflect.String, reflect.Slice, reflect.Map, reflect.Pointer, reflect.Interface:
				n += sizeOfReflect(f, depth+1) - int64(f.Type().Size())
			}
		}
		return n
	}
	return int64(t.Size())
}

// registerBuiltinCodecs adds the codecs for Go's basic types, time values,
// slices of them, []any and Arrow data.
func registerBuiltinCodecs(r *Registry) error {
	le := binary.LittleEndian
	cs := []Codec{
		NewCodec("bool", func(v bool) ([]byte, error) {
			if v {
				return []byte{1}, nil
			}
			return []byte{0}, nil
		}, func(b []byte) (bool, error) {
			if len(b) != 1 {
				return false, errors.New("bool: want 1 byte")
			}
			return b[0] != 0, nil
		}),
		intCodec[int]("int"), intCodec[int8]("int8"), intCodec[int16]("int16"),
		intCodec[int32]("int32"), intCodec[int64]("int64"),
		uintCodec[uint]("uint"), uintCodec[uint8]("uint8"), uintCodec[uint16]("uint16"),
		uintCodec[uint32]("uint32"), uintCodec[uint64]("uint64"),
		NewCodec("float64", func(v float64) ([]byte, error) {
			return le.AppendUint64(nil, math.Float64bits(v)), nil
		}, func(b []byte) (float64, error) {
			if len(b) != 8 {
				return 0, errors.New("float64: want 8 bytes")
			}
			return math.Float64frombits(le.Uint64(b)), nil
		}),
		NewCodec("float32", func(v float32) ([]byte, error) {
			return le.AppendUint32(nil, math.Float32bits(v)), nil
		}, func(b []byte) (float32, error) {
			if len(b) != 4 {
				return 0, errors.New("float32: want 4 bytes")
			}
			return math.Float32frombits(le.Uint32(b)), nil
		}),
		NewCodec("string", func(v string) ([]byte, error) { return []byte(v), nil },
			func(b []byte) (string, error) { return string(b), nil }),
		NewCodec("bytes", func(v []byte) ([]byte, error) { return v, nil },
			func(b []byte) ([]byte, error) { return bytes.Clone(b), nil }),
		NewCodec("time", encodeTime, decodeTime),
		NewCodec("duration", func(v time.Duration) ([]byte, error) {
			return binary.AppendVarint(nil, int64(v)), nil
		}, func(b []byte) (time.Duration, error) {
			n, k := binary.Varint(b)
			if k <= 0 || k != len(b) {
				return 0, errors.New("duration: bad varint")
			}
			return time.Duration(n), nil
		}),
		GobCodec[[]int](), GobCodec[[]int64](), GobCodec[[]float64](), GobCodec[[]string](),
		GobCodec[[]bool](),
		// Maps are written in key order (gob writes them in Go's random
		// iteration order), so that a literal map gives a stable key.
		mapCodec("map[string]int64", binary.AppendVarint, func(b []byte) (int64, int) { return binary.Varint(b) }),
		mapCodec("map[string]float64", func(b []byte, v float64) []byte {
			return le.AppendUint64(b, math.Float64bits(v))
		}, func(b []byte) (float64, int) {
			if len(b) < 8 {
				return 0, 0
			}
			return math.Float64frombits(le.Uint64(b)), 8
		}),
		mapCodec("map[string]string", appendString, readString),
		listCodec{r},
		NewCodec("arrow.record", encodeRecord, decodeRecord),
		NewCodec("arrow.table", encodeTable, decodeTable),
	}
	for _, c := range cs {
		if err := r.RegisterCodec(c); err != nil {
			return err
		}
	}
	return nil
}

// encodeTime writes the instant (Unix seconds and nanoseconds), the zone
// offset in seconds and the name of the location. time.Time.MarshalBinary
// would drop the name, and fails on some historical offsets.
func encodeTime(t time.Time) ([]byte, error) {
	_, offset := t.Zone()
	b := binary.AppendVarint(nil, t.Unix())
	b = binary.AppendUvarint(b, uint64(t.Nanosecond()))
	b = binary.AppendVarint(b, int64(offset))
	return append(b, t.Location().String()...), nil
}

func decodeTime(b []byte) (time.Time, error) {
	sec, k1 := binary.Varint(b)
	if k1 <= 0 {
		return time.Time{}, errors.New("time: bad seconds")
	}
	nsec, k2 := binary.Uvarint(b[k1:])
	if k2 <= 0 || nsec >= 1e9 {
		return time.Time{}, errors.New("time: bad nanoseconds")
	}
	off, k3 := binary.Varint(b[k1+k2:])
	if k3 <= 0 || off < -7*86400 || off > 7*86400 {
		return time.Time{}, errors.New("time: bad zone offset")
	}
	offset := int(off)
	name := string(b[k1+k2+k3:])
	t := time.Unix(sec, int64(nsec))
	switch name {
	case "UTC":
		if offset == 0 {
			return t.UTC(), nil
		}
	case "Local":
		if tl := t.Local(); zoneOffset(tl) == offset {
			return tl, nil
		}
		return t.In(time.FixedZone("", offset)), nil
	}
	if loc, err := loadLocation(name); err == nil && name != "" {
		if tl := t.In(loc); zoneOffset(tl) == offset {
			return tl, nil
		}
	}
	// The name is not in this process's time zone database, or means
	// another offset here: keep the name and the offset.
	return t.In(time.FixedZone(name, offset)), nil
}

func zoneOffset(t time.Time) int {
	_, off := t.Zone()
	return off
}

var locations sync.Map // location name -> *time.Location, for the names found

func loadLocation(name string) (*time.Location, error) {
	if v, ok := locations.Load(name); ok {
		return v.(*time.Location), nil
	}
	loc, err := time.LoadLocation(name)
	if err != nil {
		return nil, err
	}
	locations.Store(name, loc)
	return loc, nil
}

// mapCodec encodes a map[string]V as its length, then its entries in key
// order, each as a length-prefixed key and a value written by put. get
// returns a value and the number of bytes it took, or 0 for bad bytes.
func mapCodec[V any](name string, put func([]byte, V) []byte, get func([]byte) (V, int)) Codec {
	return NewCodec(name, func(m map[string]V) ([]byte, error) {
		b := binary.AppendUvarint(nil, uint64(len(m)))
		for _, k := range slices.Sorted(maps.Keys(m)) {
			b = put(appendString(b, k), m[k])
		}
		return b, nil
	}, func(b []byte) (map[string]V, error) {
		n, k := binary.Uvarint(b)
		if k <= 0 || n > uint64(len(b)) {
			return nil, errors.New("bad length")
		}
		b = b[k:]
		m := make(map[string]V, n)
		for range n {
			key, k := readString(b)
			if k <= 0 {
				return nil, errors.New("bad key")
			}
			v, kv := get(b[k:])
			if kv <= 0 {
				return nil, errors.New("bad value")
			}
			m[key] = v
			b = b[k+kv:]
		}
		if len(b) != 0 {
			return nil, errors.New("trailing bytes")
		}
		return m, nil
	})
}

func appendString(b []byte, s string) []byte {
	return append(binary.AppendUvarint(b, uint64(len(s))), s...)
}

// readString reads a length-prefixed string and returns it and the number
// of bytes it took, or 0 for bad bytes.
func readString(b []byte) (string, int) {
	n, k := binary.Uvarint(b)
	if k <= 0 || n > uint64(len(b)-k) {
		return "", 0
	}
	return string(b[k : k+int(n)]), k + int(n)
}

type signed interface {
	~int | ~int8 | ~int16 | ~int32 | ~int64
}

type unsigned interface {
	~uint | ~uint8 | ~uint16 | ~uint32 | ~uint64
}

func intCodec[T signed](name string) Codec {
	return NewCodec(name, func(v T) ([]byte, error) {
		return binary.AppendVarint(nil, int64(v)), nil
	}, func(b []byte) (T, error) {
		n, k := binary.Varint(b)
		if k <= 0 || k != len(b) {
			return 0, errors.New("bad varint")
		}
		if int64(T(n)) != n {
			return 0, fmt.Errorf("%d overflows %s", n, name)
		}
		return T(n), nil
	})
}

func uintCodec[T unsigned](name string) Codec {
	return NewCodec(name, func(v T) ([]byte, error) {
		return binary.AppendUvarint(nil, uint64(v)), nil
	}, func(b []byte) (T, error) {
		n, k := binary.Uvarint(b)
		if k <= 0 || k != len(b) {
			return 0, errors.New("bad uvarint")
		}
		if uint64(T(n)) != n {
			return 0, fmt.Errorf("%d overflows %s", n, name)
		}
		return T(n), nil
	})
}

// registryCodec is a codec for values that hold other values: it encodes
// them with the codecs of the registry that asks, which may be a child of
// the registry the codec was registered in.
type registryCodec interface {
	encodeIn(r *Registry, v any) ([]byte, error)
	decodeIn(r *Registry, data []byte) (any, error)
}

// listCodec encodes a []any element by element.
type listCodec struct{ r *Registry }

func (listCodec) Name() string                   { return "list" }
func (listCodec) Type() reflect.Type             { return reflect.TypeFor[[]any]() }
func (c listCodec) Encode(v any) ([]byte, error) { return c.encodeIn(c.r, v) }
func (c listCodec) Decode(b []byte) (any, error) { return c.decodeIn(c.r, b) }

func (listCodec) encodeIn(r *Registry, v any) ([]byte, error) {
	l, ok := v.([]any)
	if !ok {
		return nil, fmt.Errorf("codec list: got a %T", v)
	}
	return r.encodeList(l)
}

func (listCodec) decodeIn(r *Registry, b []byte) (any, error) {
	l, err := r.decodeList(b)
	if err != nil {
		return nil, fmt.Errorf("codec list: %w", err)
	}
	return l, nil
}

func (r *Registry) encodeList(vs []any) ([]byte, error) {
	l := &graphpb.ValueList{Items: make([]*graphpb.Value, len(vs))}
	for i, v := range vs {
		ev, err := r.EncodeValue(v)
		if err != nil {
			return nil, fmt.Errorf("list element %d: %w", i, err)
		}
		l.Items[i] = &graphpb.Value{Codec: ev.Codec, Data: ev.Data}
	}
	return proto.Marshal(l)
}

func (r *Registry) decodeList(b []byte) ([]any, error) {
	var l graphpb.ValueList
	if err := proto.Unmarshal(b, &l); err != nil {
		return nil, err
	}
	out := make([]any, len(l.Items))
	for i, it := range l.Items {
		v, err := r.DecodeValue(Value{Codec: it.Codec, Data: it.Data})
		if err != nil {
			return nil, fmt.Errorf("list element %d: %w", i, err)
		}
		out[i] = v
	}
	return out, nil
}

// Arrow values are an IPC stream followed by its CRC-32C. The Arrow IPC
// reader trusts the sizes written inside the stream and allocates whatever a
// damaged stream claims, so damage must be caught before the stream is read.
var crcTable = crc32.MakeTable(crc32.Castagnoli)

func sealIPC(b []byte) []byte {
	return binary.LittleEndian.AppendUint32(b, crc32.Checksum(b, crcTable))
}

func openIPC(b []byte) ([]byte, error) {
	if len(b) < 4 {
		return nil, errors.New("arrow data is truncated")
	}
	body := b[:len(b)-4]
	if crc32.Checksum(body, crcTable) != binary.LittleEndian.Uint32(b[len(b)-4:]) {
		return nil, errors.New("arrow data is damaged (checksum mismatch)")
	}
	return body, nil
}

// newIPCReader reads an Arrow IPC stream held in b. No message of the
// stream can be larger than b, so the sizes that the stream claims are
// checked against len(b) before anything is allocated.
func newIPCReader(b []byte) (*ipc.Reader, error) {
	return NewArrowReader(bytes.NewReader(b), int64(len(b)))
}

// recoverArrow turns a panic of the Arrow reader on bad data into an error.
func recoverArrow(err *error) {
	if p := recover(); p != nil {
		*err = fmt.Errorf("bad arrow data: %v", p)
	}
}

func encodeRecord(rec arrow.RecordBatch) ([]byte, error) {
	var b bytes.Buffer
	b.Grow(int(SizeOf(rec)) + 64*int(rec.NumCols()) + 1024) // buffers and messages, grown once
	w := ipc.NewWriter(&b, ipc.WithSchema(rec.Schema()))
	if err := w.Write(rec); err != nil {
		w.Close()
		return nil, err
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	return sealIPC(b.Bytes()), nil
}

func decodeRecord(b []byte) (rec arrow.RecordBatch, err error) {
	defer recoverArrow(&err)
	if b, err = openIPC(b); err != nil {
		return nil, err
	}
	rd, err := newIPCReader(b)
	if err != nil {
		return nil, err
	}
	defer rd.Release()
	if !rd.Next() {
		if rd.Err() != nil {
			return nil, rd.Err()
		}
		return nil, errors.New("arrow stream holds no record")
	}
	rec = rd.RecordBatch()
	rec.Retain()
	return rec, nil
}

func encodeTable(t arrow.Table) ([]byte, error) {
	var b bytes.Buffer
	w := ipc.NewWriter(&b, ipc.WithSchema(t.Schema()))
	tr := array.NewTableReader(t, -1)
	defer tr.Release()
	for tr.Next() {
		if err := w.Write(tr.RecordBatch()); err != nil {
			w.Close()
			return nil, err
		}
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	return sealIPC(b.Bytes()), nil
}

func decodeTable(b []byte) (t arrow.Table, err error) {
	defer recoverArrow(&err)
	if b, err = openIPC(b); err != nil {
		return nil, err
	}
	rd, err := newIPCReader(b)
	if err != nil {
		return nil, err
	}
	defer rd.Release()
	var recs []arrow.RecordBatch
	defer func() {
		for _, rec := range recs {
			rec.Release()
		}
	}()
	for rd.Next() {
		rec := rd.RecordBatch()
		rec.Retain()
		recs = append(recs, rec)
	}
	if rd.Err() != nil {
		return nil, rd.Err()
	}
	return array.NewTableFromRecords(rd.Schema(), recs), nil
}
