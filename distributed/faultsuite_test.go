package distributed_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/shoal-data/shoal/dataframe"
	"github.com/shoal-data/shoal/diagnostics"
	"github.com/shoal-data/shoal/diagnostics/alert"
	"github.com/shoal-data/shoal/diagnostics/archive"
	"github.com/shoal-data/shoal/distributed"
	"github.com/shoal-data/shoal/distributed/server"
	"github.com/shoal-data/shoal/graph"
	"github.com/shoal-data/shoal/internal/testutil"
	"github.com/shoal-data/shoal/io/csv"
	"github.com/shoal-data/shoal/scheduler"
)

// TestEightFaults injects each of eight faults into a cluster of worker
// processes with an archive: a full disk during a shuffle, a worker
// killed past its memory limit, a worker SIGKILLed, a straggler task, a
// skewed key, a malformed input row, a worker whose registry differs and
// a worker that hangs (SIGSTOP). For each, the first error or alert the
// user sees must name the root cause, the worker and the task (where
// there is one), and once the cluster is closed every worker that joined
// must have its log in the archive.
func TestEightFaults(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	tests := []struct {
		name string
		opts distributed.LocalClusterOptions
		// run injects the fault and returns what the user saw first,
		// and the words it must hold.
		run func(t *testing.T, f *faultCluster) (seen string, want []string)
	}{
		{"full disk during a shuffle", distributed.LocalClusterOptions{Workers: 2, ThreadsPerWorker: 1},
			func(t *testing.T, f *faultCluster) (string, []string) {
				src := t.TempDir()
				df, err := dataframe.ReadCSV(f.ctx, writeTutorialCSV(t, src, 4, 20_000), dataframe.CSVOptions{})
				if err != nil {
					t.Fatal(err)
				}
				_, err = df.SortValues("temperature").Compute(f.ctx, f.c)
				var se *dataframe.ShuffleError
				te := taskError(t, err)
				if !errors.As(err, &se) || !errors.Is(err, syscall.ENOSPC) {
					t.Fatalf("error %v, want a ShuffleError with ENOSPC", err)
				}
				return err.Error(), []string{"no space left on device", se.Path, te.Worker, string(te.Root)}
			}},
		{"worker killed past its memory limit", distributed.LocalClusterOptions{Workers: 1, ThreadsPerWorker: 1,
			Nanny: true, MemoryLimit: 96 << 20, PauseFraction: -1},
			func(t *testing.T, f *faultCluster) (string, []string) {
				d := hog.Call(128)
				_, err := graph.Compute[int](f.ctx, f.c, d)
				var kw *scheduler.KilledWorkerError
				if !errors.As(err, &kw) {
					t.Fatalf("error %v, want a KilledWorkerError", err)
				}
				return err.Error(), []string{"killed by the nanny", "above the terminate threshold",
					kw.Workers[len(kw.Workers)-1], string(d.Key())}
			}},
		{"worker SIGKILLed", distributed.LocalClusterOptions{Workers: 2, ThreadsPerWorker: 1},
			func(t *testing.T, f *faultCluster) (string, []string) {
				d := sleep.Call(30_000)
				done := make(chan error, 1)
				go func() {
					_, err := graph.Compute[int](f.ctx, f.c, d)
					done <- err
				}()
				w := f.runningOn(t, d.Key())
				if err := f.process(t, w).Signal(syscall.SIGKILL); err != nil {
					t.Fatal(err)
				}
				// The task runs again on the other worker: the job ends
				// well; what the user sees is the scheduler's warning.
				r := f.waitLog(t, func(r distributed.LogRecord) bool { return r.Message == "worker lost" })
				f.cancel()
				<-done
				return r.String(), []string{w, "killed", string(d.Key())}
			}},
		{"straggler task", distributed.LocalClusterOptions{Workers: 1, ThreadsPerWorker: 2,
			HeartbeatInterval: 100 * time.Millisecond,
			Scheduler:         server.Config{Alerts: alert.Config{StragglerMin: 300 * time.Millisecond, StragglerTasks: 3}}},
			func(t *testing.T, f *faultCluster) (string, []string) {
				raised, _ := watchAlerts(t, f.lc, alert.Straggler)
				var quick []graph.Delayed
				for i := range 5 {
					quick = append(quick, sleep.Call(1+i))
				}
				if _, err := graph.ComputeAll(f.ctx, f.c, quick...); err != nil {
					t.Fatal(err)
				}
				d := sleep.Call(60_000)
				go graph.Compute[int](f.ctx, f.c, d)
				a := receive(f.ctx, t, raised, "for the task of a minute")
				f.cancel()
				return a.Name + ": " + a.Message, []string{string(d.Key()), a.Worker, "straggler"}
			}},
		{"skewed key", distributed.LocalClusterOptions{Workers: 2, ThreadsPerWorker: 1,
			Scheduler: server.Config{Alerts: alert.Config{SkewMinBytes: 1 << 10}}},
			func(t *testing.T, f *faultCluster) (string, []string) {
				raised, _ := watchAlerts(t, f.lc, alert.ShuffleSkew)
				out, err := skewedFrame(4, 4000).Shuffle(8, "k").Compute(f.ctx, f.c)
				if err != nil {
					t.Fatal(err)
				}
				out.Release()
				a := receive(f.ctx, t, raised, "for the partition of the hot key")
				return a.Message, []string{"shuffle " + a.Shuffle, string(a.Key), a.Worker}
			}},
		{"malformed input row", distributed.LocalClusterOptions{Workers: 2, ThreadsPerWorker: 1},
			func(t *testing.T, f *faultCluster) (string, []string) {
				path := filepath.Join(t.TempDir(), "bad.csv")
				if err := os.WriteFile(path, []byte("a,b\n1,2\n3,4\n5,x\n"), 0o644); err != nil {
					t.Fatal(err)
				}
				df, err := dataframe.ReadCSV(f.ctx, path, dataframe.CSVOptions{Types: map[string]arrow.DataType{"b": arrow.PrimitiveTypes.Int64}})
				if err != nil {
					t.Fatal(err)
				}
				_, err = df.Compute(f.ctx, f.c)
				var pe *csv.ParseError
				te := taskError(t, err)
				if !errors.As(err, &pe) {
					t.Fatalf("error %v, want a csv.ParseError", err)
				}
				return err.Error(), []string{path + " line 4", `column 2 "b"`, `"x"`, te.Worker, string(te.Root)}
			}},
		{"worker whose registry differs", distributed.LocalClusterOptions{Workers: 1, ThreadsPerWorker: 1,
			Env: []string{extraOpEnv + "=1"}},
			nil}, // see refusedCluster
		{"worker that hangs", distributed.LocalClusterOptions{Workers: 2, ThreadsPerWorker: 1,
			HeartbeatInterval: 100 * time.Millisecond, Scheduler: server.Config{HeartbeatTimeout: 3 * time.Second}},
			func(t *testing.T, f *faultCluster) (string, []string) {
				raised, _ := watchAlerts(t, f.lc, alert.WorkerSilent)
				d := sleep.Call(20_000)
				go graph.Compute[int](f.ctx, f.c, d)
				w := f.runningOn(t, d.Key())
				p := f.process(t, w)
				if err := p.Signal(syscall.SIGSTOP); err != nil {
					t.Fatal(err)
				}
				actx, acancel := context.WithTimeout(f.ctx, 20*time.Second)
				defer acancel()
				var a diagnostics.Alert
				select {
				case a = <-raised:
				case <-actx.Done():
					act, rec, err := f.c.Alerts(f.ctx)
					t.Fatalf("no alert: active %+v, recent %+v, %v", act, rec, err)
				}
				p.Signal(syscall.SIGCONT)
				f.cancel()
				return a.Message, []string{w, string(d.Key())}
			}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if tc.run == nil {
				seen, want := refusedCluster(t, tc.opts)
				checkSeen(t, seen, want)
				return
			}
			if tc.name == "full disk during a shuffle" {
				tc.opts.LocalDir = testutil.Tmpfs(t, 256<<10)
			}
			f := newFaultCluster(t, tc.opts)
			seen, want := tc.run(t, f)
			checkSeen(t, seen, want)
			f.checkArchive(t)
		})
	}
}

func checkSeen(t *testing.T, seen string, want []string) {
	t.Helper()
	for _, w := range want {
		if w == "" || !strings.Contains(seen, w) {
			t.Errorf("what the user saw first does not say %q:\n%s", w, seen)
		}
	}
	t.Logf("seen first: %s", seen)
}

// taskError returns the TaskError of err, which names the task and the
// worker.
func taskError(t *testing.T, err error) *graph.TaskError {
	t.Helper()
	var te *graph.TaskError
	if !errors.As(err, &te) || te.Worker == "" {
		t.Fatalf("error %v names no task and worker", err)
	}
	return te
}

// refusedCluster starts workers whose registry differs from the
// client's: the client is refused, naming the op and the workers.
func refusedCluster(t *testing.T, opts distributed.LocalClusterOptions) (string, []string) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	lc, err := distributed.NewLocalCluster(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer lc.Close()
	info := lc.Scheduler().Info()
	if len(info.Workers) == 0 {
		t.Fatalf("info %+v: no worker", info)
	}
	_, err = lc.Client(ctx)
	var re *distributed.RefusedError
	if !errors.As(err, &re) {
		t.Fatalf("connect: %v, want a refusal", err)
	}
	return err.Error(), []string{"distributed_test.extra", info.Workers[0].Address}
}

// faultCluster is a cluster of worker processes with an archive of its
// own, which knows every worker that joined.
type faultCluster struct {
	lc      *distributed.LocalCluster
	c       *distributed.Client
	archive string
	ctx     context.Context
	cancel  context.CancelFunc

	mu      sync.Mutex
	workers map[string]bool      // every worker that joined
	running map[graph.Key]string // where each task was last sent to run
}

func newFaultCluster(t *testing.T, opts distributed.LocalClusterOptions) *faultCluster {
	t.Helper()
	f := &faultCluster{archive: t.TempDir(), workers: map[string]bool{}, running: map[graph.Key]string{}}
	opts.Archive = f.archive
	f.lc, f.c = processCluster(t, opts)
	f.ctx, f.cancel = context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(f.cancel)
	sub := f.lc.Scheduler().Events().Subscribe(func(evs []diagnostics.Event) {
		f.mu.Lock()
		defer f.mu.Unlock()
		for _, e := range evs {
			switch {
			case e.Kind == diagnostics.WorkerAdded:
				f.workers[e.Worker] = true
			case e.Kind == diagnostics.TaskTransition && e.To == diagnostics.StateProcessing:
				f.running[e.Key] = e.Worker
			}
		}
	})
	t.Cleanup(sub.Close)
	info, err := f.c.Info(f.ctx)
	if err != nil {
		t.Fatal(err)
	}
	f.mu.Lock()
	for _, w := range info.Workers {
		f.workers[w.Address] = true
	}
	f.mu.Unlock()
	return f
}

// runningOn waits until key runs and returns its worker.
func (f *faultCluster) runningOn(t *testing.T, key graph.Key) string {
	t.Helper()
	var w string
	eventually(t, "the task runs", func() bool {
		f.mu.Lock()
		defer f.mu.Unlock()
		w = f.running[key]
		return w != ""
	})
	return w
}

// process returns the process of a worker.
func (f *faultCluster) process(t *testing.T, worker string) *os.Process {
	t.Helper()
	info, err := f.c.Info(f.ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range info.Workers {
		if w.Address == worker && w.PID > 0 {
			p, err := os.FindProcess(w.PID)
			if err != nil {
				t.Fatal(err)
			}
			return p
		}
	}
	t.Fatalf("no process for worker %s among %+v", worker, info.Workers)
	return nil
}

// waitLog waits for the first record of the scheduler's log that match
// says it is.
func (f *faultCluster) waitLog(t *testing.T, match func(distributed.LogRecord) bool) distributed.LogRecord {
	t.Helper()
	var found distributed.LogRecord
	eventually(t, "the scheduler's warning", func() bool {
		logs, err := f.c.SchedulerLogs(f.ctx, 0)
		if err != nil {
			return false
		}
		i := slices.IndexFunc(logs, match)
		if i >= 0 {
			found = logs[i]
		}
		return i >= 0
	})
	return found
}

// checkArchive closes the cluster and reads the archive: every worker
// that joined has log records there.
func (f *faultCluster) checkArchive(t *testing.T) {
	t.Helper()
	id := f.lc.Scheduler().ID()
	f.cancel()
	if err := f.lc.Close(); err != nil {
		t.Logf("close: %v", err)
	}
	logged := map[string]int{}
	for _, row := range archiveRows(readArchive(t, f.archive, archive.TableLogs, id, "process", "worker")) {
		if row[0] == archive.ProcessWorker {
			logged[row[1]]++
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	for w := range f.workers {
		if logged[w] == 0 {
			t.Errorf("no log of worker %s in the archive (logs of %v)", w, logged)
		}
	}
}
