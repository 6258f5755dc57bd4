package distributed_test

import (
	"context"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/shoal-data/shoal/distributed"
)

// TestNannyEnvironErrors: Environ refuses variables that cannot be, and
// a nanny that no longer supervises its worker.
func TestNannyEnvironErrors(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	tests := []struct {
		name    string
		command string // run by sh; it ends when its standard input closes, or not
		vars    map[string]string
		ended   bool // wait until supervision ended first
		want    string
	}{
		{"empty name", "cat", map[string]string{"": "x"}, false, `bad variable name ""`},
		{"name with =", "cat", map[string]string{"A=B": "x"}, false, `bad variable name "A=B"`},
		{"value with NUL", "cat", map[string]string{"A": "x\x00y"}, false, "the value of A holds a NUL byte"},
		{"worker ended, no restarts", "exit 3", map[string]string{"A": "x"}, true,
			"the nanny no longer supervises its worker: worker process"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			n, err := distributed.StartNanny(distributed.NannyConfig{
				Command: func() *exec.Cmd { return exec.Command("sh", "-c", tc.command) },
			})
			if err != nil {
				t.Fatal(err)
			}
			defer n.Close(5 * time.Second)
			if tc.ended {
				<-n.Done()
			}
			starts, _ := n.Starts()
			_, restarted, err := n.Environ(ctx, tc.vars)
			if err == nil || !strings.Contains(err.Error(), tc.want) || restarted {
				t.Fatalf("environ: %v (restarted %v), want an error with %q", err, restarted, tc.want)
			}
			if now, _ := n.Starts(); now != starts {
				t.Errorf("%d starts after a refused Environ, want %d", now, starts)
			}
		})
	}
}
