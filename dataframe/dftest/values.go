package dftest

import (
	"cmp"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
)

// kind is the family of values a column holds once read out of Arrow.
// Columns of the same family can be compared even when their Arrow types
// differ (int32 and int64, string and dictionary of strings, timestamps in
// different units).
type kind uint8

const (
	kNull      kind = iota // the null type: every value is null
	kInt                   // signed integers, in ints
	kUint                  // unsigned integers, in uints
	kFloat                 // floating point, in floats
	kString                // strings, in strs
	kBinary                // byte strings, in strs
	kBool                  // booleans, in bools
	kTimestamp             // instants, in ints as counts of unit
	kDate                  // dates, in ints as milliseconds since the epoch
	kTime                  // times of day, in ints as nanoseconds since midnight
	kDuration              // durations, in ints as counts of unit
	kOther                 // anything else, in strs as Arrow prints it
)

// family groups kinds whose values compare with each other.
func (k kind) family() kind {
	switch k {
	case kUint, kFloat:
		return kInt
	}
	return k
}

// column is one column of a table read into plain Go slices, so that
// comparing, sorting and printing need no per-value interface calls and
// chunk boundaries do not matter.
type column struct {
	name   string
	typ    arrow.DataType
	kind   kind
	unit   arrow.TimeUnit // timestamps and durations
	loc    *time.Location // timestamps with a time zone; nil when naive
	prec32 bool           // float32 or float16: compare at float32 precision
	n      int

	valid  []bool
	ints   []int64
	uints  []uint64
	floats []float64
	strs   []string
	bools  []bool
}

func kindOf(dt arrow.DataType) kind {
	switch dt.ID() {
	case arrow.NULL:
		return kNull
	case arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64:
		return kInt
	case arrow.UINT8, arrow.UINT16, arrow.UINT32, arrow.UINT64:
		return kUint
	case arrow.FLOAT16, arrow.FLOAT32, arrow.FLOAT64:
		return kFloat
	case arrow.STRING, arrow.LARGE_STRING, arrow.STRING_VIEW:
		return kString
	case arrow.BINARY, arrow.LARGE_BINARY, arrow.BINARY_VIEW, arrow.FIXED_SIZE_BINARY:
		return kBinary
	case arrow.BOOL:
		return kBool
	case arrow.TIMESTAMP:
		return kTimestamp
	case arrow.DATE32, arrow.DATE64:
		return kDate
	case arrow.TIME32, arrow.TIME64:
		return kTime
	case arrow.DURATION:
		return kDuration
	case arrow.DICTIONARY:
		return kindOf(dt.(*arrow.DictionaryType).ValueType)
	}
	return kOther
}

// newColumn reads the chunks of one column.
func newColumn(name string, dt arrow.DataType, chunks []arrow.Array) *column {
	c := &column{name: name, typ: dt, kind: kindOf(dt)}
	vt := dt
	if d, ok := dt.(*arrow.DictionaryType); ok {
		vt = d.ValueType
	}
	switch t := vt.(type) {
	case *arrow.TimestampType:
		c.unit = t.Unit
		if t.TimeZone != "" {
			if loc, err := t.GetZone(); err == nil {
				c.loc = loc
			} else {
				c.loc = time.UTC
			}
		}
	case *arrow.DurationType:
		c.unit = t.Unit
	case *arrow.Float16Type, *arrow.Float32Type:
		c.prec32 = true
	}
	for _, a := range chunks {
		c.n += a.Len()
	}
	c.valid = make([]bool, 0, c.n)
	for _, a := range chunks {
		c.appendArray(a)
	}
	return c
}

func (c *column) appendArray(a arrow.Array) {
	n := a.Len()
	for i := 0; i < n; i++ {
		c.valid = append(c.valid, a.IsValid(i))
	}
	switch a := a.(type) {
	case *array.Null:
	case *array.Int8:
		c.ints = appendConv(c.ints, a.Int8Values())
	case *array.Int16:
		c.ints = appendConv(c.ints, a.Int16Values())
	case *array.Int32:
		c.ints = appendConv(c.ints, a.Int32Values())
	case *array.Int64:
		c.ints = append(c.ints, a.Int64Values()...)
	case *array.Uint8:
		c.uints = appendConv(c.uints, a.Uint8Values())
	case *array.Uint16:
		c.uints = appendConv(c.uints, a.Uint16Values())
	case *array.Uint32:
		c.uints = appendConv(c.uints, a.Uint32Values())
	case *array.Uint64:
		c.uints = append(c.uints, a.Uint64Values()...)
	case *array.Float16:
		for _, v := range a.Values() {
			c.floats = append(c.floats, float64(v.Float32()))
		}
	case *array.Float32:
		c.floats = appendConv(c.floats, a.Float32Values())
	case *array.Float64:
		c.floats = append(c.floats, a.Float64Values()...)
	case *array.String:
		for i := 0; i < n; i++ {
			c.strs = append(c.strs, a.Value(i))
		}
	case *array.LargeString:
		for i := 0; i < n; i++ {
			c.strs = append(c.strs, a.Value(i))
		}
	case *array.StringView:
		for i := 0; i < n; i++ {
			c.strs = append(c.strs, a.Value(i))
		}
	case *array.Binary:
		for i := 0; i < n; i++ {
			c.strs = append(c.strs, string(a.Value(i)))
		}
	case *array.LargeBinary:
		for i := 0; i < n; i++ {
			c.strs = append(c.strs, string(a.Value(i)))
		}
	case *array.BinaryView:
		for i := 0; i < n; i++ {
			c.strs = append(c.strs, string(a.Value(i)))
		}
	case *array.FixedSizeBinary:
		for i := 0; i < n; i++ {
			c.strs = append(c.strs, string(a.Value(i)))
		}
	case *array.Boolean:
		for i := 0; i < n; i++ {
			c.bools = append(c.bools, a.Value(i))
		}
	case *array.Timestamp:
		c.ints = appendConv(c.ints, a.TimestampValues())
	case *array.Date32:
		for _, v := range a.Date32Values() {
			c.ints = append(c.ints, int64(v)*86400000)
		}
	case *array.Date64:
		c.ints = appendConv(c.ints, a.Date64Values())
	case *array.Time32:
		mul := int64(a.DataType().(*arrow.Time32Type).Unit.Multiplier())
		for _, v := range a.Time32Values() {
			c.ints = append(c.ints, int64(v)*mul)
		}
	case *array.Time64:
		mul := int64(a.DataType().(*arrow.Time64Type).Unit.Multiplier())
		for _, v := range a.Time64Values() {
			c.ints = append(c.ints, int64(v)*mul)
		}
	case *array.Duration:
		c.ints = appendConv(c.ints, a.DurationValues())
	case *array.Dictionary:
		d := newColumn("", a.Dictionary().DataType(), []arrow.Array{a.Dictionary()})
		for i := 0; i < n; i++ {
			j := 0
			if c.valid[len(c.valid)-n+i] {
				j = a.GetValueIndex(i)
				if j < 0 || j >= d.n {
					j = 0
				}
				c.valid[len(c.valid)-n+i] = d.n > 0 && d.valid[j]
			}
			c.appendFrom(d, j)
		}
	default:
		c.kind = kOther
		for i := 0; i < n; i++ {
			if a.IsValid(i) {
				c.strs = append(c.strs, a.ValueStr(i))
			} else {
				c.strs = append(c.strs, "")
			}
		}
	}
}

// appendFrom appends value j of d (a dictionary's values) without its
// validity.
func (c *column) appendFrom(d *column, j int) {
	switch {
	case d.n == 0:
		c.ints = append(c.ints, 0)
		c.uints = append(c.uints, 0)
		c.floats = append(c.floats, 0)
		c.strs = append(c.strs, "")
		c.bools = append(c.bools, false)
	case d.ints != nil:
		c.ints = append(c.ints, d.ints[j])
	case d.uints != nil:
		c.uints = append(c.uints, d.uints[j])
	case d.floats != nil:
		c.floats = append(c.floats, d.floats[j])
	case d.strs != nil:
		c.strs = append(c.strs, d.strs[j])
	case d.bools != nil:
		c.bools = append(c.bools, d.bools[j])
	}
}

type number interface {
	~int8 | ~int16 | ~int32 | ~int64 | ~uint8 | ~uint16 | ~uint32 | ~uint64 | ~float32 | ~float64
}

func appendConv[D, S number](dst []D, src []S) []D {
	for _, v := range src {
		dst = append(dst, D(v))
	}
	return dst
}

// canCompare reports whether the values of two columns can be compared.
func canCompare(a, b *column) bool {
	if a.kind == kNull || b.kind == kNull {
		return true
	}
	return a.kind.family() == b.kind.family()
}

// tolerance is how close two floats must be to count as equal.
type tolerance struct{ rel, abs float64 }

func (t tolerance) close(x, y float64) bool {
	if x == y {
		return true
	}
	if math.IsNaN(x) || math.IsNaN(y) {
		return math.IsNaN(x) && math.IsNaN(y)
	}
	if math.IsInf(x, 0) || math.IsInf(y, 0) {
		return false
	}
	return math.Abs(x-y) <= max(t.rel*max(math.Abs(x), math.Abs(y)), t.abs)
}

func (c *column) float(i int) float64 {
	switch c.kind {
	case kInt:
		return float64(c.ints[i])
	case kUint:
		return float64(c.uints[i])
	}
	return c.floats[i]
}

// equal reports whether value i of a equals value j of b. Null equals null
// and NaN equals NaN.
func equal(a *column, i int, b *column, j int, tol tolerance) bool {
	va, vb := a.valid[i], b.valid[j]
	if !va || !vb {
		return va == vb
	}
	if a.kind == kFloat || b.kind == kFloat {
		x, y := a.float(i), b.float(j)
		if a.prec32 || b.prec32 {
			x, y = float64(float32(x)), float64(float32(y))
		}
		return tol.close(x, y)
	}
	return compare(a, i, b, j) == 0
}

// compare orders value i of a against value j of b: nulls first, NaN after
// every other number.
func compare(a *column, i int, b *column, j int) int {
	va, vb := a.valid[i], b.valid[j]
	if !va || !vb {
		return cmpBool(va, vb)
	}
	switch a.kind {
	case kInt, kUint, kFloat:
		return compareNumbers(a, i, b, j)
	case kString, kBinary, kOther:
		return strings.Compare(a.strs[i], b.strs[j])
	case kBool:
		return cmpBool(a.bools[i], b.bools[j])
	case kDate, kTime:
		return cmp.Compare(a.ints[i], b.ints[j])
	case kTimestamp, kDuration:
		if a.unit == b.unit {
			return cmp.Compare(a.ints[i], b.ints[j])
		}
		as, an := split(a.ints[i], a.unit)
		bs, bn := split(b.ints[j], b.unit)
		if c := cmp.Compare(as, bs); c != 0 {
			return c
		}
		return cmp.Compare(an, bn)
	}
	return 0
}

func cmpBool(a, b bool) int {
	switch {
	case a == b:
		return 0
	case a:
		return 1
	}
	return -1
}

func compareNumbers(a *column, i int, b *column, j int) int {
	switch {
	case a.kind == kInt && b.kind == kInt:
		return cmp.Compare(a.ints[i], b.ints[j])
	case a.kind == kUint && b.kind == kUint:
		return cmp.Compare(a.uints[i], b.uints[j])
	case a.kind == kInt && b.kind == kUint:
		if a.ints[i] < 0 {
			return -1
		}
		return cmp.Compare(uint64(a.ints[i]), b.uints[j])
	case a.kind == kUint && b.kind == kInt:
		return -compareNumbers(b, j, a, i)
	}
	x, y := a.float(i), b.float(j)
	// cmp.Compare puts NaN first; we want it last, after +Inf.
	xn, yn := math.IsNaN(x), math.IsNaN(y)
	switch {
	case xn || yn:
		return cmpBool(xn, yn)
	}
	return cmp.Compare(x, y)
}

var unitsPerSecond = [...]int64{arrow.Second: 1, arrow.Millisecond: 1e3, arrow.Microsecond: 1e6, arrow.Nanosecond: 1e9}

// split turns a count of unit into whole seconds and nanoseconds.
func split(v int64, u arrow.TimeUnit) (sec, nsec int64) {
	per := unitsPerSecond[u&3]
	sec, rem := v/per, v%per
	if rem < 0 {
		sec--
		rem += per
	}
	return sec, rem * (1e9 / per)
}

const maxText = 60

// formatPair prints two differing values, got and want. Long texts are cut
// around where they first differ, so that the difference shows.
func formatPair(a *column, i int, b *column, j int) (string, string) {
	textual := func(c *column, k int) bool {
		return c.valid[k] && (c.kind == kString || c.kind == kBinary || c.kind == kOther)
	}
	if !textual(a, i) || !textual(b, j) {
		return a.format(i), b.format(j)
	}
	x, y := a.strs[i], b.strs[j]
	if len(x) <= maxText && len(y) <= maxText {
		return a.format(i), b.format(j)
	}
	p := 0
	for p < len(x) && p < len(y) && x[p] == y[p] {
		p++
	}
	start := max(0, p-maxText/3)
	return a.window(x, start), b.window(y, start)
}

// window prints s from byte start, at most maxText bytes, marking the cuts.
func (c *column) window(s string, start int) string {
	// Do not cut a UTF-8 sequence.
	for start > 0 && start < len(s) && s[start]&0xC0 == 0x80 {
		start--
	}
	end := min(len(s), start+maxText)
	for end < len(s) && end > start && s[end]&0xC0 == 0x80 {
		end--
	}
	var pre, post string
	if start > 0 {
		pre = "..."
	}
	if end < len(s) {
		post = "..."
	}
	if c.kind == kOther {
		return pre + s[start:end] + post
	}
	return pre + strconv.Quote(s[start:end]) + post
}

// format prints value i the way the report shows it.
func (c *column) format(i int) string {
	if !c.valid[i] {
		return "null"
	}
	switch c.kind {
	case kInt:
		return strconv.FormatInt(c.ints[i], 10)
	case kUint:
		return strconv.FormatUint(c.uints[i], 10)
	case kFloat:
		bits := 64
		if c.prec32 {
			bits = 32
		}
		return strconv.FormatFloat(c.floats[i], 'g', -1, bits)
	case kString, kBinary, kOther:
		return c.window(c.strs[i], 0)
	case kBool:
		return strconv.FormatBool(c.bools[i])
	case kTimestamp:
		sec, nsec := split(c.ints[i], c.unit)
		t := time.Unix(sec, nsec).UTC()
		if c.loc == nil {
			return t.Format("2006-01-02T15:04:05.999999999")
		}
		return t.In(c.loc).Format(time.RFC3339Nano)
	case kDate:
		t := time.UnixMilli(c.ints[i]).UTC()
		if c.ints[i]%86400000 == 0 {
			return t.Format(time.DateOnly)
		}
		return t.Format("2006-01-02T15:04:05.999")
	case kTime:
		return time.Unix(0, c.ints[i]).UTC().Format("15:04:05.999999999")
	case kDuration:
		sec, nsec := split(c.ints[i], c.unit)
		if sec > -math.MaxInt64/1_000_000_000 && sec < math.MaxInt64/1_000_000_000 {
			return time.Duration(sec*1e9 + nsec).String()
		}
		return strconv.FormatInt(c.ints[i], 10) + c.unit.String()
	}
	return "?"
}
