package expr

import (
	"context"
	"errors"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/shoal-data/shoal/graph"
)

// Evaluator evaluates expressions over one record batch. A subexpression
// that appears several times in an expression is computed once, and so is
// one equal to an expression evaluated before by the same Evaluator: results
// are kept by their text until Release, so an Evaluator holds memory for
// what it computed until then. An Evaluator is not safe for concurrent use.
//
// Over large records, expressions giving numbers, booleans, dates or
// timestamps are computed a few thousand rows at a time, so that
// intermediate results stay in the processor's cache.
type Evaluator struct {
	rec   arrow.RecordBatch
	mem   memory.Allocator
	tc    *typeChecker
	cache map[string]datum
	lits  map[*node]datum

	// For the evaluator of a chunk of rows: the evaluator of the whole
	// record, and the first row of the chunk in it.
	parent *Evaluator
	lo     int
}

// testHookCompute, when set by tests, is called with the text of every node
// an Evaluator computes (not found in its cache).
var testHookCompute func(text string)

// NewEvaluator returns an Evaluator over rec that allocates results from mem
// (memory.DefaultAllocator if nil). rec must stay alive until Release.
func NewEvaluator(rec arrow.RecordBatch, mem memory.Allocator) *Evaluator {
	if mem == nil {
		mem = memory.DefaultAllocator
	}
	return &Evaluator{
		rec: rec, mem: mem, tc: &typeChecker{schema: rec.Schema()},
		cache: make(map[string]datum), lits: make(map[*node]datum),
	}
}

// Release frees the intermediate results the Evaluator keeps. Arrays
// returned by Eval stay valid until the caller releases them.
func (ev *Evaluator) Release() {
	ev.releaseCache()
	for k, d := range ev.lits {
		d.release()
		delete(ev.lits, k)
	}
}

func (ev *Evaluator) releaseCache() {
	for k, d := range ev.cache {
		d.release()
		delete(ev.cache, k)
	}
}

// Eval computes e over the record: the result has one value per row (literals
// are repeated) and the type e.Type gives. The caller releases it.
func (ev *Evaluator) Eval(ctx context.Context, e Expr) (arrow.Array, error) {
	if err := e.Err(); err != nil {
		return nil, err
	}
	t, err := ev.tc.typeOf(e.n)
	if err != nil {
		return nil, inExpr(err, e)
	}
	if ev.chunkable(e, t) {
		if d, ok := ev.cache[e.n.text]; ok {
			return d.toArray(ctx, ev.mem, t, int(ev.rec.NumRows()))
		}
		arr, err := ev.evalChunked(ctx, e.n, t)
		if err != nil {
			return nil, err
		}
		arr.Retain()
		ev.cache[e.n.text] = datum{arr: arr}
		return arr, nil
	}
	d, err := ev.eval(ctx, e.n)
	if err != nil {
		return nil, err
	}
	defer d.release()
	if !d.isNull() && !arrow.TypeEqual(d.typ(), t) {
		return nil, fmt.Errorf("expr: internal error: %s computed %s, expected %s", e, typeName(d.typ()), typeName(t))
	}
	return d.toArray(ctx, ev.mem, t, int(ev.rec.NumRows()))
}

// EvalError is the error of an expression that failed during evaluation
// (a failed cast, a context cancelled).
type EvalError struct {
	Expr string // the subexpression that failed
	Err  error
}

func (e *EvalError) Error() string { return "evaluate " + e.Expr + ": " + e.Err.Error() }
func (e *EvalError) Unwrap() error { return e.Err }

func (ev *Evaluator) eval(ctx context.Context, n *node) (datum, error) {
	switch n.op {
	case opCol:
		idx := ev.rec.Schema().FieldIndices(n.name)
		if len(idx) == 0 {
			_, err := ev.tc.typeOf(n)
			return datum{}, err
		}
		col := ev.rec.Column(idx[0])
		if col.DataType().ID() == arrow.NULL {
			return datum{arr: array.NewNull(1), bcast: true}, nil
		}
		col.Retain()
		return datum{arr: col}, nil
	case opLit:
		d, ok := ev.lits[n]
		if !ok {
			mem := ev.mem
			if ev.parent != nil {
				mem = ev.parent.mem // literals outlive the chunk
			}
			d = datum{arr: litArray(mem, n.lit), bcast: true}
			ev.lits[n] = d
		}
		return d.retain(), nil
	case opAlias:
		return ev.eval(ctx, n.args[0].n)
	}
	if d, ok := ev.cache[n.text]; ok {
		return d.retain(), nil
	}
	if d, ok := ev.fromParent(n.text); ok {
		return d, nil
	}
	if err := ctx.Err(); err != nil {
		return datum{}, err
	}
	outT, err := ev.tc.typeOf(n)
	if err != nil {
		return datum{}, err
	}
	args := make([]datum, len(n.args))
	defer func() {
		for _, a := range args {
			if a.arr != nil {
				a.release()
			}
		}
	}()
	for i, a := range n.args {
		if args[i], err = ev.eval(ctx, a.n); err != nil {
			return datum{}, err
		}
	}
	if testHookCompute != nil {
		testHookCompute(n.text)
	}
	d, err := ev.apply(ctx, n, args, outT)
	if err != nil {
		var ee *EvalError
		if errors.As(err, &ee) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
			return datum{}, err
		}
		return datum{}, &EvalError{Expr: n.text, Err: err}
	}
	ev.cache[n.text] = d.retain()
	return d, nil
}

// length is the number of rows a kernel over args produces: 1 when all are
// broadcast, else the record's row count.
func (ev *Evaluator) length(args ...datum) int {
	for _, a := range args {
		if !a.bcast {
			return a.arr.Len()
		}
	}
	return 1
}

func allBcast(args ...datum) bool {
	for _, a := range args {
		if !a.bcast {
			return false
		}
	}
	return true
}

func (ev *Evaluator) apply(ctx context.Context, n *node, args []datum, outT arrow.DataType) (datum, error) {
	switch n.op {
	case opAdd, opSub, opMul, opDiv, opFloorDiv, opMod, opPow:
		return ev.arith(ctx, n.op, args[0], args[1], outT)
	case opNeg, opAbs:
		return ev.unary(ctx, n.op, args[0], outT)
	case opEq, opNe, opLt, opLe, opGt, opGe:
		return ev.compare(ctx, n.op, args[0], args[1])
	case opBetween:
		lo, err := ev.compare(ctx, opGe, args[0], args[1])
		if err != nil {
			return datum{}, err
		}
		defer lo.release()
		hi, err := ev.compare(ctx, opLe, args[0], args[2])
		if err != nil {
			return datum{}, err
		}
		defer hi.release()
		return ev.logic(opAnd, lo, hi)
	case opIsIn:
		return ev.isIn(ctx, n, args[0])
	case opAnd, opOr, opXor:
		return ev.logic(n.op, args[0], args[1])
	case opNot:
		return ev.not(args[0])
	case opIsNull, opIsNotNull:
		return ev.isNull(args[0], n.op == opIsNull)
	case opIsNaN:
		return ev.isNaN(args[0])
	case opFillNull:
		return ev.fillNull(ctx, args[0], args[1], outT)
	case opCast:
		return ev.cast(ctx, args[0], outT)
	case opWhen:
		return ev.when(ctx, args, outT)
	}
	if isStrOp(n.op) {
		return ev.str(ctx, n, args[0], outT)
	}
	if isDtOp(n.op) {
		return ev.dt(ctx, n, args[0], outT)
	}
	return datum{}, fmt.Errorf("unknown operation %q", n.op)
}

// An evaluation's error keeps its type when it crosses a process boundary
// (see graph.RegisterError).
func init() { graph.RegisterError[EvalError]("expr.EvalError") }
