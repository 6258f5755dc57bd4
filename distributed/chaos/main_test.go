//go:build chaos

package chaos_test

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"testing"
	"time"

	"github.com/shoal-data/shoal/distributed"
	"github.com/shoal-data/shoal/distributed/server"
	"github.com/shoal-data/shoal/graph"
)

var (
	durationFlag = flag.Duration("chaos.duration", 0,
		"how long each fault's loop of jobs runs (default $SHOAL_CHAOS_DURATION, or 15s)")
	seedFlag = flag.Int64("chaos.seed", 1, "seed of the choices of the faults (which worker, when)")
)

// duration is how long each fault's loop of jobs runs.
func duration(t *testing.T) time.Duration {
	if *durationFlag > 0 {
		return *durationFlag
	}
	if s := os.Getenv("SHOAL_CHAOS_DURATION"); s != "" {
		d, err := time.ParseDuration(s)
		if err != nil {
			t.Fatalf("SHOAL_CHAOS_DURATION=%q: %v", s, err)
		}
		return d
	}
	return 15 * time.Second
}

// schedulerEnv makes the test binary a scheduler process serving on the
// address it holds, for the fault that kills the scheduler.
const schedulerEnv = "SHOAL_CHAOS_SCHEDULER"

func TestMain(m *testing.M) {
	if distributed.ServeIfWorker() {
		return
	}
	if addr, ok := os.LookupEnv(schedulerEnv); ok {
		if err := serveScheduler(addr); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		return
	}
	os.Exit(m.Run())
}

// serveScheduler serves a plaintext scheduler on addr (loopback) until
// its parent closes its standard input, or SIGTERM.
func serveScheduler(addr string) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ctx, cancel := context.WithCancel(ctx)
	go func() {
		io.Copy(io.Discard, os.Stdin)
		cancel()
	}()
	s, err := server.New(server.Config{Listen: addr, HeartbeatInterval: heartbeat, HeartbeatTimeout: 5 * time.Second})
	if err != nil {
		return err
	}
	<-ctx.Done()
	cctx, ccancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer ccancel()
	return s.Close(cctx)
}

// heartbeat is the workers' heartbeat interval in the faults.
const heartbeat = 200 * time.Millisecond

// Ops of the fan-in, registered at package level so that worker processes
// (this test binary started again) have them.
var (
	double = graph.MustRegisterFunc("chaos_test.double", func(_ context.Context, x int) (int, error) {
		return 2 * x, nil
	})
	sum = graph.MustRegisterFunc("chaos_test.sum", func(_ context.Context, xs []int) (int, error) {
		s := 0
		for _, x := range xs {
			s += x
		}
		return s, nil
	})
	// ballast allocates mb MiB and touches them, then holds them for ms
	// milliseconds, or until cancelled: memory pressure on a worker. Its
	// input is {mb, ms, seq}; seq makes each call a task of its own.
	ballast = graph.MustRegisterFunc("chaos_test.ballast", func(ctx context.Context, in []int) (int, error) {
		mb, ms := in[0], in[1]
		keep := make([][]byte, mb)
		for i := range keep {
			keep[i] = make([]byte, 1<<20)
			for j := 0; j < len(keep[i]); j += 4096 {
				keep[i][j] = 1
			}
		}
		t := time.NewTimer(time.Duration(ms) * time.Millisecond)
		defer t.Stop()
		select {
		case <-t.C:
		case <-ctx.Done():
		}
		return len(keep), nil
	})
)
