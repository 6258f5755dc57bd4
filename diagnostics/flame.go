package diagnostics

import (
	"cmp"
	"slices"
	"strconv"

	"github.com/google/pprof/profile"
)

// FlameNode is a frame of a flame graph: a function, the CPU time spent
// in it and in what it called (Value), in it alone (Self), and the
// functions it called.
type FlameNode struct {
	Name     string       `json:"name"`
	Value    int64        `json:"value"` // nanoseconds
	Self     int64        `json:"self"`  // nanoseconds
	Children []*FlameNode `json:"children,omitempty"`
}

// DefaultFlameMinFraction is the share of the total below which
// FlameGraph leaves frames out.
const DefaultFlameMinFraction = 0.001

// FlameGraph turns a CPU profile into a flame graph: the root ("all")
// holds every sample, its children the outermost functions, inlined
// functions as frames of their own. Frames below minFraction of the total
// are left out (their time stays in their parent's Value); children are
// sorted by Value, largest first.
func FlameGraph(p *profile.Profile, minFraction float64) *FlameNode {
	root := &flameBuild{name: "all"}
	if p != nil && len(p.SampleType) > 0 {
		vi := cpuIndex(p)
		var path []string
		for _, sm := range p.Sample {
			if vi >= len(sm.Value) || sm.Value[vi] == 0 {
				continue
			}
			v := sm.Value[vi]
			path = path[:0]
			for i := len(sm.Location) - 1; i >= 0; i-- {
				loc := sm.Location[i]
				if len(loc.Line) == 0 {
					path = append(path, "0x"+strconv.FormatUint(loc.Address, 16))
					continue
				}
				for j := len(loc.Line) - 1; j >= 0; j-- {
					name := "?"
					if f := loc.Line[j].Function; f != nil {
						name = f.Name
					}
					path = append(path, name)
				}
			}
			n := root
			n.value += v
			for _, name := range path {
				n = n.child(name)
				n.value += v
			}
			n.self += v
		}
	}
	min := int64(float64(root.value) * minFraction)
	return root.finish(min)
}

type flameBuild struct {
	name        string
	value, self int64
	kids        map[string]*flameBuild
}

func (b *flameBuild) child(name string) *flameBuild {
	if b.kids == nil {
		b.kids = map[string]*flameBuild{}
	}
	c := b.kids[name]
	if c == nil {
		c = &flameBuild{name: name}
		b.kids[name] = c
	}
	return c
}

func (b *flameBuild) finish(min int64) *FlameNode {
	n := &FlameNode{Name: b.name, Value: b.value, Self: b.self}
	for _, c := range b.kids {
		if c.value > 0 && c.value >= min {
			n.Children = append(n.Children, c.finish(min))
		}
	}
	slices.SortFunc(n.Children, func(a, b *FlameNode) int {
		if c := cmp.Compare(b.Value, a.Value); c != 0 {
			return c
		}
		return cmp.Compare(a.Name, b.Name)
	})
	return n
}
