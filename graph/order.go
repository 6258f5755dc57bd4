package graph

import "slices"

// orderEagerGroup bounds the eager step of Order: when every task still
// waiting for a value is ready, and there are at most this many, they run
// right away so that the value can be released.
const orderEagerGroup = 4

// Order returns the static priority of every task of g, in the order of
// g.Tasks(): a permutation of 0..n-1 where lower runs first. Executors run
// ready tasks in this order (after the tasks' own Priority annotations).
//
// The order is topological (every task comes after the tasks it depends on)
// and deterministic, and it finishes one branch of the graph before it
// starts the next, so that intermediate values can be released early: one
// partition's chain is computed from its input to its end, and a tree
// reduction combines each pair as soon as both halves are ready rather than
// computing every leaf first. Run with one worker, it holds O(log n) values
// for a tree reduction of n leaves.
//
// It works like this, in the spirit of dask.order. Starting from the tasks
// that nothing depends on (the outputs), in graph order, a depth-first search
// goes down the dependencies, the deepest first (the dependency with the
// longest chain of tasks below it; ties in the order of Deps), and places a
// task once all its dependencies are placed. Each time a task is placed,
// the tasks that have become ready and are all that is left to release one
// of their dependencies are placed too, when there are at most a few of
// them (orderEagerGroup): after a shared input is read, its consumers run
// before the next input is read. It runs in O(n + e log d) time for n tasks,
// e dependency edges and at most d dependencies per task.
//
// For a graph with a cycle (which Validate rejects) the result is still a
// permutation, but not a topological order.
func Order(g *Graph) []int {
	d := newOptDAG(g)
	o := newOrderer(d)
	o.run()
	return o.prio
}

type orderer struct {
	d *optDAG
	// sorted holds, per task, its dependencies (task indices, one entry per
	// edge) sorted deepest first, in the CSR layout of d.depStart.
	sorted []int32
	// state: 0 not visited, 1 on the search stack, 2 placed.
	state []uint8
	// missing counts the dependency edges of a task not placed yet.
	missing []int32
	// remaining counts the dependent edges of a task not placed yet;
	// notReady those whose task is not ready yet (some dependency missing).
	remaining, notReady []int32
	prio                []int
	next                int
	check               []int32 // tasks whose dependents may be placed eagerly
}

func newOrderer(d *optDAG) *orderer {
	n := d.len()
	o := &orderer{
		d:         d,
		state:     make([]uint8, n),
		missing:   make([]int32, n),
		remaining: make([]int32, n),
		notReady:  make([]int32, n),
		prio:      make([]int, n),
	}
	for i := range n {
		o.missing[i] = d.depStart[i+1] - d.depStart[i]
		o.remaining[i] = d.outStart[i+1] - d.outStart[i]
		o.notReady[i] = o.remaining[i]
	}
	o.sortDeps()
	return o
}

// sortDeps orders each task's dependencies by height (the number of tasks
// on the longest chain below), highest first, stably.
func (o *orderer) sortDeps() {
	d := o.d
	n := d.len()
	height := make([]int32, n)
	topo, _ := d.topo() // tasks on a cycle keep height 0
	for _, i := range topo {
		var h int32
		for _, j := range d.deps(int(i)) {
			h = max(h, height[j]+1)
		}
		height[i] = h
	}
	o.sorted = slices.Clone(d.depIdx)
	for i := range n {
		s := o.sorted[d.depStart[i]:d.depStart[i+1]]
		if len(s) > 1 {
			slices.SortStableFunc(s, func(a, b int32) int { return int(height[b] - height[a]) })
		}
	}
}

func (o *orderer) run() {
	d := o.d
	n := d.len()
	type frame struct {
		task int32
		next int32
	}
	var stack []frame
	search := func(s int) {
		if o.state[s] != 0 {
			return
		}
		o.state[s] = 1
		stack = append(stack[:0], frame{task: int32(s), next: d.depStart[s]})
		for len(stack) > 0 {
			top := &stack[len(stack)-1]
			i := top.task
			if o.state[i] == 2 { // placed eagerly meanwhile
				stack = stack[:len(stack)-1]
				continue
			}
			end := d.depStart[i+1]
			pushed := false
			for top.next < end {
				j := o.sorted[top.next]
				top.next++
				if o.state[j] == 0 {
					o.state[j] = 1
					stack = append(stack, frame{task: j, next: d.depStart[j]})
					pushed = true
					break
				}
				// 1: a cycle, ignore the edge; 2: already placed.
			}
			if pushed {
				continue
			}
			stack = stack[:len(stack)-1]
			o.place(i)
			o.eager()
		}
	}
	for i := range n {
		if d.outStart[i] == d.outStart[i+1] {
			search(i)
		}
	}
	for i := range n { // tasks on cycles with no output below them
		search(i)
	}
}

// place gives task i the next priority and updates the counts.
func (o *orderer) place(i int32) {
	d := o.d
	o.prio[i] = o.next
	o.next++
	o.state[i] = 2
	for _, z := range d.deps(int(i)) {
		o.remaining[z]--
		o.check = append(o.check, z)
	}
	for _, w := range d.dependents(int(i)) {
		if o.missing[w]--; o.missing[w] == 0 {
			for _, z := range d.deps(int(w)) {
				o.notReady[z]--
				o.check = append(o.check, z)
			}
		}
	}
}

// eager places the dependents of the checked tasks when they are all ready
// and few: placing them releases the checked task.
func (o *orderer) eager() {
	d := o.d
	for len(o.check) > 0 {
		z := o.check[len(o.check)-1]
		o.check = o.check[:len(o.check)-1]
		if r := o.remaining[z]; r == 0 || r > orderEagerGroup || o.notReady[z] > 0 {
			continue
		}
		for _, w := range d.dependents(int(z)) {
			if o.state[w] != 2 && o.missing[w] == 0 {
				o.place(w)
			}
		}
	}
}
