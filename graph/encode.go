package graph

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"math"

	"google.golang.org/protobuf/proto"

	"github.com/shoal-data/shoal/graph/graphpb"
)

// Encode writes g in Shoal's stable binary graph format (protobuf, see
// graphpb/graph.proto). Dependencies are written as indices into the table
// of keys, so a task costs little more than its key, op name and params.
// The same graph always encodes to the same bytes. The last five bytes
// are a checksum of the rest (field 15 of the message), so that Decode
// tells truncated or damaged bytes from a smaller graph.
//
// A dependency that is neither a task of g nor an external key is a
// *MissingDependencyError: the receiver could never compute it.
func Encode(g *Graph) ([]byte, error) {
	var missing []MissingDependency
	d := newOptDAG(g)
	for i, t := range g.tasks {
		if t.Retries < 0 || t.Retries > math.MaxInt32 {
			return nil, fmt.Errorf("encode graph: task %q: retries %d out of range", t.Key, t.Retries)
		}
		for j, p := range d.pos[d.posStart[i]:d.posStart[i+1]] {
			if p < 0 && !g.IsExternal(t.Deps[j]) {
				missing = append(missing, MissingDependency{Task: t.Key, Dep: t.Deps[j]})
			}
		}
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("encode graph: %w", &MissingDependencyError{Missing: missing})
	}
	b, err := proto.MarshalOptions{Deterministic: true}.Marshal(toProto(g))
	if err != nil {
		return nil, err
	}
	return binary.LittleEndian.AppendUint32(append(b, checksumTag), crc32.Checksum(b, castagnoli)), nil
}

// checksumTag is the protobuf tag of the Graph's checksum field (15,
// fixed32), which Encode writes last.
const checksumTag = 15<<3 | 5

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// ErrGraphDamaged is the error of Decode for bytes that are not whole:
// empty, truncated, or changed since Encode wrote them.
var ErrGraphDamaged = errors.New("graph bytes are truncated or damaged")

// Decode reads a graph written by Encode and validates it. Bytes that are
// empty, truncated or changed are an error wrapping ErrGraphDamaged.
func Decode(b []byte) (*Graph, error) {
	n := len(b) - 5
	if n < 0 || b[n] != checksumTag {
		return nil, fmt.Errorf("decode graph: %w: %d bytes end without the checksum Encode writes", ErrGraphDamaged, len(b))
	}
	if got, want := crc32.Checksum(b[:n], castagnoli), binary.LittleEndian.Uint32(b[n+1:]); got != want {
		return nil, fmt.Errorf("decode graph: %w: checksum of %d bytes is %08x, want %08x", ErrGraphDamaged, len(b), got, want)
	}
	var pg graphpb.Graph
	if err := proto.Unmarshal(b[:n], &pg); err != nil {
		return nil, fmt.Errorf("decode graph: %w", err)
	}
	g, err := fromProto(&pg)
	if err != nil {
		return nil, fmt.Errorf("decode graph: %w", err)
	}
	if err := g.Validate(); err != nil {
		return nil, fmt.Errorf("decode graph: %w", err)
	}
	return g, nil
}

func toProto(g *Graph) *graphpb.Graph {
	ext := g.External()
	idx := make(map[Key]uint32, len(g.tasks)+len(ext))
	for i, t := range g.tasks {
		idx[t.Key] = uint32(i)
	}
	for i, k := range ext {
		idx[k] = uint32(len(g.tasks) + i)
	}
	pg := &graphpb.Graph{Tasks: make([]*graphpb.Task, len(g.tasks)), External: make([]string, len(ext))}
	for i, k := range ext {
		pg.External[i] = string(k)
	}
	// One backing array for all dependency indices and one for all tasks
	// keeps encoding to a few allocations.
	n := 0
	for _, t := range g.tasks {
		n += len(t.Deps)
	}
	depBuf := make([]uint32, 0, n)
	ptasks := make([]graphpb.Task, len(g.tasks))
	for i, t := range g.tasks {
		pt := &ptasks[i]
		pt.Key, pt.Op, pt.Params = string(t.Key), t.Op, t.Params
		start := len(depBuf)
		for _, d := range t.Deps {
			j, ok := idx[d]
			if !ok {
				// Outside the tasks given (the inputs of fused tasks):
				// keep the key as an external one.
				j = uint32(len(g.tasks) + len(pg.External))
				idx[d] = j
				pg.External = append(pg.External, string(d))
			}
			depBuf = append(depBuf, j)
		}
		pt.Deps = depBuf[start:len(depBuf):len(depBuf)]
		if !t.Annotations.IsZero() {
			a := &t.Annotations
			pt.Annotations = &graphpb.Annotations{
				Priority: int64(a.Priority), Retries: int32(a.Retries), Resources: a.Resources,
				Workers: a.Workers, LooseRestrictions: a.LooseRestrictions, Span: a.Span,
			}
		}
		pg.Tasks[i] = pt
	}
	return pg
}

func fromProto(pg *graphpb.Graph) (*Graph, error) {
	n := len(pg.Tasks)
	keys := make([]Key, n+len(pg.External))
	for i, t := range pg.Tasks {
		keys[i] = Key(t.Key)
	}
	for i, k := range pg.External {
		keys[n+i] = Key(k)
	}
	g := &Graph{tasks: make([]*Task, 0, n), index: make(map[Key]int, n)}
	tasks := make([]Task, n)
	total := 0
	for _, pt := range pg.Tasks {
		total += len(pt.Deps)
	}
	depBuf := make([]Key, 0, total)
	for i, pt := range pg.Tasks {
		t := &tasks[i]
		t.Key, t.Op, t.Params = keys[i], pt.Op, pt.Params
		start := len(depBuf)
		for _, d := range pt.Deps {
			if int(d) >= len(keys) {
				return nil, fmt.Errorf("task %q: dependency index %d out of range (%d keys)", t.Key, d, len(keys))
			}
			depBuf = append(depBuf, keys[d])
		}
		t.Deps = depBuf[start:len(depBuf):len(depBuf)]
		if a := pt.Annotations; a != nil {
			t.Annotations = Annotations{
				Priority: int(a.Priority), Retries: int(a.Retries), Resources: a.Resources,
				Workers: a.Workers, LooseRestrictions: a.LooseRestrictions, Span: a.Span,
			}
			if len(t.Resources) == 0 {
				t.Resources = nil
			}
		}
		if err := g.Add(t); err != nil {
			return nil, err
		}
	}
	for _, k := range pg.External {
		g.AddExternal(Key(k))
	}
	return g, nil
}
