package graph

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"

	"google.golang.org/protobuf/proto"

	"github.com/shoal-data/shoal/graph/graphpb"
)

// Names of the built-in ops.
const (
	// OpValue returns a constant: its params are MarshalValue bytes.
	OpValue = "shoal.value"
	// OpList returns its inputs as a []any.
	OpList = "shoal.list"
	// OpAlias returns its single input: a second name for a value.
	OpAlias = "shoal.alias"
	// OpGetItem returns element i of its single input, a []any; the params
	// are i as a uvarint.
	OpGetItem = "shoal.getitem"
	// OpFused runs several tasks in one: its params are an encoded graph
	// whose external keys are the fused task's dependencies, in order, and
	// whose last task gives the result.
	OpFused = "shoal.fused"
)

// RegisterBuiltins registers the built-in ops and the codecs for Go's basic
// types, []any and Arrow records and tables into r. Default already has
// them.
func RegisterBuiltins(r *Registry) error {
	if err := registerBuiltinCodecs(r); err != nil {
		return err
	}
	ops := []Op{
		{Name: OpValue, Signature: "v1", Cheap: true, Run: runValue},
		{Name: OpList, Signature: "v1", Cheap: true, Run: func(_ context.Context, in OpInput) (any, error) {
			return slices.Clone(in.Inputs), nil
		}},
		{Name: OpAlias, Signature: "v1", Cheap: true, Run: func(_ context.Context, in OpInput) (any, error) {
			if len(in.Inputs) != 1 {
				return nil, fmt.Errorf("%s: want 1 input, got %d", OpAlias, len(in.Inputs))
			}
			return in.Inputs[0], nil
		}},
		{Name: OpGetItem, Signature: "v1", Cheap: true, Run: runGetItem},
		{Name: OpFused, Signature: "v1", Run: runFused},
	}
	for _, op := range ops {
		if err := r.Register(op); err != nil {
			return err
		}
	}
	return nil
}

func runValue(_ context.Context, in OpInput) (any, error) {
	return in.Env.Registry.UnmarshalValue(in.Params)
}

// GetItemParams returns the params of an OpGetItem task for index i.
func GetItemParams(i int) []byte { return binary.AppendUvarint(nil, uint64(i)) }

func runGetItem(_ context.Context, in OpInput) (any, error) {
	i, n := binary.Uvarint(in.Params)
	if n <= 0 {
		return nil, errors.New("getitem: bad index params")
	}
	if len(in.Inputs) != 1 {
		return nil, fmt.Errorf("getitem: want 1 input, got %d", len(in.Inputs))
	}
	l, ok := in.Inputs[0].([]any)
	if !ok {
		return nil, fmt.Errorf("getitem: input is a %T, not a []any", in.Inputs[0])
	}
	if i >= uint64(len(l)) {
		return nil, fmt.Errorf("getitem: index %d out of range (%d items)", i, len(l))
	}
	return l[i], nil
}

// FusedParams returns the params of an OpFused task that runs tasks in
// order (each may depend on earlier ones and on inputs) and returns the
// value of the last. inputs are the fused task's dependencies.
func FusedParams(tasks []*Task, inputs []Key) ([]byte, error) {
	g := &Graph{tasks: tasks, index: make(map[Key]int, len(tasks))}
	for i, t := range tasks {
		g.index[t.Key] = i
	}
	pg := toProto(g)
	// The external table must list the inputs in the fused task's order.
	pos := make(map[string]uint32, len(pg.External))
	for i, k := range pg.External {
		pos[k] = uint32(i)
	}
	ext := make([]string, len(inputs))
	remap := make(map[uint32]uint32, len(inputs))
	n := uint32(len(tasks))
	for i, k := range inputs {
		ext[i] = string(k)
		if j, ok := pos[string(k)]; ok {
			remap[n+j] = n + uint32(i)
		}
	}
	if len(remap) != len(pg.External) {
		return nil, fmt.Errorf("fused tasks depend on %d keys outside them, %d given as inputs", len(pg.External), len(inputs))
	}
	for _, t := range pg.Tasks {
		for i, d := range t.Deps {
			if d >= n {
				t.Deps[i] = remap[d]
			}
		}
	}
	pg.External = ext
	return proto.MarshalOptions{Deterministic: true}.Marshal(pg)
}

// FusedTasks decodes the params of an OpFused task.
func FusedTasks(params []byte) (tasks []*Task, inputs []Key, err error) {
	var pg graphpb.Graph
	if err := proto.Unmarshal(params, &pg); err != nil {
		return nil, nil, fmt.Errorf("fused params: %w", err)
	}
	g, err := fromProto(&pg)
	if err != nil {
		return nil, nil, fmt.Errorf("fused params: %w", err)
	}
	inputs = make([]Key, len(pg.External))
	for i, k := range pg.External {
		inputs[i] = Key(k)
	}
	return g.tasks, inputs, nil
}

func runFused(ctx context.Context, in OpInput) (any, error) {
	tasks, inputs, err := FusedTasks(in.Params)
	if err != nil {
		return nil, err
	}
	if len(inputs) != len(in.Inputs) {
		return nil, fmt.Errorf("fused task %q: %d inputs declared, %d given", in.Key, len(inputs), len(in.Inputs))
	}
	if len(tasks) == 0 {
		return nil, fmt.Errorf("fused task %q holds no tasks", in.Key)
	}
	reg := in.Env.Registry
	vals := make(map[Key]any, len(tasks)+len(inputs))
	for i, k := range inputs {
		vals[k] = in.Inputs[i]
	}
	// Count uses so that inner values are dropped as soon as possible.
	uses := make(map[Key]int, len(tasks))
	for _, t := range tasks {
		for _, d := range t.Deps {
			uses[d]++
		}
	}
	var v any
	for _, t := range tasks {
		args := make([]any, len(t.Deps))
		for i, d := range t.Deps {
			x, ok := vals[d]
			if !ok {
				return nil, fmt.Errorf("fused task %q: inner task %q needs %q, which is not computed before it", in.Key, t.Key, d)
			}
			args[i] = x
			if uses[d]--; uses[d] == 0 {
				delete(vals, d)
			}
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		v, err = reg.RunTask(ctx, t, args, in.Env)
		if err != nil {
			var inner *InnerTaskError
			if errors.As(err, &inner) {
				return nil, err // from a fused task inside this one
			}
			return nil, &InnerTaskError{Key: t.Key, Op: t.Op, Err: err}
		}
		vals[t.Key] = v
	}
	return v, nil
}
