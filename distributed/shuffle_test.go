package distributed_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/shoal-data/shoal/dataframe"
	"github.com/shoal-data/shoal/dataframe/dftest"
	"github.com/shoal-data/shoal/diagnostics"
	"github.com/shoal-data/shoal/distributed"
	"github.com/shoal-data/shoal/local"
)

// TestShuffleBetweenWorkerDirs runs the tutorial's shuffle on two workers
// that do not share a directory (as on two machines): each reads the
// other's shards from it over Flight. The answers must be those of the
// in-process executor, and no shuffle file may be left on either worker.
func TestShuffleBetweenWorkerDirs(t *testing.T) {
	lc, c := newCluster(t, distributed.LocalClusterOptions{Workers: 1, InProcess: true})
	// A second worker with a directory of its own.
	w, _ := runJoiningWorker(t, lc)
	eventually(t, "the second worker joined", func() bool {
		info, err := c.Info(context.Background())
		return err == nil && len(info.Workers) == 2
	})

	var mu sync.Mutex
	splitsOn := map[string]int{}
	sub := lc.Scheduler().Events().Subscribe(func(evs []diagnostics.Event) {
		for _, e := range evs {
			if e.Kind == diagnostics.TaskTransition && e.To == "memory" && strings.HasPrefix(string(e.Key), "shuffle-split") {
				mu.Lock()
				splitsOn[e.Worker]++
				mu.Unlock()
			}
		}
	})
	defer sub.Close()

	glob := writeTutorialCSV(t, t.TempDir(), 6, 2000)
	exec := local.New()
	defer exec.Close()
	wantMean, wantMonthly, wantSorted := tutorial(t, exec, glob)
	gotMean, gotMonthly, gotSorted := tutorial(t, c, glob)
	if gotMean != wantMean {
		t.Errorf("mean %v, want %v", gotMean, wantMean)
	}
	dftest.AssertEqual(t, gotMonthly, wantMonthly, dftest.IgnoreRowOrder())
	dftest.AssertEqual(t, gotSorted, wantSorted)

	mu.Lock()
	if len(splitsOn) < 2 {
		t.Errorf("shuffle splits ran on %v: want both workers, so that shards cross between them", splitsOn)
	}
	mu.Unlock()
	left, err := filepath.Glob(filepath.Join(w.LocalDir(), "shuffle-*"))
	if err != nil {
		t.Fatal(err)
	}
	if len(left) > 0 {
		t.Errorf("shuffle files left in the second worker's directory: %v", left)
	}
	if _, err := os.Stat(w.LocalDir()); err != nil {
		t.Errorf("the worker's directory: %v", err)
	}
}

// TestShuffleWorkerLeavesBetweenDirs: a worker that does not share its
// directory leaves during a shuffle: after its first split (the shards it
// wrote are lost with it), or once the other worker finished a collect
// (it has every split's manifest then: reading the shards of the worker
// that left finds it gone). The splits whose shards it held run again on the other worker,
// and the shuffle ends with the right rows.
func TestShuffleWorkerLeavesBetweenDirs(t *testing.T) {
	tests := []struct {
		name string
		when func(e diagnostics.Event, w string) bool
	}{
		{"after its first split", func(e diagnostics.Event, w string) bool {
			return e.To == "memory" && e.Worker == w && strings.HasPrefix(string(e.Key), "shuffle-split")
		}},
		{"once the other has all the manifests", func(e diagnostics.Event, w string) bool {
			return e.To == "memory" && e.Key.Prefix() == "project" && e.Worker != w
		}},
	}
	glob := writeTutorialCSV(t, t.TempDir(), 6, 2000)
	exec := local.New()
	defer exec.Close()
	_, _, want := tutorial(t, exec, glob)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			lc, c := newCluster(t, distributed.LocalClusterOptions{Workers: 1, InProcess: true})
			w, stop := runJoiningWorker(t, lc)
			eventually(t, "the second worker joined", func() bool {
				info, err := c.Info(context.Background())
				return err == nil && len(info.Workers) == 2
			})
			var once sync.Once
			left := make(chan struct{})
			var mu sync.Mutex
			splits := 0
			sub := lc.Scheduler().Events().Subscribe(func(evs []diagnostics.Event) {
				for _, e := range evs {
					if e.Kind != diagnostics.TaskTransition {
						continue
					}
					if e.To == "memory" && e.Key.Prefix() == "shuffle-split" {
						mu.Lock()
						splits++
						mu.Unlock()
					}
					if tc.when(e, w.Address()) {
						once.Do(func() {
							go func() {
								stop()
								close(left)
							}()
						})
					}
				}
			})
			defer sub.Close()
			defer func() {
				once.Do(func() {
					stop()
					close(left)
				})
				<-left
			}()
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			df, err := dataframe.ReadCSV(ctx, glob, dataframe.CSVOptions{ParseDates: map[string]string{"timestamp": ""}, BlockSize: 16 << 10})
			if err != nil {
				t.Fatal(err)
			}
			got, err := func() (arrow.Table, error) {
				idx, err := df.SetIndex(ctx, c, "timestamp")
				if err != nil {
					return nil, err
				}
				return idx.Select("timestamp", "station", "temperature").Compute(ctx, c)
			}()
			if err != nil {
				t.Fatalf("the shuffle without the worker %s: %v", w.Address(), err)
			}
			dftest.AssertEqual(t, got, want)
			// What the worker wrote ran again, and only that.
			mu.Lock()
			if n := df.NPartitions(); splits <= n || splits >= 2*n {
				t.Errorf("%d splits computed for %d partitions", splits, n)
			}
			mu.Unlock()
		})
	}
}
