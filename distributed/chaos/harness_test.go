//go:build chaos

package chaos_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"slices"
	"sync"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/shoal-data/shoal/distributed"
	"github.com/shoal-data/shoal/graph"
)

// jobDeadline bounds every job: one still running after it has hung.
const jobDeadline = 2 * time.Minute

// heapSlack is how far above its size at the start of a fault the Go
// heap of the test process may be after it, once collected: "near" its
// start. The datasets and their answers are made before the start.
const heapSlack = 64 << 20

// tally counts the jobs of one fault by outcome.
type tally struct {
	Fault      string  `json:"fault"`
	Seconds    float64 `json:"seconds"`
	Jobs       int     `json:"jobs"`
	Exact      int     `json:"exact"`
	RightError int     `json:"right_error"`
	OtherError int     `json:"other_error"`
	Wrong      int     `json:"wrong"`
	Hung       int     `json:"hung"`
	// Injected counts the faults injected (workers killed or stopped,
	// schedulers killed).
	Injected int `json:"injected"`
}

// run is one fault's run: its counts, and what it must leave as it found.
type run struct {
	t      *testing.T
	start  time.Time
	fds    int
	heap   uint64
	dirs   []string // where executors and workers make their directories
	right  func(error) bool
	closes []func()

	mu    sync.Mutex
	tally tally
	pids  map[int]bool // every worker process seen
}

// newRun starts counting a fault's jobs. right says whether a job's
// error is the one documented for the fault. Call it after making the
// datasets the fault uses, and end with finish.
func newRun(t *testing.T, right func(error) bool) *run {
	r := &run{t: t, start: time.Now(), right: right, pids: map[int]bool{}, tally: tally{Fault: t.Name()}}
	r.heap = heapInUse()
	r.fds = openFDs(t)
	t.Cleanup(r.close) // when the test fails before finish
	return r
}

// onFinish adds what finish closes before its checks, last added first.
func (r *run) onFinish(f func()) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.closes = append(r.closes, f)
}

// close closes what the run started, once, and forgets it, so that the
// heap check sees what the clusters and clients left behind them, not
// the run's references to them.
func (r *run) close() {
	r.mu.Lock()
	closes := r.closes
	r.closes = nil
	r.mu.Unlock()
	for _, f := range slices.Backward(closes) {
		f()
	}
}

// watchDir adds a directory that must hold no executor's or worker's
// directory once the fault ends.
func (r *run) watchDir(dir string) { r.dirs = append(r.dirs, dir) }

// cluster starts a LocalCluster whose worker processes the run watches,
// closed by finish.
func (r *run) cluster(opts distributed.LocalClusterOptions) *distributed.LocalCluster {
	r.t.Helper()
	if opts.LocalDir == "" {
		opts.LocalDir = r.t.TempDir()
	}
	opts.NoDashboard = true
	opts.NoArchive = true
	if opts.HeartbeatInterval == 0 {
		opts.HeartbeatInterval = heartbeat
	}
	r.watchDir(opts.LocalDir)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	lc, err := distributed.NewLocalCluster(ctx, opts)
	if err != nil {
		r.t.Fatal(err)
	}
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() { // poll the worker processes, to see every one the nannies start
		defer close(done)
		tick := time.NewTicker(50 * time.Millisecond)
		defer tick.Stop()
		for {
			r.seeProcesses(lc)
			select {
			case <-stop:
				return
			case <-tick.C:
			}
		}
	}()
	r.onFinish(func() {
		close(stop)
		<-done
		r.seeProcesses(lc)
		if err := lc.Close(); err != nil {
			r.t.Errorf("close the cluster: %v", err)
		}
	})
	return lc
}

func (r *run) seeProcesses(lc *distributed.LocalCluster) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, p := range lc.WorkerProcesses() {
		if p != nil {
			r.pids[p.Pid] = true
		}
	}
}

// client connects a client to lc, closed by finish.
func (r *run) client(lc *distributed.LocalCluster) *distributed.Client {
	r.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c, err := lc.Client(ctx)
	if err != nil {
		r.t.Fatal(err)
	}
	r.onFinish(func() { c.Close() })
	return c
}

// loop runs the jobs on d in turn, with exec, until the fault's duration
// has passed since since, and counts them. exec is called before each
// job, for the executor to use.
func (r *run) loop(since time.Time, exec func() graph.Executor, ds ...*dataset) {
	end := since.Add(duration(r.t))
	for i := 0; time.Now().Before(end); i++ {
		j := jobs[i%len(jobs)]
		d := ds[(i/len(jobs))%len(ds)]
		r.job(exec(), j, d)
	}
}

// job runs one job within its deadline (jobDeadline by default) and
// counts how it ended. It returns the job's error.
func (r *run) job(exec graph.Executor, j job, d *dataset) error {
	deadline := j.deadline
	if deadline == 0 {
		deadline = jobDeadline
	}
	ctx, cancel := context.WithTimeout(context.Background(), deadline)
	defer cancel()
	type result struct {
		diff string
		err  error
	}
	done := make(chan result, 1)
	go func() {
		diff, err := j.run(ctx, exec, d)
		done <- result{diff, err}
	}()
	var res result
	select {
	case res = <-done:
	case <-time.After(deadline + 30*time.Second):
		r.count(func(t *tally) { t.Hung++ })
		r.t.Errorf("%s of %v hung: it did not return 30s after its deadline of %v", j.name, d, deadline)
		return context.DeadlineExceeded
	}
	switch {
	case res.err == nil && res.diff == "":
		r.count(func(t *tally) { t.Exact++ })
	case res.err == nil:
		r.count(func(t *tally) { t.Wrong++ })
		r.t.Errorf("%s of %v: a wrong result:\n%s", j.name, d, res.diff)
	case ctx.Err() != nil:
		r.count(func(t *tally) { t.Hung++ })
		r.t.Errorf("%s of %v hung: past its deadline of %v: %v", j.name, d, deadline, res.err)
	case r.right(res.err):
		r.count(func(t *tally) { t.RightError++ })
		r.t.Logf("%s of %v failed with the fault's error: %v", j.name, d, short(res.err))
	default:
		r.count(func(t *tally) { t.OtherError++ })
		r.t.Errorf("%s of %v failed otherwise: %T: %v", j.name, d, res.err, res.err)
	}
	return res.err
}

// inject counts a fault injected.
func (r *run) inject() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.tally.Injected++
}

func (r *run) count(f func(*tally)) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.tally.Jobs++
	f(&r.tally)
}

// finish closes what the run started, reports its counts and checks
// that nothing leaked.
func (r *run) finish() {
	t := r.t
	t.Helper()
	r.close()
	r.mu.Lock()
	tl := r.tally
	tl.Seconds = time.Since(r.start).Round(time.Second).Seconds()
	pids := r.pids
	r.mu.Unlock()
	t.Logf("%-28s %5s %5s %5s %5s %5s %5s %5s %8s", "fault", "secs", "jobs", "exact", "right", "other", "wrong",
		"hung", "injected")
	t.Logf("%-28s %5.0f %5d %5d %5d %5d %5d %5d %8d", tl.Fault, tl.Seconds, tl.Jobs, tl.Exact, tl.RightError,
		tl.OtherError, tl.Wrong, tl.Hung, tl.Injected)
	report(t, tl)
	if tl.Jobs == 0 {
		t.Errorf("no job ran")
	}

	goleak.VerifyNone(t)
	for pid := range pids {
		if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
			t.Errorf("worker process %d is still there (%v)", pid, err)
		}
	}
	for _, dir := range r.dirs {
		for _, pat := range []string{"shoal-worker-*", "shoal-local-*", "shoal-cluster-*", "shoal-tls-*"} {
			if left, _ := filepath.Glob(filepath.Join(dir, pat)); len(left) > 0 {
				t.Errorf("directories left in %s: %v", dir, left)
			}
		}
	}
	eventually(t, 10*time.Second, "the file descriptors are back to where they were", func() string {
		if n := openFDs(t); n > r.fds {
			return fmt.Sprintf("%d open, %d at the start", n, r.fds)
		}
		return ""
	})
	heapOK := eventually(t, 10*time.Second, "the heap is back near its start", func() string {
		if h := heapInUse(); h > r.heap+heapSlack {
			return fmt.Sprintf("heap %d MiB, %d MiB at the start (at most %d MiB more)", h>>20, r.heap>>20, heapSlack>>20)
		}
		return ""
	})
	if !heapOK {
		heapProfile(t)
	}
}

// heapProfile writes a profile of the heap to $SHOAL_CHAOS_HEAP_PROFILE
// when the heap did not come back, to see what holds it.
func heapProfile(t *testing.T) {
	path := os.Getenv("SHOAL_CHAOS_HEAP_PROFILE")
	if path == "" {
		return
	}
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := pprof.Lookup("heap").WriteTo(f, 0); err != nil {
		t.Error(err)
	}
	t.Logf("heap profile in %s", path)
}

// report appends the counts as a line of JSON to $SHOAL_CHAOS_REPORT.
func report(t *testing.T, tl tally) {
	path := os.Getenv("SHOAL_CHAOS_REPORT")
	if path == "" {
		return
	}
	b, err := json.Marshal(tl)
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.Write(append(b, '\n')); err != nil {
		t.Fatal(err)
	}
}

// eventually polls cond until it returns "" or within passes, when it
// fails the test with what cond said last.
func eventually(t *testing.T, within time.Duration, what string, cond func() string) bool {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		msg := cond()
		if msg == "" {
			return true
		}
		if time.Now().After(deadline) {
			t.Errorf("not so after %v: %s: %s", within, what, msg)
			return false
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func heapInUse() uint64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

func openFDs(t *testing.T) int {
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatalf("count the open files: %v", err)
	}
	return len(ents)
}

// short cuts a long error message for the log.
func short(err error) string {
	s := err.Error()
	if len(s) > 300 {
		s = s[:300] + "..."
	}
	return s
}
