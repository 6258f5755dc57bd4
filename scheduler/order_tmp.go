package scheduler

import "github.com/shoal-data/shoal/graph"

// defaultOrder is replaced by graph.Order once it exists.
func defaultOrder(g *graph.Graph) []int {
	o := make([]int, g.Len())
	for i := range o {
		o[i] = i
	}
	return o
}
