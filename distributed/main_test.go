package distributed_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/shoal-data/shoal/distributed"
	"github.com/shoal-data/shoal/graph"
)

// extraOpEnv makes a worker process register one more op than the test
// binary, to test that the scheduler refuses the mismatch.
const extraOpEnv = "SHOAL_TEST_EXTRA_OP"

func TestMain(m *testing.M) {
	if os.Getenv(extraOpEnv) != "" {
		graph.MustRegisterFunc("distributed_test.extra", func(_ context.Context, x int) (int, error) { return x, nil })
	}
	if distributed.ServeIfWorker() {
		return
	}
	goleak.VerifyTestMain(m)
}

// Functions the tests run on workers: registered at package level, so that
// worker processes (this test binary started again) have them too.
var (
	double = graph.MustRegisterFunc("distributed_test.double", func(_ context.Context, x int) (int, error) {
		return 2 * x, nil
	})
	sum = graph.MustRegisterFunc("distributed_test.sum", func(_ context.Context, xs []int) (int, error) {
		s := 0
		for _, x := range xs {
			s += x
		}
		return s, nil
	})
	noop = graph.MustRegisterFunc("distributed_test.noop", func(_ context.Context, x int) (int, error) {
		return x, nil
	})
	fail = graph.MustRegisterFunc("distributed_test.fail", func(_ context.Context, x int) (int, error) {
		return 0, fmt.Errorf("failing on %d: %w", x, errBoom)
	})
	panics = graph.MustRegisterFunc("distributed_test.panic", func(_ context.Context, x int) (int, error) {
		panic(fmt.Sprintf("panicking on %d", x))
	})
	// sleep waits ms milliseconds, or until cancelled.
	sleep = graph.MustRegisterFunc("distributed_test.sleep", func(ctx context.Context, ms int) (int, error) {
		select {
		case <-time.After(time.Duration(ms) * time.Millisecond):
			return ms, nil
		case <-ctx.Done():
			return 0, ctx.Err()
		}
	})
)

var errBoom = errors.New("boom")
