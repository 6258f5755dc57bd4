package sketch

import (
	"math/rand/v2"
	"testing"
)

func BenchmarkAdd(b *testing.B) {
	data := distributions["normal"](rand.New(rand.NewPCG(1, 1)), 1<<20)
	for _, k := range []int{200, 800} {
		b.Run(map[int]string{200: "k=200", 800: "k=800"}[k], func(b *testing.B) {
			s := New(k, 1)
			i := 0
			for b.Loop() {
				end := min(i+4096, len(data))
				s.Add(data[i:end]...)
				i = end % len(data)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/4096, "ns/value")
		})
	}
}

// BenchmarkMerge merges the sketch of a partition of a million values into
// a running total, as a tree reduction does.
func BenchmarkMerge(b *testing.B) {
	rng := rand.New(rand.NewPCG(2, 2))
	parts := make([]*Quantiles, 16)
	for i := range parts {
		parts[i] = New(0, uint64(i))
		parts[i].Add(distributions["lognormal (skewed)"](rng, 1<<20)...)
	}
	for b.Loop() {
		total := New(0, 99)
		for _, p := range parts {
			total.Merge(p)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(parts)), "ns/merge")
}

func BenchmarkQuantile(b *testing.B) {
	s := New(0, 1)
	s.Add(distributions["uniform"](rand.New(rand.NewPCG(3, 3)), 1<<20)...)
	for b.Loop() {
		s.Quantiles(0.25, 0.5, 0.75)
	}
}

func BenchmarkMarshal(b *testing.B) {
	s := New(0, 1)
	s.Add(distributions["uniform"](rand.New(rand.NewPCG(3, 3)), 1<<20)...)
	for b.Loop() {
		buf, _ := s.MarshalBinary()
		var d Quantiles
		if err := d.UnmarshalBinary(buf); err != nil {
			b.Fatal(err)
		}
	}
}
