package graph

import (
	"fmt"
	"maps"
	"slices"
)

// Graph optimizations. Each one returns a new graph, or its input itself
// when it has nothing to change, and leaves its input alone; the result may
// share unchanged *Task values with the input, so neither graph's tasks may
// be modified afterwards (executors never do).
//
// Cull drops the tasks that the wanted keys do not need. Inline copies cheap
// tasks (ops registered with Cheap, such as OpValue, OpGetItem, or functions
// registered with AsCheap) into the tasks that use them. Fuse merges linear
// chains of tasks into one task each. Optimize runs all three. Inlined and
// fused tasks run the OpFused op, so the registry of every process that runs
// the result must have the built-ins (Default has them).

// Cull returns a graph with only the tasks needed to compute keys: the
// tasks named by keys and, transitively, the tasks they depend on. The
// external keys that remaining tasks use stay external; a key of keys may
// itself be external. A key that is neither a task nor an external key of g
// is an error naming it. Tasks keep their order and are shared with g.
func Cull(g *Graph, keys ...Key) (*Graph, error) {
	n := len(g.tasks)
	need := make([]bool, n)
	stack := make([]int32, 0, len(keys))
	ext := map[Key]struct{}{}
	for _, k := range keys {
		if i, ok := g.index[k]; ok {
			if !need[i] {
				need[i] = true
				stack = append(stack, int32(i))
			}
			continue
		}
		if !g.IsExternal(k) {
			return nil, fmt.Errorf("cull: key %q is not in the graph", k)
		}
		ext[k] = struct{}{}
	}
	count := len(stack)
	for len(stack) > 0 {
		i := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		for _, d := range g.tasks[i].Deps {
			j, ok := g.index[d]
			switch {
			case ok && !need[j]:
				need[j] = true
				count++
				stack = append(stack, int32(j))
			case !ok && g.IsExternal(d):
				ext[d] = struct{}{}
			}
			// A dependency that is neither a task nor external stays named
			// by its task, so the result fails Validate as g does.
		}
	}
	if count == n {
		return g, nil // everything is needed
	}
	out := optNewGraph(count)
	for i, t := range g.tasks {
		if need[i] {
			optAppend(out, t)
		}
	}
	if len(ext) > 0 {
		out.external = ext
	}
	return out, nil
}

// Fuse merges linear chains of tasks into one task each, as Dask's
// fuse_linear does, so that a chain costs one scheduling decision and its
// intermediate values never leave the worker.
//
// A task T is merged into a task D when D is T's only dependent, T is D's
// only dependency among the tasks of g (D may also depend on external keys,
// which become inputs of the fused task), T is not in keep, and both have
// the same Resources, Workers and LooseRestrictions. So a chain
// A -> B -> C becomes one task, while the join of a diamond and a task with
// several dependents stay separate tasks, which keeps the graph's
// parallelism. A chain's first task may have any number of dependencies.
//
// The fused task has the key of the chain's last task, op OpFused, params
// FusedParams(chain tasks in order, with their annotations cleared, inputs)
// and Deps equal to those inputs: every dependency of the chain outside it,
// each once, in the order of first use. It takes the Priority and Span of
// the last task and the largest Retries of the chain. Keys in keep stay in
// the result with the same value; a kept key may end a chain but is never
// absorbed into one.
//
// Tasks whose op is already OpFused are fused again as they are: the result
// nests them (an inner task of the new fused task is itself a fused task)
// rather than flattening them, which keeps every inner key and error message
// as it was and needs no renaming of inner keys that could collide.
//
// Fuse needs reg (nil means Default) to have OpFused registered. Ops are not
// looked up otherwise: a task with an unknown op is fused like any other and
// fails when it runs. A keep key that is neither a task nor external is an
// error, as is a cycle (*CycleError).
func Fuse(g *Graph, keep []Key, reg *Registry) (*Graph, error) {
	if err := optCheckFused(reg, "fuse"); err != nil {
		return nil, err
	}
	kept, err := optKeepSet(g, keep, "fuse")
	if err != nil {
		return nil, err
	}
	d := newOptDAG(g)
	if err := d.checkAcyclic(g, "fuse"); err != nil {
		return nil, err
	}
	n := len(g.tasks)
	next := make([]int32, n) // the task each task is merged into, or -1
	prev := make([]int32, n) // the task merged into each task, or -1
	for i := range n {
		next[i], prev[i] = -1, -1
	}
	fused := 0
	for i, t := range g.tasks {
		if kept[i] {
			continue
		}
		j, ok := optSingle(d.dependents(i))
		if !ok {
			continue
		}
		if k, ok := optSingle(d.deps(int(j))); !ok || int(k) != i {
			continue
		}
		if !optSameRestrictions(&t.Annotations, &g.tasks[j].Annotations) {
			continue
		}
		next[i], prev[j] = j, int32(i)
		fused++
	}
	if fused == 0 {
		return g, nil
	}
	out := optNewGraph(n - fused)
	var chain []*Task
	for i, t := range g.tasks {
		if next[i] >= 0 {
			continue // merged into a later task of its chain
		}
		if prev[i] < 0 {
			optAppend(out, t)
			continue
		}
		chain = chain[:0]
		for j := int32(i); j >= 0; j = prev[j] {
			chain = append(chain, g.tasks[j])
		}
		slices.Reverse(chain)
		ft, err := fuseChain(chain)
		if err != nil {
			return nil, err
		}
		optAppend(out, ft)
	}
	out.external = maps.Clone(g.external)
	return out, nil
}

// fuseChain returns the OpFused task that runs chain, whose tasks each
// depend on the one before.
func fuseChain(chain []*Task) (*Task, error) {
	last := chain[len(chain)-1]
	inner := make([]*Task, len(chain))
	var inputs []Key
	var seen map[Key]struct{} // made when inputs get too many to scan
	a := Annotations{
		Priority: last.Priority, Span: last.Span, LooseRestrictions: last.LooseRestrictions,
		Resources: maps.Clone(last.Resources), Workers: slices.Clone(last.Workers),
	}
	for m, t := range chain {
		inner[m] = optBare(t)
		a.Retries = max(a.Retries, t.Retries)
		for _, k := range t.Deps {
			// The only task of the chain that a member depends on is the
			// one before it.
			if m > 0 && k == chain[m-1].Key {
				continue
			}
			if seen == nil && len(inputs) >= 16 {
				seen = make(map[Key]struct{}, 2*len(inputs))
				for _, in := range inputs {
					seen[in] = struct{}{}
				}
			}
			if seen != nil {
				if _, ok := seen[k]; ok {
					continue
				}
				seen[k] = struct{}{}
			} else if slices.Contains(inputs, k) {
				continue
			}
			inputs = append(inputs, k)
		}
	}
	params, err := FusedParams(inner, inputs)
	if err != nil {
		return nil, fmt.Errorf("fuse %q: %w", last.Key, err)
	}
	return &Task{Key: last.Key, Op: OpFused, Params: params, Deps: inputs, Annotations: a}, nil
}

// optMaxInline bounds how many cheap tasks are copied into a task for one
// of its dependencies, so that a long run of cheap tasks each used by its
// own expensive task does not grow the graph quadratically: a cheap task
// that, together with the cheap tasks it would bring along, counts more than
// this stays a task.
const optMaxInline = 64

// Inline copies cheap tasks into the tasks that use them. A task is cheap
// when its op is registered in reg (nil means Default) with Cheap set (the
// built-ins OpValue, OpList, OpAlias and OpGetItem, and functions registered
// with AsCheap) and it has no annotations; an op that reg does not know is
// not cheap.
//
// Every task that uses cheap tasks becomes an OpFused task with the same
// key and annotations that first computes its cheap dependencies (and theirs,
// as long as they are cheap), then itself; the fused task depends on what
// those tasks depend on outside them, so expensive work is never copied, only
// cheap work. A cheap task is thus duplicated into each of its dependents
// and disappears from the graph, unless it is in keep or has no dependents.
// A cheap task that, together with the cheap tasks it reaches through cheap
// tasks only (counted once per path), counts more than 64 is not inlined
// but stays a task, so that the result stays linear in the size of g.
//
// A keep key that is neither a task nor external is an error, as is a cycle
// (*CycleError), and reg must have OpFused registered.
func Inline(g *Graph, keep []Key, reg *Registry) (*Graph, error) {
	if err := optCheckFused(reg, "inline"); err != nil {
		return nil, err
	}
	if reg == nil {
		reg = Default()
	}
	kept, err := optKeepSet(g, keep, "inline")
	if err != nil {
		return nil, err
	}
	d := newOptDAG(g)
	topo, ok := d.topo()
	if !ok {
		return nil, d.cycleError(g, "inline")
	}
	n := len(g.tasks)
	cheap := make([]bool, n)
	anyCheap := false
	for i, t := range g.tasks {
		if op, ok := reg.Lookup(t.Op); ok && op.Cheap && t.Annotations.IsZero() {
			cheap[i] = true
			anyCheap = true
		}
	}
	if !anyCheap {
		return g, nil
	}
	// size bounds the number of cheap tasks a cheap task brings with it
	// (shared ones counted once per path); past the bound it stays a task.
	size := make([]int32, n)
	for _, i := range topo {
		if !cheap[i] {
			continue
		}
		s := int32(1)
		for _, j := range d.deps(int(i)) {
			if cheap[j] {
				s += size[j]
			}
		}
		if s > optMaxInline {
			cheap[i] = false
			continue
		}
		size[i] = s
	}
	in := optInliner{g: g, cheap: cheap, mark: make([]int32, n)}
	out := optNewGraph(n)
	for i, t := range g.tasks {
		if cheap[i] && !kept[i] && len(d.dependents(i)) > 0 {
			continue // inlined into all its dependents
		}
		ft, err := in.inlineInto(t)
		if err != nil {
			return nil, err
		}
		optAppend(out, ft)
	}
	out.external = maps.Clone(g.external)
	return out, nil
}

// optInliner holds the state of Inline shared by all tasks.
type optInliner struct {
	g     *Graph
	cheap []bool  // inlined tasks
	mark  []int32 // mark[j] == stamp when j is already inlined into the current task
	stamp int32
	stack []optFrame
}

type optFrame struct{ task, next int }

// inlineInto returns t with its cheap dependencies inlined.
func (in *optInliner) inlineInto(t *Task) (*Task, error) {
	g := in.g
	has := false
	for _, k := range t.Deps {
		if j, ok := g.index[k]; ok && in.cheap[j] {
			has = true
			break
		}
	}
	if !has {
		return t, nil
	}
	in.stamp++
	stamp := in.stamp
	var (
		inner  []*Task
		inputs []Key
	)
	seenInput := map[Key]struct{}{}
	// use handles dependency k of an inner task: a cheap task not inlined
	// yet is returned to be visited; anything else not cheap is an input.
	use := func(k Key) (int, bool) {
		j, ok := g.index[k]
		if ok && in.cheap[j] {
			if in.mark[j] == stamp {
				return 0, false
			}
			in.mark[j] = stamp
			return j, true
		}
		if _, ok := seenInput[k]; !ok {
			seenInput[k] = struct{}{}
			inputs = append(inputs, k)
		}
		return 0, false
	}
	for _, k := range t.Deps {
		j, ok := use(k)
		if !ok {
			continue
		}
		// Depth first, placing each cheap task after its dependencies.
		stack := append(in.stack[:0], optFrame{task: j})
		for len(stack) > 0 {
			top := &stack[len(stack)-1]
			deps := g.tasks[top.task].Deps
			if top.next == len(deps) {
				inner = append(inner, g.tasks[top.task])
				stack = stack[:len(stack)-1]
				continue
			}
			dk := deps[top.next]
			top.next++
			if c, ok := use(dk); ok {
				stack = append(stack, optFrame{task: c})
			}
		}
		in.stack = stack
	}
	inner = append(inner, optBare(t))
	params, err := FusedParams(inner, inputs)
	if err != nil {
		return nil, fmt.Errorf("inline into %q: %w", t.Key, err)
	}
	ft := &Task{Key: t.Key, Op: OpFused, Params: params, Deps: inputs, Annotations: t.Annotations}
	ft.Resources = maps.Clone(t.Resources)
	ft.Workers = slices.Clone(t.Workers)
	return ft, nil
}

// Optimize prepares g for computing keys: Cull, then Inline, then Fuse,
// keeping keys in the result with their values.
func Optimize(g *Graph, keys []Key, reg *Registry) (*Graph, error) {
	c, err := Cull(g, keys...)
	if err != nil {
		return nil, err
	}
	in, err := Inline(c, keys, reg)
	if err != nil {
		return nil, err
	}
	return Fuse(in, keys, reg)
}

// optCheckFused checks that reg can run the fused tasks an optimization
// makes.
func optCheckFused(reg *Registry, what string) error {
	if reg == nil {
		reg = Default()
	}
	if _, err := reg.Op(OpFused); err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	return nil
}

// optKeepSet marks the tasks named by keep. External keys in keep are
// accepted and ignored; other unknown keys are an error.
func optKeepSet(g *Graph, keep []Key, what string) ([]bool, error) {
	kept := make([]bool, len(g.tasks))
	for _, k := range keep {
		if i, ok := g.index[k]; ok {
			kept[i] = true
		} else if !g.IsExternal(k) {
			return nil, fmt.Errorf("%s: key %q is not in the graph", what, k)
		}
	}
	return kept, nil
}

// optBare returns a copy of t without annotations, for use as an inner task
// of a fused task (annotations of inner tasks mean nothing).
func optBare(t *Task) *Task {
	if t.Annotations.IsZero() {
		return t
	}
	c := *t
	c.Annotations = Annotations{}
	return &c
}

// optSameRestrictions reports whether two tasks may run as one: they need
// the same resources and the same workers.
func optSameRestrictions(a, b *Annotations) bool {
	return maps.Equal(a.Resources, b.Resources) && slices.Equal(a.Workers, b.Workers) &&
		a.LooseRestrictions == b.LooseRestrictions
}

// optSingle returns the only distinct value of s, if s has exactly one.
func optSingle(s []int32) (int32, bool) {
	if len(s) == 0 {
		return 0, false
	}
	for _, v := range s[1:] {
		if v != s[0] {
			return 0, false
		}
	}
	return s[0], true
}

func optNewGraph(n int) *Graph {
	return &Graph{tasks: make([]*Task, 0, n), index: make(map[Key]int, n)}
}

// optAppend adds t, whose key is known to be new, to g.
func optAppend(g *Graph, t *Task) {
	g.index[t.Key] = len(g.tasks)
	g.tasks = append(g.tasks, t)
}

// optDAG is an index view of the edges of a graph between its tasks: the
// dependencies of task i are deps(i) and its dependents dependents(i), both
// as task indices in graph order, one entry per edge (a task that names a
// dependency twice has two edges to it). Edges to external or missing keys
// are left out.
//
// pos holds, aligned with every task's Deps, the index of each dependency,
// or -1 for one that is not a task of the graph.
type optDAG struct {
	depStart, depIdx []int32
	outStart, outIdx []int32
	posStart, pos    []int32
}

// newOptDAG returns the index view of g, built once and kept until g
// changes.
func newOptDAG(g *Graph) *optDAG {
	if d := g.dagCache.Load(); d != nil {
		return d
	}
	d := buildOptDAG(g)
	g.dagCache.Store(d)
	return d
}

func buildOptDAG(g *Graph) *optDAG {
	n := len(g.tasks)
	d := &optDAG{depStart: make([]int32, n+1), outStart: make([]int32, n+1), posStart: make([]int32, n+1)}
	e := 0
	for _, t := range g.tasks {
		e += len(t.Deps)
	}
	d.depIdx = make([]int32, 0, e)
	d.pos = make([]int32, 0, e)
	outCount := make([]int32, n)
	for i, t := range g.tasks {
		d.depStart[i] = int32(len(d.depIdx))
		d.posStart[i] = int32(len(d.pos))
		for _, k := range t.Deps {
			if j, ok := g.index[k]; ok {
				d.depIdx = append(d.depIdx, int32(j))
				d.pos = append(d.pos, int32(j))
				outCount[j]++
			} else {
				d.pos = append(d.pos, -1)
			}
		}
	}
	d.posStart[n] = int32(len(d.pos))
	d.depStart[n] = int32(len(d.depIdx))
	var s int32
	for i := range n {
		d.outStart[i] = s
		s += outCount[i]
	}
	d.outStart[n] = s
	d.outIdx = make([]int32, s)
	fill := outCount // reuse as the next free slot per task
	for i := range n {
		fill[i] = d.outStart[i]
	}
	for i := range n {
		for _, j := range d.depIdx[d.depStart[i]:d.depStart[i+1]] {
			d.outIdx[fill[j]] = int32(i)
			fill[j]++
		}
	}
	return d
}

func (d *optDAG) deps(i int) []int32       { return d.depIdx[d.depStart[i]:d.depStart[i+1]] }
func (d *optDAG) dependents(i int) []int32 { return d.outIdx[d.outStart[i]:d.outStart[i+1]] }
func (d *optDAG) len() int                 { return len(d.depStart) - 1 }

// topo returns the tasks in a topological order (Kahn's algorithm, ready
// tasks in graph order) and whether the graph is acyclic; when it is not,
// the order lacks the tasks on or after a cycle.
func (d *optDAG) topo() ([]int32, bool) {
	n := d.len()
	missing := make([]int32, n)
	order := make([]int32, 0, n)
	for i := range n {
		missing[i] = d.depStart[i+1] - d.depStart[i]
		if missing[i] == 0 {
			order = append(order, int32(i))
		}
	}
	for h := 0; h < len(order); h++ {
		for _, j := range d.dependents(int(order[h])) {
			if missing[j]--; missing[j] == 0 {
				order = append(order, j)
			}
		}
	}
	return order, len(order) == n
}

func (d *optDAG) checkAcyclic(g *Graph, what string) error {
	if _, ok := d.topo(); ok {
		return nil
	}
	return d.cycleError(g, what)
}

func (d *optDAG) cycleError(g *Graph, what string) error {
	if cyc := g.findCycle(); cyc != nil {
		return fmt.Errorf("%s: %w", what, &CycleError{Keys: cyc})
	}
	return fmt.Errorf("%s: the graph has a cycle", what)
}
