package dashboard

import (
	"maps"
	"slices"
	"strings"

	"github.com/shoal-data/shoal/graph"
)

// groupState counts the tasks of a task group: the tasks of one kind of
// one collection, a key without its trailing indices.
type groupState struct {
	name, prefix string
	comp         uint64
	total        int // tasks seen
	expected     int // tasks of the graphs submitted
	live         [numStates]int
	liveDone     int // tasks held that are done
	goneDone     int
	goneErred    int
	bytes        int64
	seconds      float64
}

// group returns the group of key, made when new. Called with r.mu held.
func (r *Recorder) group(k graph.Key, prefix string, comp uint64) *groupState {
	name := k.Group()
	g := r.groups[name]
	if g == nil {
		g = &groupState{name: name, prefix: prefix, comp: comp}
		r.groups[name] = g
		r.groupList = append(r.groupList, g)
	}
	return g
}

// AddGraph tells the Recorder the shape of a graph that computation comp
// submitted: how many tasks each task group has (see graph.Key.Group),
// and how many dependencies go from the tasks of one group to those of
// another ([2]string{from, to}: the tasks of to depend on those of from).
func (r *Recorder) AddGraph(comp uint64, groups map[string]int, edges map[[2]string]int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, name := range slices.Sorted(maps.Keys(groups)) {
		n := groups[name]
		g := r.groups[name]
		if g == nil {
			g = &groupState{name: name, prefix: graph.Key(name).Prefix(), comp: comp}
			r.groups[name] = g
			r.groupList = append(r.groupList, g)
		}
		g.expected += n
	}
	for e, n := range edges {
		r.edges[e] += n
	}
}

// GraphGroups returns the task groups of g (see graph.Key.Group) with
// their tasks, and the dependencies between groups: what AddGraph takes.
func GraphGroups(g *graph.Graph) (map[string]int, map[[2]string]int) {
	groups := map[string]int{}
	edges := map[[2]string]int{}
	for _, t := range g.Tasks() {
		to := t.Key.Group()
		groups[to]++
		for _, d := range t.Deps {
			if from := d.Group(); from != to {
				edges[[2]string{from, to}]++
			}
		}
	}
	return groups, edges
}

func (g *groupState) held() int {
	n := 0
	for _, c := range g.live {
		n += c
	}
	return n
}

// resetGroups forgets the groups with no task left, but those of the
// computations kept (the last ones, see Computations) and of computation
// comp, which starts. Called with r.mu held, when a computation starts
// while nothing runs.
func (r *Recorder) resetGroups(comp uint64) {
	keep := r.groupList[:0]
	for _, g := range r.groupList {
		if g.comp != 0 && (g.comp == comp || r.compByID[g.comp] != nil) {
			keep = append(keep, g)
			continue
		}
		if g.held() == 0 {
			delete(r.groups, g.name)
			continue
		}
		g.goneDone, g.goneErred, g.expected = 0, 0, 0
		g.total = g.held()
		keep = append(keep, g)
	}
	clear(r.groupList[len(keep):])
	r.groupList = keep
	for e := range r.edges {
		if r.groups[e[0]] == nil || r.groups[e[1]] == nil {
			delete(r.edges, e)
		}
	}
}

// Groups returns the task groups and the dependencies between them.
func (r *Recorder) Groups() *Groups {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := &Groups{Groups: make([]Group, 0, len(r.groupList)), Edges: make([]GroupEdge, 0, len(r.edges))}
	for _, g := range r.groupList {
		gg := Group{Name: g.name, Prefix: g.prefix, Computation: g.comp, Total: max(g.expected, g.total),
			States: map[string]int{}, Bytes: g.bytes, Seconds: g.seconds}
		for i, n := range g.live {
			if n > 0 {
				gg.States[stateNames[i]] = n
			}
		}
		if g.goneDone > 0 {
			gg.States["forgotten"] = g.goneDone
		}
		if g.goneErred > 0 {
			gg.States["erred"] += g.goneErred
		}
		out.Groups = append(out.Groups, gg)
	}
	for e, n := range r.edges {
		if r.groups[e[0]] != nil && r.groups[e[1]] != nil {
			out.Edges = append(out.Edges, GroupEdge{From: e[0], To: e[1], Count: n})
		}
	}
	return out
}

// Shuffles returns the shuffles among the task groups, newest first. A
// group of "shuffle-split" tasks is a shuffle, its ID the group's token
// (the name of the shuffle's directory on the workers, shuffle-ID); its
// collects are the groups that depend on it: "shuffle-collect-ID", or
// the tasks the collects were fused into, such as a partial aggregation
// that reads the shuffle's output. Workers is left empty (the Recorder
// does not know what they wrote).
func (r *Recorder) Shuffles() []Shuffle {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []Shuffle
	for i := len(r.groupList) - 1; i >= 0; i-- {
		s := r.groupList[i]
		if s.prefix != "shuffle-split" {
			continue
		}
		sh := Shuffle{ID: strings.TrimPrefix(s.name, "shuffle-split-"), Computation: s.comp,
			Workers: []ShuffleWorker{}, SplitGroups: []string{s.name}}
		sh.Splits, sh.SplitsDone, sh.Erred = max(s.expected, s.total), s.doneCount(), s.erredCount()
		collects := []string{}
		for e := range r.edges {
			if e[0] == s.name && r.groups[e[1]] != nil {
				collects = append(collects, e[1])
			}
		}
		slices.Sort(collects)
		for _, name := range collects {
			c := r.groups[name]
			sh.Collects += max(c.expected, c.total)
			sh.CollectsDone += c.doneCount()
			sh.Erred += c.erredCount()
		}
		sh.CollectGroups = collects
		switch {
		case sh.Erred > 0:
			sh.State = "erred"
		case sh.CollectsDone >= sh.Collects && sh.Collects > 0:
			sh.State = "done"
		default:
			sh.State = "running"
		}
		if c := r.compByID[s.comp]; c != nil {
			sh.Started = c.started
		}
		out = append(out, sh)
	}
	return out
}

func (g *groupState) doneCount() int { return g.liveDone + g.goneDone }

func (g *groupState) erredCount() int { return g.live[erred] + g.goneErred }
