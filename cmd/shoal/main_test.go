package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/shoal-data/shoal/distributed/server"
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
		{[]string{"bogus"}, 2, `unknown command "bogus"`},
		{[]string{"worker"}, 2, "Usage: shoal worker"},
		{[]string{"worker", "127.0.0.1:1", "--memory-limit", "lots"}, 1, "--memory-limit"},
		{[]string{"worker", "127.0.0.1:1", "--resources", "GPU"}, 1, "NAME=AMOUNT"},
		{[]string{"worker", "10.1.2.3:8786"}, 1, "plaintext beyond loopback was not asked for"},
		{[]string{"worker", "127.0.0.1:1", "--listen", "0.0.0.0:0"}, 1, "plaintext beyond loopback"},
		{[]string{"scheduler", "--addr", ":0"}, 1, "plaintext beyond loopback"},
		{[]string{"scheduler", "--addr", "127.0.0.1:0", "--tls-ca", "x"}, 1, "needs a CA file"},
	}
	for _, tc := range tests {
		var out bytes.Buffer
		if code := run(tc.args, &out); code != tc.code || !strings.Contains(out.String(), tc.want) {
			t.Errorf("shoal %q: exit %d, output %q; want %d and %q", tc.args, code, out.String(), tc.code, tc.want)
		}
	}
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
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "worker", s.Address(), "--nanny", "--threads", "1", "--log-format", "json")
	cmd.Env = append(os.Environ(), cmdEnv+"=1")
	var out bytes.Buffer
	cmd.Stderr = &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	var waitErr error
	go func() {
		waitErr = cmd.Wait()
		close(exited)
	}()
	defer func() {
		cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(20 * time.Second):
			cmd.Process.Kill()
			<-exited
			t.Errorf("the nanny did not stop on SIGTERM")
		}
		if t.Failed() {
			t.Logf("nanny output:\n%s", out.String())
		}
	}()
	if err := s.WaitForWorkers(ctx, 1); err != nil {
		t.Fatal(err)
	}
	info := s.Info()
	w := info.Workers[0]
	if !strings.HasPrefix(w.Nanny, "nanny pid ") || int(w.Pid) == cmd.Process.Pid {
		t.Fatalf("worker %v: want a child process with a nanny", w)
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
		case <-exited:
			t.Fatalf("the nanny ended: %v", waitErr)
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
	cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-exited:
		if waitErr != nil {
			t.Fatalf("the nanny ended with %v", waitErr)
		}
	case <-ctx.Done():
		t.Fatal("the nanny did not stop")
	}
	// Its worker went with it.
	eventually(t, func() bool { return len(s.Info().Workers) == 0 })
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
