package sketch_test

import (
	"fmt"
	"math/rand/v2"

	"github.com/shoal-data/shoal/dataframe/internal/sketch"
)

// Per-partition sketches, merged, give the median and quartiles of all
// the values, within the rank error bound.
func Example() {
	rng := rand.New(rand.NewPCG(1, 2))
	total := sketch.New(0, 0)
	for part := range 10 {
		s := sketch.New(0, uint64(part)) // one per partition, seeded by its number
		for range 100000 {
			s.Add(rng.Float64() * 1000)
		}
		b, _ := s.MarshalBinary() // crosses the wire
		var back sketch.Quantiles
		if err := back.UnmarshalBinary(b); err != nil {
			fmt.Println(err)
			return
		}
		total.Merge(&back)
	}
	q := total.Quantiles(0.25, 0.5, 0.75)
	fmt.Printf("n=%d, rank error at most %.2f%%\n", total.Count(), 100*total.RankError())
	fmt.Printf("quartiles near 250, 500, 750: %v\n", q[0] > 235 && q[0] < 265 && q[1] > 485 && q[1] < 515 && q[2] > 735 && q[2] < 765)
	// Output:
	// n=1000000, rank error at most 1.33%
	// quartiles near 250, 500, 750: true
}
