package dataframe

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/shoal-data/shoal/dataframe/expr"
	"github.com/shoal-data/shoal/graph"
	"github.com/shoal-data/shoal/io/storage"
)

// partPlan is a format's plan of parts that can be narrowed to columns and
// cut to one part (the plans of io/ipc and io/jsonl), encoded as JSON.
type partPlan[P any] interface {
	*P
	Select(columns ...string) (*P, error)
	Slice(i, j int) *P
}

// planFormat is what a format of parts tells the reader about itself.
type planFormat[P any, PP partPlan[P]] struct {
	name, op, unit string // "ipc", "ReadIPC", "parts"
	schema         func(PP) *arrow.Schema
	parts          func(PP) int
	read           func(ctx context.Context, fsys storage.FS, plan PP, i int, mem memory.Allocator) (arrow.RecordBatch, error)
}

// planReader reads the parts of a planFormat, one partition each.
type planReader[P any, PP partPlan[P]] struct {
	f     *planFormat[P, PP]
	paths []string
	plan  PP
}

// source returns a DataFrame reading plan.
func (f *planFormat[P, PP]) source(paths []string, plan PP) DataFrame {
	r := &planReader[P, PP]{f: f, paths: paths, plan: plan}
	return DataFrame{n: &node{kind: kindSource, schema: f.schema(plan), nparts: f.parts(plan), src: &source{r: r}}}
}

func (r *planReader[P, PP]) format() string        { return r.f.name }
func (r *planReader[P, PP]) schema() *arrow.Schema { return r.f.schema(r.plan) }
func (r *planReader[P, PP]) parts() int            { return r.f.parts(r.plan) }

func (r *planReader[P, PP]) describe() string {
	return fmt.Sprintf("%s %s (%d %s)", r.f.op, strings.Join(r.paths, ", "), r.parts(), r.f.unit)
}

func (r *planReader[P, PP]) token() string {
	b, _ := json.Marshal(r.plan)
	return string(b)
}

func (r *planReader[P, PP]) prepare(columns []string, filter expr.Expr, hasFilter bool) (reader, string, error) {
	if columns == nil {
		return r, "", nil
	}
	plan, err := r.plan.Select(columns...)
	if err != nil {
		return nil, "", err
	}
	return &planReader[P, PP]{f: r.f, paths: r.paths, plan: plan}, "", nil
}

func (r *planReader[P, PP]) partParams(i int) ([]byte, error) {
	return json.Marshal(r.plan.Slice(i, i+1))
}

// readPart is the task side: it reads the one part of the plan in params,
// filtered.
func (f *planFormat[P, PP]) readPart(ctx context.Context, env *graph.Env, params []byte, columns []string, filter *expr.Expr,
	mem memory.Allocator) (arrow.RecordBatch, error) {
	plan := PP(new(P))
	if err := json.Unmarshal(params, plan); err != nil {
		return nil, err
	}
	rec, err := f.read(ctx, storage.Local{}, plan, 0, mem)
	if err != nil {
		return nil, err
	}
	if filter == nil {
		return rec, nil
	}
	defer rec.Release()
	return expr.Filter(ctx, rec, *filter, mem)
}
