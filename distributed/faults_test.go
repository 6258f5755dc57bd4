package distributed_test

import (
	"context"

	"errors"
	"fmt"
	"github.com/apache/arrow-go/v18/arrow"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/shoal-data/shoal/distributed"
	"github.com/shoal-data/shoal/distributed/server"
	"github.com/shoal-data/shoal/distributed/worker"
	"github.com/shoal-data/shoal/graph"
	"github.com/shoal-data/shoal/scheduler"
)

var (
	// exit ends the process that runs it with the exit code x, saying so
	// on its standard error just before.
	exit = graph.MustRegisterFunc("distributed_test.exit", func(_ context.Context, x int) (int, error) {
		fmt.Fprintf(os.Stderr, "exiting with code %d\n", x)
		os.Exit(x)
		return 0, nil
	})
	// hog allocates mb megabytes and touches them, then waits to be
	// killed (or cancelled).
	hog = graph.MustRegisterFunc("distributed_test.hog", func(ctx context.Context, mb int) (int, error) {
		var keep [][]byte
		for range mb {
			b := make([]byte, 1<<20)
			for i := range b {
				b[i] = 1
			}
			keep = append(keep, b)
		}
		<-ctx.Done()
		return len(keep), ctx.Err()
	})
)

// TestKilledWorkerProcesses runs a task that kills every worker that runs
// it: with the nanny restarting them, it fails after three deaths with an
// error that names the task, the workers and the exit code.
func TestKilledWorkerProcesses(t *testing.T) {
	lc, c := processCluster(t, distributed.LocalClusterOptions{Nanny: true, ThreadsPerWorker: 1})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	_, err := graph.Compute[int](ctx, c, exit.Call(3))
	var kw *scheduler.KilledWorkerError
	if !errors.As(err, &kw) {
		t.Fatalf("compute: %v, want a KilledWorkerError", err)
	}
	if len(kw.Workers) != 3 || len(kw.Causes) != 3 {
		t.Fatalf("killed workers %v, causes %q; want 3 of each", kw.Workers, kw.Causes)
	}
	for i, cause := range kw.Causes {
		if !strings.Contains(cause, "exit code 3") {
			t.Errorf("cause %d: %q, want exit code 3", i, cause)
		}
	}
	if !strings.Contains(err.Error(), "exit code 3") || !strings.Contains(err.Error(), string(kw.Key)) {
		t.Errorf("message %q does not name the task and the cause", err)
	}
	// The nanny restarted them: the cluster is whole and works.
	if err := lc.Scheduler().WaitForWorkers(ctx, 2); err != nil {
		t.Fatal(err)
	}
	if got, err := graph.Compute[int](ctx, c, double.Call(21)); err != nil || got != 42 {
		t.Fatalf("after the restarts: %v, %v", got, err)
	}
	// The dead workers' last log lines are still there.
	logs, err := c.WorkerLogs(ctx, 0, kw.Workers...)
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range kw.Workers {
		l, ok := logs[w]
		if !ok || !l.Gone || len(l.Records) == 0 {
			t.Errorf("worker %s: logs %+v, want its last records, gone", w, l)
			continue
		}
		connected, last := false, false
		for _, r := range l.Records {
			connected = connected || strings.Contains(r.Message, "connected to the scheduler")
			last = last || r.Message == "exiting with code 3"
		}
		if !connected || !last {
			t.Errorf("worker %s: no 'connected' record, or not its last line, among %v", w, l.Records)
		}
	}
	// The scheduler logged why they were removed.
	slogs, err := c.SchedulerLogs(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	lost := 0
	for _, r := range slogs {
		if r.Message == "worker lost" && strings.Contains(r.Attrs["reason"], "exit code 3") {
			lost++
		}
	}
	if lost < 3 {
		t.Errorf("%d 'worker lost' records with the exit code, want 3", lost)
	}
}

// TestNannyTerminatesOnMemory runs a task that uses more memory than the
// worker's terminate threshold: the nanny kills the worker each time, and
// the task fails naming the memory as the cause.
func TestNannyTerminatesOnMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("allocates memory in worker processes")
	}
	_, c := processCluster(t, distributed.LocalClusterOptions{Nanny: true, ThreadsPerWorker: 1, Workers: 1,
		MemoryLimit: 96 << 20, PauseFraction: -1})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	_, err := graph.Compute[int](ctx, c, hog.Call(128))
	var kw *scheduler.KilledWorkerError
	if !errors.As(err, &kw) {
		t.Fatalf("compute: %v, want a KilledWorkerError", err)
	}
	last := kw.Causes[len(kw.Causes)-1]
	if !strings.Contains(last, "killed by the nanny") || !strings.Contains(last, "above the terminate threshold") ||
		!strings.Contains(last, "91.20 MiB (0.95 of the 96.00 MiB limit)") {
		t.Errorf("cause %q, want the memory, the threshold and the limit", last)
	}
}

// TestWorkerPausesOnMemory gives a worker a limit its process is already
// above the pause threshold of: it starts no task, says why in its logs,
// and the scheduler reports it paused.
func TestWorkerPausesOnMemory(t *testing.T) {
	_, c := processCluster(t, distributed.LocalClusterOptions{Workers: 1, MemoryLimit: 4 << 20,
		TerminateFraction: -1})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	eventually(t, "the worker is paused", func() bool {
		info, err := c.Info(ctx)
		return err == nil && len(info.Workers) == 1 && info.Workers[0].State == "paused"
	})
	f, err := c.SubmitCall(ctx, double.Name(), []any{1})
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, "the scheduler has the task", func() bool {
		info, err := c.Info(ctx)
		n := 0
		for _, v := range info.Tasks {
			n += v
		}
		return err == nil && n == 1
	})
	logs, err := c.WorkerLogs(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, l := range logs {
		for _, r := range l.Records {
			if strings.HasPrefix(r.Message, "pausing: process memory") && strings.Contains(r.Message,
				"above the pause threshold 3.20 MiB (0.80 of the 4.00 MiB limit)") && r.Attrs["process_memory"] != "" {
				found = true
			}
		}
	}
	if !found {
		t.Errorf("no pause record with the numbers in %v", logs)
	}
	// Not run: cancelling it fails it (a computed value would have been
	// reported long before).
	c.Cancel(f)
	<-f.Done()
	if !errors.Is(f.Err(), context.Canceled) {
		t.Errorf("future of a task a paused worker must not run: %v, want cancelled", f.Err())
	}
}

// TestNannyRestartsKilledWorker kills a worker process with SIGKILL: the
// nanny starts a new one, which joins, and the cluster computes as before.
func TestNannyRestartsKilledWorker(t *testing.T) {
	dir := t.TempDir()
	lc, c := processCluster(t, distributed.LocalClusterOptions{Nanny: true, LocalDir: dir})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	n := lc.Nannies()[0]
	starts, restarted := n.Starts()
	old := n.Process()
	if err := old.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	select {
	case <-restarted:
	case <-ctx.Done():
		t.Fatal("the nanny did not restart the worker")
	}
	if now, _ := n.Starts(); now != starts+1 || n.Process().Pid == old.Pid {
		t.Fatalf("starts %d -> %d, pid %d -> %d", starts, now, old.Pid, n.Process().Pid)
	}
	// What the killed process left of its directory is gone.
	if left, _ := filepath.Glob(filepath.Join(dir, worker.DirPattern(old.Pid))); len(left) != 0 {
		t.Errorf("the killed worker's directory is left: %v", left)
	}
	eventually(t, "the restarted worker joined", func() bool {
		info, err := c.Info(ctx)
		if err != nil || len(info.Workers) != 2 {
			return false
		}
		for _, w := range info.Workers {
			if w.PID == n.Process().Pid {
				return true
			}
		}
		return false
	})
	var parts []any
	want := 0
	for i := range 40 {
		parts = append(parts, double.Call(i))
		want += 2 * i
	}
	if got, err := graph.Compute[int](ctx, c, sum.Call(graph.List(parts...))); err != nil || got != want {
		t.Fatalf("after the restart: %v, %v", got, err)
	}
}

// TestHungWorkerProcesses stops a worker process (SIGSTOP): its connection
// stays open but its heartbeats stop, and the scheduler removes it after
// the heartbeat timeout and finishes the computation on the other.
func TestHungWorkerProcesses(t *testing.T) {
	lc, c := processCluster(t, distributed.LocalClusterOptions{HeartbeatInterval: 50 * time.Millisecond,
		Scheduler: server.Config{HeartbeatTimeout: 500 * time.Millisecond}})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	victim := lc.WorkerProcesses()[0]
	if err := victim.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	defer victim.Signal(syscall.SIGCONT)
	var parts []any
	want := 0
	for i := range 30 {
		parts = append(parts, slowDouble.Call(i))
		want += 2 * i
	}
	got, err := graph.Compute[int](ctx, c, sum.Call(graph.List(parts...)))
	if err != nil || got != want {
		t.Fatalf("compute with a hung worker: %v, %v", got, err)
	}
	logs, err := c.SchedulerLogs(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, r := range logs {
		found = found || (r.Message == "worker silent for too long; removing it" && r.Attrs["timeout"] == "500ms")
	}
	if !found {
		t.Errorf("no record of the silent worker's removal in %v", logs)
	}
	victim.Signal(syscall.SIGCONT)
}

// sleepAfter waits 50ms, then returns its input: a task long enough to be
// worth moving.
var sleepAfter = graph.MustRegisterFunc("distributed_test.sleep_after", func(ctx context.Context, x int) (int, error) {
	select {
	case <-time.After(50 * time.Millisecond):
		return x, nil
	case <-ctx.Done():
		return 0, ctx.Err()
	}
})

// TestWorkStealingProcesses puts five slow tasks whose input is on one
// worker: locality sends four there and one to the other, which, once
// idle, steals waiting ones.
func TestWorkStealingProcesses(t *testing.T) {
	_, c := processCluster(t, distributed.LocalClusterOptions{ThreadsPerWorker: 1})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	info, err := c.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	a, b := info.Workers[0].Address, info.Workers[1].Address
	// A large input on a: locality prefers a for its dependents.
	in, err := c.SubmitCall(ctx, makeTable.Name(), []any{1}, distributed.Workers(a))
	if err != nil {
		t.Fatal(err)
	}
	rows, err := c.SubmitCall(ctx, countRows.Name(), []any{in}, distributed.Workers(a))
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Wait(ctx, rows); err != nil || rows.Err() != nil {
		t.Fatal(err, rows.Err())
	}
	var ds []graph.Delayed
	for i := range 5 {
		ds = append(ds, sleepAfter.Call(sum.Call(graph.List(i, countRowsInt.Call(in.Delayed())))))
	}
	fs, err := c.Persist(ctx, ds...)
	if err != nil {
		t.Fatal(err)
	}
	vals, err := c.Gather(ctx, fs...)
	if err != nil {
		t.Fatal(err)
	}
	onB := 0
	for i, f := range fs {
		if vals[i] != i+1<<20/32 {
			t.Errorf("value %d: %v", i, vals[i])
		}
		for _, w := range f.Workers() {
			if w == b {
				onB++
			}
		}
	}
	if onB < 2 {
		t.Errorf("%d of 5 tasks ran on the idle worker, want it to steal at least one", onB)
	}
}

// countRowsInt returns the rows of a table as an int.
var countRowsInt = graph.MustRegisterFunc("distributed_test.count_rows_int", func(_ context.Context, t arrow.Table) (int, error) {
	return int(t.NumRows()), nil
})

// TestNoWorkersLeft runs a task that kills every worker that runs it, on
// workers without a nanny: when the last one is dead, Compute fails after
// the scheduler's NoWorkersTimeout, saying there is no worker and why the
// last ones left, instead of waiting for the caller's deadline.
func TestNoWorkersLeft(t *testing.T) {
	_, c := processCluster(t, distributed.LocalClusterOptions{ThreadsPerWorker: 1,
		Scheduler: server.Config{NoWorkersTimeout: 2 * time.Second}})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	start := time.Now()
	_, err := graph.Compute[int](ctx, c, exit.Call(3))
	var nw *scheduler.NoWorkersError
	if !errors.As(err, &nw) || ctx.Err() != nil {
		t.Fatalf("compute: %v, want a NoWorkersError before the deadline", err)
	}
	if len(nw.Workers) != 2 || len(nw.Causes) != 2 || !strings.Contains(nw.Causes[1], "exit code 3") ||
		!strings.Contains(err.Error(), "exit code 3") {
		t.Errorf("error %q names workers %v for %q", err, nw.Workers, nw.Causes)
	}
	t.Logf("failed after %v: %v", time.Since(start).Round(time.Millisecond), err)
}

// TestWideFanIn sums 20,000 values computed on two workers: the worker
// that runs the sum fetches its inputs a few at a time, keeps its
// heartbeats, and stays in the cluster.
func TestWideFanIn(t *testing.T) {
	lc, c := newCluster(t, distributed.LocalClusterOptions{Workers: 2, ThreadsPerWorker: 1, InProcess: true,
		HeartbeatInterval: 200 * time.Millisecond, Scheduler: server.Config{HeartbeatTimeout: 5 * time.Second}})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	const n = 20_000
	parts := make([]any, n)
	want := 0
	for i := range n {
		parts[i] = double.Call(i)
		want += 2 * i
	}
	got, err := graph.Compute[int](ctx, c, sum.Call(graph.List(parts...)))
	if err != nil || got != want {
		t.Fatalf("sum %d, %v; want %d", got, err, want)
	}
	logs, err := c.SchedulerLogs(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range logs {
		if strings.Contains(r.Message, "worker lost") || strings.Contains(r.Message, "silent") {
			t.Errorf("the scheduler said: %s %v", r.Message, r.Attrs)
		}
	}
	if err := lc.Scheduler().WaitForWorkers(ctx, 2); err != nil {
		t.Fatal(err)
	}
}

// TestGatherFromHungWorker computes values on three worker processes,
// stops one (SIGSTOP), and gathers them: the scheduler removes the silent
// worker and computes what it held again elsewhere, and the gather
// abandons its fetches from the stopped worker at once for the new
// holders, instead of hanging on them.
func TestGatherFromHungWorker(t *testing.T) {
	lc, c := processCluster(t, distributed.LocalClusterOptions{Workers: 3, ThreadsPerWorker: 1,
		HeartbeatInterval: 50 * time.Millisecond, Scheduler: server.Config{HeartbeatTimeout: 500 * time.Millisecond}})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	inputs := make([]any, 60)
	for i := range inputs {
		inputs[i] = i
	}
	fs, err := c.Map(ctx, double.Name(), inputs)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Wait(ctx, fs...); err != nil {
		t.Fatal(err)
	}
	victim := lc.WorkerProcesses()[0]
	if err := victim.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	defer victim.Signal(syscall.SIGCONT)
	// The gather must end well before a fetch from a stopped process
	// would give up by itself.
	gctx, gcancel := context.WithTimeout(ctx, 15*time.Second)
	defer gcancel()
	vs, err := c.Gather(gctx, fs...)
	if err != nil {
		t.Fatalf("gather with a stopped worker: %v", err)
	}
	for i, v := range vs {
		if v != 2*i {
			t.Fatalf("value %d is %v", i, v)
		}
	}
	// Woken up, the removed worker joins again, afresh, and works.
	victim.Signal(syscall.SIGCONT)
	eventually(t, "the woken worker joined again", func() bool {
		info, err := c.Info(ctx)
		return err == nil && len(info.Workers) == 3
	})
	var parts []any
	for i := range 30 {
		parts = append(parts, double.Call(100+i))
	}
	if got, err := graph.Compute[int](ctx, c, sum.Call(graph.List(parts...))); err != nil || got != 2*(30*100+435) {
		t.Fatalf("after the worker joined again: %v, %v", got, err)
	}
}

// TestNannyStopsWithItsScheduler shuts a cluster's scheduler down, which
// tells its workers to stop: their nannies let them stop instead of
// starting them again.
func TestNannyStopsWithItsScheduler(t *testing.T) {
	lc, _ := processCluster(t, distributed.LocalClusterOptions{Nanny: true, Workers: 1})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	n := lc.Nannies()[0]
	if err := lc.Scheduler().Close(ctx); err != nil {
		t.Fatal(err)
	}
	select {
	case <-n.Done():
	case <-ctx.Done():
		t.Fatal("the nanny goes on after its worker stopped")
	}
	if starts, _ := n.Starts(); starts != 1 || n.Err() != nil {
		t.Errorf("%d starts, error %v; want the one start, and no error", starts, n.Err())
	}
}
