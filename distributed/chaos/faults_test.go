//go:build chaos

package chaos_test

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math/rand"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/shoal-data/shoal/dataframe"
	"github.com/shoal-data/shoal/distributed"
	"github.com/shoal-data/shoal/distributed/security"
	"github.com/shoal-data/shoal/distributed/server"
	"github.com/shoal-data/shoal/distributed/worker"
	"github.com/shoal-data/shoal/graph"
	"github.com/shoal-data/shoal/internal/dirlock"
	"github.com/shoal-data/shoal/internal/testutil"
	"github.com/shoal-data/shoal/local"
	"github.com/shoal-data/shoal/scheduler"
)

// The errors documented for each fault.

// workerDeath: a task's workers died too often (KilledWorkerError), there
// was no worker left for too long (NoWorkersError), or what a task's
// inputs left on a dead worker was lost too often (LostInputsError).
func workerDeath(err error) bool {
	var kw *scheduler.KilledWorkerError
	var nw *scheduler.NoWorkersError
	var li *graph.LostInputsError
	return errors.As(err, &kw) || errors.As(err, &nw) || errors.As(err, &li)
}

// diskFull: a shuffle or a spill could not write its file for want of
// space.
func diskFull(err error) bool {
	var se *dataframe.ShuffleError
	var sp *local.SpillError
	return errors.Is(err, syscall.ENOSPC) && (errors.As(err, &se) || errors.As(err, &sp))
}

// schedulerLost: the client lost its scheduler.
func schedulerLost(err error) bool { return errors.Is(err, distributed.ErrSchedulerLost) }

// noError: the fault must not fail a job.
func noError(error) bool { return false }

// every calls inject every period until the fault's duration has passed
// since start, or stop is called; stop waits for the last call.
func (r *run) every(period time.Duration, start time.Time, inject func(rng *rand.Rand)) (stop func()) {
	rng := rand.New(rand.NewSource(*seedFlag))
	end := start.Add(duration(r.t))
	quit := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(period)
		defer tick.Stop()
		for {
			select {
			case <-quit:
				return
			case now := <-tick.C:
				if now.After(end) {
					return
				}
				inject(rng)
				r.inject()
			}
		}
	}()
	var once sync.Once
	return func() {
		once.Do(func() { close(quit) })
		<-done
	}
}

// TestSIGKILL kills a random worker process with SIGKILL every 3 seconds
// while jobs run; the nannies start new ones.
func TestSIGKILL(t *testing.T) {
	d := data(t, 100_000, 8)
	r := newRun(t, workerDeath)
	lc := r.cluster(distributed.LocalClusterOptions{Workers: 3, ThreadsPerWorker: 1, Nanny: true})
	c := r.client(lc)
	start := time.Now()
	stop := r.every(3*time.Second, start, func(rng *rand.Rand) {
		ps := lc.WorkerProcesses()
		p := ps[rng.Intn(len(ps))]
		p.Signal(syscall.SIGKILL) // it may be dead already, the nanny starting it again
	})
	r.loop(start, func() graph.Executor { return c }, d)
	stop()
	waitWorkers(t, lc, 3)
	r.finish()
}

// waitWorkers checks that the cluster has n workers again, within 30
// seconds: the fault left it whole.
func waitWorkers(t *testing.T, lc *distributed.LocalCluster, n int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := lc.Scheduler().WaitForWorkers(ctx, n); err != nil {
		t.Errorf("the cluster did not have its %d workers again: %v", n, err)
	}
}

// TestSIGSTOP stops one worker process (SIGSTOP) for a minute, or the
// whole loop when it is shorter, then lets it go on (SIGCONT): the
// scheduler removes the silent worker, and it joins again when woken.
func TestSIGSTOP(t *testing.T) {
	d := data(t, 100_000, 8)
	r := newRun(t, noError)
	lc := r.cluster(distributed.LocalClusterOptions{Workers: 3, ThreadsPerWorker: 1, Nanny: true,
		Scheduler: server.Config{HeartbeatTimeout: 3 * time.Second}})
	c := r.client(lc)
	start := time.Now()
	rng := rand.New(rand.NewSource(*seedFlag))
	ps := lc.WorkerProcesses()
	victim := ps[rng.Intn(len(ps))]
	if err := victim.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	r.inject()
	wake := time.AfterFunc(min(time.Minute, duration(t)), func() { victim.Signal(syscall.SIGCONT) })
	t.Cleanup(func() { wake.Stop(); victim.Signal(syscall.SIGCONT) })
	r.loop(start, func() graph.Executor { return c }, d)
	wake.Stop()
	victim.Signal(syscall.SIGCONT)
	waitWorkers(t, lc, 3)
	r.finish()
}

// TestFullDisk gives the workers a directory on a tmpfs of 4 MiB, which
// the shuffle files of the larger dataset (and values spilled above a
// low target) fill, while those of the smaller one fit: the jobs on the
// larger fail with the disk-full error, and space comes back for the
// next.
func TestFullDisk(t *testing.T) {
	small, large := data(t, 10_000, 4), data(t, 200_000, 8)
	dir := testutil.Tmpfs(t, 4<<20)
	r := newRun(t, diskFull)
	lc := r.cluster(distributed.LocalClusterOptions{Workers: 2, ThreadsPerWorker: 1, Nanny: true, LocalDir: dir,
		MemoryLimit: 600 << 20, TargetFraction: 0.02})
	c := r.client(lc)
	r.loop(time.Now(), func() graph.Executor { return c }, small, large)
	// Every job has ended: what failed shuffles and spills wrote is gone,
	// or the disk would stay full for the jobs that come next. (A split
	// still running when its job failed and the shuffle's directory was
	// removed left its file here, until splits learnt to remove what
	// they write after that.)
	eventually(t, 10*time.Second, "the shuffle and spill files are gone", func() string {
		return filesIn(dir, "shoal-tls-")
	})
	r.finish() // before the tmpfs goes
}

// filesIn lists the files under dir, but those under a directory whose
// name starts with skip, with their sizes and modification times, or ""
// when there is none.
func filesIn(dir, skip string) string {
	var b strings.Builder
	n := 0
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		switch {
		case err != nil:
			return nil
		case d.IsDir() && strings.HasPrefix(d.Name(), skip):
			return filepath.SkipDir
		case d.IsDir(), d.Name() == dirlock.Name: // a running worker's lock
			return nil
		}
		if n++; n <= 20 {
			rel, _ := filepath.Rel(dir, p)
			if info, err := d.Info(); err == nil {
				fmt.Fprintf(&b, "\n  %s: %d bytes, written %s", rel, info.Size(), info.ModTime().Format(time.TimeOnly))
			}
		}
		return nil
	})
	if n == 0 {
		return ""
	}
	return fmt.Sprintf("%d files:%s", n, b.String())
}

// TestMemoryLimits runs the jobs on workers limited to 250 and 600 MiB
// while, every 2 seconds, a task allocates 30% to 90% of the limit on a
// worker and holds it for 2 seconds: the workers spill, pause, and are
// killed by their nannies above 95% of it.
func TestMemoryLimits(t *testing.T) {
	for _, limit := range []int64{250 << 20, 600 << 20} {
		t.Run(fmt.Sprintf("%dMiB", limit>>20), func(t *testing.T) {
			d := data(t, 400_000, 8)
			r := newRun(t, workerDeath)
			lc := r.cluster(distributed.LocalClusterOptions{Workers: 2, ThreadsPerWorker: 2, Nanny: true,
				MemoryLimit: limit})
			c := r.client(lc)
			start := time.Now()
			var wg sync.WaitGroup
			seq := 0
			stop := r.every(2*time.Second, start, func(rng *rand.Rand) {
				mb := int(float64(limit>>20) * (0.3 + 0.6*rng.Float64()))
				seq++
				d := ballast.Call([]int{mb, 2000, seq})
				wg.Go(func() { // what becomes of it does not matter: the jobs count
					ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
					defer cancel()
					graph.Compute[int](ctx, c, d)
				})
			})
			r.loop(start, func() graph.Executor { return c }, d)
			stop()
			wg.Wait()
			logMemoryStory(t, c)
			r.finish()
		})
	}
}

// TestSchedulerRestart kills the scheduler process (SIGKILL) every 5
// seconds and starts it again on the same address: the workers join the
// new one, the jobs a client had running fail with ErrSchedulerLost, and
// the loop connects a new client.
func TestSchedulerRestart(t *testing.T) {
	d := data(t, 100_000, 8)
	r := newRun(t, schedulerLost)
	dir := t.TempDir()
	r.watchDir(dir)
	addr := freeAddress(t)
	sp := &schedulerProcess{t: t, addr: addr}
	sp.start(r)
	r.onFinish(sp.stop)
	shared := filepath.Join(dir, "shared")
	if err := os.Mkdir(shared, 0o755); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		r.worker(worker.Config{Scheduler: addr, Threads: 1, LocalDir: dir, ScratchDir: shared,
			HeartbeatInterval: heartbeat, DialOptions: []grpc.DialOption{grpc.WithTransportCredentials(insecure.NewCredentials())}})
	}
	var mu sync.Mutex
	c := sp.connect(r)
	start := time.Now()
	stop := r.every(5*time.Second, start, func(*rand.Rand) {
		mu.Lock()
		defer mu.Unlock()
		sp.kill()
		sp.start(r)
	})
	end := start.Add(duration(t))
	for i := 0; time.Now().Before(end); i++ {
		err := r.job(c, jobs[i%len(jobs)], d)
		if errors.Is(err, distributed.ErrSchedulerLost) {
			mu.Lock()
			c = sp.connect(r)
			mu.Unlock()
		}
	}
	stop()
	r.finish()
}

// schedulerProcess is a scheduler in a process of its own (this test
// binary, see schedulerEnv), to kill.
type schedulerProcess struct {
	t    *testing.T
	addr string
	cmd  *exec.Cmd
}

func (s *schedulerProcess) start(r *run) {
	exe, err := os.Executable()
	if err != nil {
		s.t.Fatal(err)
	}
	cmd := exec.Command(exe, "-test.run=^$")
	cmd.Env = append(os.Environ(), schedulerEnv+"="+s.addr)
	if _, err := cmd.StdinPipe(); err != nil { // closed when this process ends: the scheduler stops
		s.t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		s.t.Fatal(err)
	}
	s.cmd = cmd
	r.mu.Lock()
	r.pids[cmd.Process.Pid] = true
	r.mu.Unlock()
}

func (s *schedulerProcess) kill() {
	if s.cmd == nil {
		return
	}
	s.cmd.Process.Kill()
	s.cmd.Wait()
	s.cmd = nil
}

// stop ends the scheduler as a user would (SIGTERM), so that it asks
// the workers to stop.
func (s *schedulerProcess) stop() {
	if s.cmd == nil {
		return
	}
	s.cmd.Process.Signal(syscall.SIGTERM)
	s.cmd.Wait()
	s.cmd = nil
}

// connect connects a client, polling until the scheduler listens.
func (s *schedulerProcess) connect(r *run) *distributed.Client {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for {
		cctx, ccancel := context.WithTimeout(ctx, 2*time.Second)
		c, err := distributed.Connect(cctx, s.addr, distributed.WithSecurity(security.Config{Insecure: true}))
		ccancel()
		if err == nil {
			r.onFinish(func() { c.Close() })
			return c
		}
		select {
		case <-ctx.Done():
			s.t.Fatalf("connect to the scheduler at %s: %v", s.addr, err)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// worker runs an in-process worker until finish.
func (r *run) worker(cfg worker.Config) {
	r.t.Helper()
	w, err := worker.New(cfg)
	if err != nil {
		r.t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	r.onFinish(func() {
		cancel()
		<-done
		if err := w.Close(); err != nil {
			r.t.Errorf("close worker: %v", err)
		}
	})
}

func freeAddress(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// TestSharedHost runs jobs at once on two local executors and on two
// clients of a cluster, all four making their directories in one.
func TestSharedHost(t *testing.T) {
	d := data(t, 100_000, 8)
	r := newRun(t, noError)
	dir := t.TempDir()
	lc := r.cluster(distributed.LocalClusterOptions{Workers: 2, ThreadsPerWorker: 1, Nanny: true, LocalDir: dir})
	execs := []graph.Executor{r.client(lc), r.client(lc)}
	for range 2 {
		ex := local.New(local.WithLocalDir(dir), local.WithThreads(1), local.WithMemoryLimit(64<<20))
		r.onFinish(func() { ex.Close() })
		execs = append(execs, ex)
	}
	start := time.Now()
	var wg sync.WaitGroup
	for _, ex := range execs {
		wg.Go(func() { r.loop(start, func() graph.Executor { return ex }, d) })
	}
	wg.Wait()
	r.finish()
}

// TestFanIn sums 200,000 values computed on the workers, in one task.
func TestFanIn(t *testing.T) {
	r := newRun(t, noError)
	lc := r.cluster(distributed.LocalClusterOptions{Workers: 2, ThreadsPerWorker: 1, Nanny: true})
	c := r.client(lc)
	const n = 200_000
	fanIn := job{name: fmt.Sprintf("fan-in of %d tasks", n), deadline: 5 * time.Minute,
		run: func(ctx context.Context, exec graph.Executor, _ *dataset) (string, error) {
			parts := make([]any, n)
			want := 0
			for i := range n {
				parts[i] = double.Call(i)
				want += 2 * i
			}
			got, err := graph.Compute[int](ctx, exec, sum.Call(graph.List(parts...)))
			if err != nil || got == want {
				return "", err
			}
			return fmt.Sprintf("sum %d, want %d", got, want), nil
		}}
	start := time.Now()
	for first := true; first || time.Since(start) < duration(t); first = false {
		r.job(c, fanIn, nil)
	}
	r.finish()
}

// TestConcurrentClients runs jobs from 20 clients of one cluster at once.
func TestConcurrentClients(t *testing.T) {
	d := data(t, 20_000, 4)
	r := newRun(t, noError)
	lc := r.cluster(distributed.LocalClusterOptions{Workers: 2, ThreadsPerWorker: 1, Nanny: true})
	start := time.Now()
	var wg sync.WaitGroup
	for range 20 {
		c := r.client(lc)
		wg.Go(func() { r.loop(start, func() graph.Executor { return c }, d) })
	}
	wg.Wait()
	r.finish()
}

// logMemoryStory logs how often the workers paused for memory and how
// often their nannies killed them for it, to show the limit bit.
func logMemoryStory(t *testing.T, c *distributed.Client) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	pauses, kills := 0, 0
	wlogs, err := c.WorkerLogs(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range wlogs {
		for _, rec := range l.Records {
			if strings.HasPrefix(rec.Message, "pausing:") {
				pauses++
			}
		}
	}
	slogs, err := c.SchedulerLogs(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, rec := range slogs {
		if rec.Message == "worker lost" && strings.Contains(rec.Attrs["reason"], "memory") {
			kills++
		}
	}
	t.Logf("the workers paused %d times for memory; %d were lost for it; %d workers in all", pauses, kills, len(wlogs))
}
