package ipc

import (
	"context"
	"math/rand/v2"
	"path/filepath"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/shoal-data/shoal/io/storage"
)

// BenchmarkReadPart reads a file of 20 record batches of 10,000 rows, in
// one part, all columns and two of five.
func BenchmarkReadPart(b *testing.B) {
	t := &testing.T{}
	rng := rand.New(rand.NewPCG(1, 2))
	recs := batches(t, rng, 20, 10000)
	ctx := context.Background()
	for _, comp := range []string{"", "zstd"} {
		path := filepath.Join(b.TempDir(), "bench.arrow")
		if err := WriteFile(ctx, storage.Local{}, path, recs, WriteOptions{Compression: comp}); err != nil {
			b.Fatal(err)
		}
		size, _ := storage.Local{}.Stat(ctx, path)
		for _, cols := range [][]string{nil, {"id", "x"}} {
			name := "plain"
			if comp != "" {
				name = comp
			}
			if cols != nil {
				name += "/2cols"
			}
			b.Run(name, func(b *testing.B) {
				plan, err := PlanRead(ctx, storage.Local{}, []string{path}, Options{Columns: cols, TargetBytes: size})
				if err != nil {
					b.Fatal(err)
				}
				b.SetBytes(size)
				b.ReportAllocs()
				for i := 0; i < b.N; i++ {
					rec, err := ReadPart(ctx, storage.Local{}, plan, 0, memory.DefaultAllocator)
					if err != nil {
						b.Fatal(err)
					}
					rec.Release()
				}
			})
		}
	}
}
