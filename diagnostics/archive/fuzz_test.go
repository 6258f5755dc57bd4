package archive_test

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/shoal-data/shoal/diagnostics"
	"github.com/shoal-data/shoal/diagnostics/archive"
	"github.com/shoal-data/shoal/graph"
	"github.com/shoal-data/shoal/io/parquet"
	"github.com/shoal-data/shoal/io/storage"
)

// FuzzReadBack reads arbitrary bytes as a file of the archive, the way
// Shoal reads an archive back after the run (a file may be damaged on
// disk, or cut short by a full one): an error naming the file, or
// records; never a panic, a buffer left allocated, or an allocation far
// beyond the file's size. The seeds are real files of every table.
func FuzzReadBack(f *testing.F) {
	dir := f.TempDir()
	w, err := archive.Open(dir, archive.WithCluster("c1"), archive.WithFlushInterval(time.Hour),
		archive.WithSampler(func(now time.Time) []archive.Sample {
			return []archive.Sample{{Time: t0, Process: "worker", Worker: "w1", Name: "memory_bytes", Value: 3}}
		}), archive.WithSampleInterval(time.Millisecond))
	if err != nil {
		f.Fatal(err)
	}
	load := graph.NewKey("load", "3fa2c1d0", 0)
	w.AddLogs(archive.Log{Time: t0, Process: archive.ProcessWorker, Worker: "w1", Level: "INFO", Message: "hello",
		Attrs: `{"a":"1"}`})
	w.AddEvents(archive.Event{Time: t0, Kind: "spill", Key: string(load), Bytes: 10, Path: "/tmp/x"})
	w.Record([]diagnostics.Event{{Time: t0.Add(time.Second), Kind: diagnostics.TaskTransition, Compute: 1,
		Key: load, From: "processing", To: "memory", Worker: "w1", Start: t0, Duration: time.Second, Bytes: 10}})
	time.Sleep(20 * time.Millisecond) // a sample or more
	if err := w.Close(); err != nil {
		f.Fatal(err)
	}
	for i, table := range archive.Tables {
		paths, _ := filepath.Glob(archive.Glob(dir, table))
		for _, p := range paths {
			b, err := os.ReadFile(p)
			if err != nil {
				f.Fatal(err)
			}
			f.Add(uint8(i), b)
			f.Add(uint8(i), b[:len(b)*3/4])
		}
	}
	read := f.TempDir()
	f.Fuzz(func(t *testing.T, table uint8, data []byte) {
		name := archive.Tables[int(table)%len(archive.Tables)]
		d := filepath.Join(read, name)
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(d, "20260304T050607.000000000Z-c1-000001.parquet")
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		ctx := context.Background()
		mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		for _, opts := range []parquet.Options{{}, {Filter: []parquet.Bound{{Column: "time", Op: ">=", Value: t0}}}} {
			plan, err := parquet.PlanRead(ctx, storage.Local{}, []string{archive.Glob(read, name)}, opts)
			if err != nil {
				if !strings.Contains(err.Error(), path) && !strings.Contains(err.Error(), `"time"`) {
					t.Errorf("the error does not name the file: %v", err)
				}
				continue
			}
			for i := range plan.Parts {
				rec, err := parquet.ReadPart(ctx, storage.Local{}, plan, i, mem)
				if err != nil {
					if !strings.Contains(err.Error(), path) {
						t.Errorf("the error does not name the file: %v", err)
					}
					continue
				}
				rec.Release()
			}
		}
		runtime.ReadMemStats(&after)
		if d := after.TotalAlloc - before.TotalAlloc; d > 64<<20+uint64(len(data))*64 {
			t.Errorf("%d bytes made the reader allocate %d MiB", len(data), d>>20)
		}
		mem.AssertSize(t, 0)
	})
}
