package scheduler

import (
	"errors"
	"strings"
	"testing"
	"time"
)

// TestNoWorkersTimeout fails what waits for a worker once there has been
// none for the timeout, naming the workers that left and why; a worker
// that joins in time, or no timeout, lets the tasks wait and run.
func TestNoWorkersTimeout(t *testing.T) {
	const timeout = time.Minute
	tests := []struct {
		name    string
		cfg     Config
		worker  bool          // a worker runs the first task, then dies
		joins   time.Duration // a new worker joins after this long (0: none)
		wait    time.Duration // how long the ticks go on
		wantErr string        // "" : the computation ends with its result
	}{
		{"the last worker died", Config{NoWorkersTimeout: timeout}, true, 0, 2 * timeout,
			`the last workers left: w1 (exit code 137: killed by the kernel)`},
		{"no worker ever joined", Config{NoWorkersTimeout: timeout}, false, 0, 2 * timeout, "no worker ever joined"},
		{"a worker joins in time", Config{NoWorkersTimeout: timeout}, true, timeout / 2, 2 * timeout, ""},
		{"no timeout", Config{}, true, 0, time.Hour, "still waiting"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := newSim(t, tc.cfg)
			if tc.worker {
				m.addWorker("w1", 1, nil)
			}
			m.submit("c", gb(t, "a", "b:a", "c:b"), "c")
			if tc.worker {
				if !m.finish() { // a
					t.Fatal("a did not run")
				}
				delete(m.running, "w1")
				delete(m.held, "w1")
				m.handle(&WorkerRemoved{Worker: "w1", Reason: "exit code 137: killed by the kernel"})
			}
			start := m.now
			joined := false
			for m.now.Sub(start) < tc.wait && len(m.errs["c"]) == 0 {
				m.now = m.now.Add(time.Second)
				if tc.joins > 0 && !joined && m.now.Sub(start) >= tc.joins {
					m.addWorker("w2", 1, nil)
					joined = true
					m.runAll()
				}
				m.handle(&Tick{})
			}
			err := m.errs["c"]["c"]
			switch {
			case tc.wantErr == "still waiting":
				if err != nil || m.results["c"]["c"] != 0 || m.s.Counts()[Queued] == 0 {
					t.Errorf("error %v, results %v, counts %v: want the tasks still queued", err, m.results, m.s.Counts())
				}
			case tc.wantErr == "":
				if err != nil || m.results["c"]["c"] != 1 {
					t.Errorf("error %v, results %v", err, m.results)
				}
			default:
				var nw *NoWorkersError
				if !errors.As(err, &nw) || nw.Timeout != timeout || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want a NoWorkersError saying %q", err, tc.wantErr)
				}
				if d := m.now.Sub(start); d < timeout || d > timeout+3*time.Second {
					t.Errorf("failed after %v, want about %v", d, timeout)
				}
				if n := m.s.Counts()[Queued]; n != 0 {
					t.Errorf("%d tasks still queued", n)
				}
				if err := m.s.Validate(); err != nil {
					t.Error(err)
				}
			}
		})
	}
}
