package graph

import (
	"fmt"
	"math"

	"google.golang.org/protobuf/proto"

	"github.com/shoal-data/shoal/graph/graphpb"
)

// Encode writes g in Shoal's stable binary graph format (protobuf, see
// graphpb/graph.proto). Dependencies are written as indices into the table
// of keys, so a task costs little more than its key, op name and params.
// The same graph always encodes to the same bytes.
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
	return proto.MarshalOptions{Deterministic: true}.Marshal(toProto(g))
}

// Decode reads a graph written by Encode and validates it.
func Decode(b []byte) (*Graph, error) {
	var pg graphpb.Graph
	if err := proto.Unmarshal(b, &pg); err != nil {
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
