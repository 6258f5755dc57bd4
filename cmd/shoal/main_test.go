package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/shoal-data/shoal/dataframe"
	"github.com/shoal-data/shoal/diagnostics"
	"github.com/shoal-data/shoal/diagnostics/archive"
	"github.com/shoal-data/shoal/distributed"
	"github.com/shoal-data/shoal/distributed/security"
	"github.com/shoal-data/shoal/distributed/server"
	"github.com/shoal-data/shoal/distributed/wire"
	"github.com/shoal-data/shoal/graph"
	"github.com/shoal-data/shoal/internal/otlptest"
	"github.com/shoal-data/shoal/io/parquet"
	"github.com/shoal-data/shoal/io/storage"
	"github.com/shoal-data/shoal/local"
)

// cmdEnv makes the test binary run as the shoal command: the nanny starts
// its worker from os.Executable(), which is the test binary here.
const cmdEnv = "SHOAL_CMD_TEST_RUN"

func TestMain(m *testing.M) {
	if os.Getenv(cmdEnv) != "" {
		os.Exit(run(os.Args[1:], os.Stderr))
	}
	os.Exit(m.Run())
}

func TestHelpAndUsage(t *testing.T) {
	tests := []struct {
		args []string
		code int
		want string
	}{
		{nil, 2, "shoal worker SCHEDULER_ADDR"},
		{[]string{"help"}, 0, "shoal scheduler"},
		{[]string{"help", "worker"}, 0, "-nanny"},
		{[]string{"worker", "--help"}, 0, "-terminate"},
		{[]string{"scheduler", "--help"}, 0, "-metrics-listen"},
		{[]string{"scheduler", "--help"}, 0, "-archive-max-bytes"},
		{[]string{"scheduler", "--insecure", "--addr", "127.0.0.1:0", "--archive-max-bytes", "lots"}, 1,
			"--archive-max-bytes"},
		{[]string{"scheduler", "--help"}, 0, "-otlp-endpoint"},
		{[]string{"scheduler", "--addr", "127.0.0.1:0", "--insecure", "--dashboard-address", "",
			"--otlp-endpoint", "localhost:4318"}, 1, `OTLP endpoint "localhost:4318": want a URL`},
		{[]string{"scheduler", "--addr", "127.0.0.1:0", "--insecure", "--dashboard-address", "",
			"--otlp-endpoint", "http://localhost:4318", "--otlp-protocol", "http/json"}, 1, `OTLP protocol "http/json"`},
		{[]string{"bogus"}, 2, `unknown command "bogus"`},
		{[]string{"worker"}, 2, "Usage: shoal worker"},
		{[]string{"worker", "127.0.0.1:1", "--memory-limit", "lots"}, 1, "--memory-limit"},
		{[]string{"worker", "127.0.0.1:1", "--resources", "GPU"}, 1, "NAME=AMOUNT"},
		{[]string{"help"}, 0, "--insecure"},
		{[]string{"scheduler", "--help"}, 0, "-insecure"},
		{[]string{"worker", "--help"}, 0, "or plaintext asked for with --insecure, on loopback too"},
		// Plaintext only when asked for, on loopback too.
		{[]string{"worker", "10.1.2.3:8786"}, 1, "no TLS certificates given: give --tls-ca, --tls-cert and --tls-key"},
		{[]string{"worker", "127.0.0.1:1"}, 1, "or --insecure to use plaintext connections"},
		{[]string{"worker", "127.0.0.1:1", "--listen", "0.0.0.0:0"}, 1, "no TLS certificates given"},
		{[]string{"scheduler"}, 1, "no TLS certificates given"},
		{[]string{"scheduler", "--addr", ":0"}, 1, "no TLS certificates given"},
		{[]string{"scheduler", "--addr", "127.0.0.1:0", "--token-file", "x"}, 1, "no TLS certificates given"},
		{[]string{"scheduler", "--addr", "127.0.0.1:0", "--tls-ca", "x"}, 1, "needs a CA file"},
		{[]string{"scheduler", "--addr", "127.0.0.1:0", "--insecure", "--tls-ca", "x", "--tls-cert", "y", "--tls-key", "z"},
			1, "both TLS files and Insecure given"},
	}
	for _, tc := range tests {
		var out bytes.Buffer
		if code := run(tc.args, &out); code != tc.code || !strings.Contains(out.String(), tc.want) {
			t.Errorf("shoal %q: exit %d, output %q; want %d and %q", tc.args, code, out.String(), tc.code, tc.want)
		}
	}
}

// nannyCmd is `shoal worker --nanny` running against a scheduler.
type nannyCmd struct {
	cmd     *exec.Cmd
	out     bytes.Buffer
	exited  chan struct{}
	waitErr error
}

// startNanny starts `shoal worker ADDR --nanny --insecure` and stops it
// (SIGTERM) when the test ends.
func startNanny(t *testing.T, scheduler string) *nannyCmd {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	n := &nannyCmd{exited: make(chan struct{})}
	n.cmd = exec.Command(exe, "worker", scheduler, "--nanny", "--insecure", "--threads", "1", "--log-format", "json")
	n.cmd.Env = append(os.Environ(), cmdEnv+"=1")
	n.cmd.Stderr = &n.out
	if err := n.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		n.waitErr = n.cmd.Wait()
		close(n.exited)
	}()
	t.Cleanup(func() {
		n.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-n.exited:
		case <-time.After(20 * time.Second):
			n.cmd.Process.Kill()
			<-n.exited
			t.Errorf("the nanny did not stop on SIGTERM")
		}
		if t.Failed() {
			t.Logf("nanny output:\n%s", n.out.String())
		}
	})
	return n
}

// TestWorkerUnderNanny starts `shoal worker --nanny` against a scheduler,
// kills the worker process and sees the nanny start another one, and the
// scheduler learn why the first ended.
func TestWorkerUnderNanny(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	s, err := server.New(server.Config{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	defer s.Close(ctx)
	n := startNanny(t, s.Address())
	if err := s.WaitForWorkers(ctx, 1); err != nil {
		t.Fatal(err)
	}
	info := s.Info()
	w := info.Workers[0]
	if _, _, err := net.SplitHostPort(w.Nanny); err != nil || int(w.Pid) == n.cmd.Process.Pid {
		t.Fatalf("worker %v: want a child process with a nanny at an address (%v)", w, err)
	}
	if err := syscall.Kill(int(w.Pid), syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	for {
		if err := s.WaitForWorkers(ctx, 1); err != nil {
			t.Fatal(err)
		}
		info := s.Info()
		if len(info.Workers) == 1 && info.Workers[0].Pid != w.Pid {
			break
		}
		select {
		case <-ctx.Done():
			t.Fatal("no new worker")
		case <-n.exited:
			t.Fatalf("the nanny ended: %v", n.waitErr)
		case <-time.After(10 * time.Millisecond): // the old worker may still be listed
		}
	}
	found := false
	for _, r := range s.SchedulerLogs(0) {
		if r.Message == "worker lost" && strings.Contains(r.Attrs["reason"], "signal: killed") {
			found = true
		}
	}
	if !found {
		t.Errorf("the scheduler did not log the cause: %v", s.SchedulerLogs(0))
	}
	// SIGTERM stops the nanny and its worker.
	n.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-n.exited:
		if n.waitErr != nil {
			t.Fatalf("the nanny ended with %v", n.waitErr)
		}
	case <-ctx.Done():
		t.Fatal("the nanny did not stop")
	}
	// Its worker went with it.
	eventually(t, func() bool { return len(s.Info().Workers) == 0 })
	// Its JSON log lines, the worker's among them, name each key once.
	lines := 0
	for _, line := range strings.Split(n.out.String(), "\n") {
		if !strings.HasPrefix(line, "{") {
			continue
		}
		lines++
		if dup := duplicateKeys(t, line); len(dup) > 0 {
			t.Errorf("keys %q twice in %s", dup, line)
		}
	}
	if lines == 0 {
		t.Errorf("no JSON log lines from the nanny")
	}
}

// duplicateKeys returns the keys that the JSON object line has more than
// once at its top level.
func duplicateKeys(t *testing.T, line string) []string {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(line))
	if _, err := dec.Token(); err != nil {
		t.Fatalf("%s: %v", line, err)
	}
	seen := map[string]bool{}
	var dup []string
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			t.Fatalf("%s: %v", line, err)
		}
		if seen[k.(string)] {
			dup = append(dup, k.(string))
		}
		seen[k.(string)] = true
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			t.Fatalf("%s: %v", line, err)
		}
	}
	return dup
}

// environVar is set by the Environ plugin in TestEnvironNannyJoinsLater;
// atStart is its value when the process started.
const environVar = "SHOAL_CMD_TEST_ENVIRON"

var (
	atStart = os.Getenv(environVar)
	// getenv returns the value of environVar in the process where it runs,
	// now and when the process started.
	getenv = graph.MustRegisterFunc("shoal_cmd_test.getenv", func(context.Context, int) ([2]string, error) {
		return [2]string{os.Getenv(environVar), atStart}, nil
	})
)

// TestEnvironNannyJoinsLater registers the Environ plugin with a scheduler
// that has no worker yet; a `shoal worker --nanny` that joins later gets
// the variable from its nanny, which restarts its worker process with it.
func TestEnvironNannyJoinsLater(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	s, err := server.New(server.Config{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	defer s.Close(ctx)
	if st := s.RegisterWorkerPlugin(ctx, wire.EnvironPlugin, []byte(`{"`+environVar+`": "from the nanny"}`)); len(st) != 0 {
		t.Fatalf("statuses %v with no worker", st)
	}
	added := make(chan string, 8)
	sub := s.Events().Subscribe(func(evs []diagnostics.Event) {
		for _, e := range evs {
			if e.Kind == diagnostics.WorkerAdded {
				added <- e.Worker
			}
		}
	})
	defer sub.Close()
	n := startNanny(t, s.Address())
	// The first worker process joins, its nanny restarts it for the
	// variable, and the second one joins.
	var workers []string
	for len(workers) < 2 {
		select {
		case w := <-added:
			workers = append(workers, w)
		case <-n.exited:
			t.Fatalf("the nanny ended: %v", n.waitErr)
		case <-ctx.Done():
			t.Fatalf("workers that joined: %v; want the first and the restarted one", workers)
		}
	}
	c, err := distributed.Connect(ctx, s.Address(), distributed.WithSecurity(security.Config{Insecure: true}))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	vals, errs, err := c.Run(ctx, getenv.Name(), []any{0}, workers[1])
	if err != nil || len(errs) != 0 {
		t.Fatalf("run on the restarted worker: %v %v", err, errs)
	}
	if got := vals[workers[1]]; got != [2]string{"from the nanny", "from the nanny"} {
		t.Fatalf("worker %s: variable now and at start %q, want it set from the start", workers[1], got)
	}
	info := s.Info()
	if len(info.Workers) != 1 || info.Workers[0].Address != workers[1] {
		t.Fatalf("workers %v, want the restarted one only", info.Workers)
	}
	found := false
	for _, r := range s.SchedulerLogs(0) {
		found = found || r.Message == "worker left" && strings.Contains(r.Attrs["reason"],
			"restarted by its nanny to set environment variables "+environVar)
	}
	if !found {
		t.Errorf("the scheduler did not log why the first worker left: %v", s.SchedulerLogs(0))
	}
}

// eventually polls cond, for state on the other side of a connection.
func eventually(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("timed out")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestArchiveSurvivesSIGKILL runs `shoal scheduler --archive` with a worker
// and a stream of computations, kills the scheduler with SIGKILL while
// they run, and reads every file left in the archive.
func TestArchiveSurvivesSIGKILL(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := lis.Addr().String()
	lis.Close()
	dir := t.TempDir()
	var out bytes.Buffer
	cmd := exec.Command(exe, "scheduler", "--insecure", "--addr", addr, "--dashboard-address", "",
		"--archive", dir, "--archive-flush", "100ms", "--log-format", "json")
	cmd.Env = append(os.Environ(), cmdEnv+"=1")
	cmd.Stderr = &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() {
		cmd.Wait()
		close(exited)
	}()
	defer func() {
		cmd.Process.Kill()
		<-exited
		if t.Failed() {
			t.Logf("scheduler output:\n%s", out.String())
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var c *distributed.Client
	eventually(t, func() bool {
		c, err = distributed.Connect(ctx, addr, distributed.WithSecurity(security.Config{Insecure: true}))
		return err == nil
	})
	defer c.Close()
	startNanny(t, addr)

	// Computations run until the scheduler is gone.
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		for i := 0; ctx.Err() == nil; i++ {
			var calls []graph.Delayed
			for j := range 20 {
				calls = append(calls, getenv.Call(i*20+j))
			}
			if _, err := graph.ComputeAll(ctx, c, calls...); err != nil {
				select {
				case <-exited:
					return
				default:
				}
			}
		}
	}()
	// Kill it once the archive has files of task runs and more are on
	// their way.
	eventually(t, func() bool {
		tasks, _ := filepath.Glob(archive.Glob(dir, archive.TableTasks))
		return len(tasks) >= 3
	})
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-exited
	cancel()
	<-stopped

	var files int
	for _, table := range archive.Tables {
		paths, err := filepath.Glob(archive.Glob(dir, table))
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range paths {
			files++
			plan, err := parquet.PlanRead(context.Background(), storage.Local{}, []string{p}, parquet.Options{})
			if err != nil {
				t.Errorf("file %s: %v", p, err)
				continue
			}
			for i := range plan.Parts {
				rec, err := parquet.ReadPart(context.Background(), storage.Local{}, plan, i, memory.DefaultAllocator)
				if err != nil {
					t.Errorf("file %s: %v", p, err)
					continue
				}
				rec.Release()
			}
		}
	}
	// The tasks that ran are there, up to the last flush.
	tasks, err := dataframe.ReadParquet(context.Background(), archive.Glob(dir, archive.TableTasks))
	if err != nil {
		t.Fatal(err)
	}
	exec := local.New()
	defer exec.Close()
	n, err := tasks.Len().Int64(context.Background(), exec)
	if err != nil {
		t.Fatal(err)
	}
	if n < 20 {
		t.Errorf("%d task runs in the archive, want at least a computation's 20", n)
	}
	t.Logf("%d files readable, %d task runs", files, n)
}

// TestSchedulerOTLP runs `shoal scheduler --otlp-endpoint` against an OTLP
// receiver and finds the scheduler's logs there.
func TestSchedulerOTLP(t *testing.T) {
	r := otlptest.New(t)
	t.Setenv("OTEL_SERVICE_NAME", "shoal-cmd-test")
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // the scheduler starts, then stops at once
	var out bytes.Buffer
	err := runScheduler(ctx, []string{"--addr", "127.0.0.1:0", "--insecure", "--dashboard-address", "",
		"--otlp-endpoint", r.GRPCEndpoint(), "--otlp-protocol", "grpc"}, &out)
	if err != nil {
		t.Fatalf("shoal scheduler: %v\n%s", err, out.String())
	}
	var got []string
	for _, rec := range otlptest.Records(r.Logs()) {
		if rec.Service == "shoal-cmd-test" {
			got = append(got, rec.Body)
		}
	}
	for _, want := range []string{"scheduler started", "scheduler closed"} {
		if !slices.Contains(got, want) {
			t.Errorf("logs exported: %q; want %q among them", got, want)
		}
	}
}
