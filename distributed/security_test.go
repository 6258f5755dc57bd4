package distributed_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/shoal-data/shoal/distributed"
	"github.com/shoal-data/shoal/distributed/security"
	"github.com/shoal-data/shoal/graph"
)

func TestSecurityProcesses(t *testing.T) {
	sec, err := security.NewLocal(t.TempDir(), true)
	if err != nil {
		t.Fatal(err)
	}
	lc, c := processCluster(t, distributed.LocalClusterOptions{Security: &sec})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	// The cluster works through TLS: scheduler, worker to worker, client
	// to workers.
	var parts []any
	for i := range 20 {
		parts = append(parts, double.Call(i))
	}
	if got, err := graph.Compute[int](ctx, c, sum.Call(graph.List(parts...))); err != nil || got != 380 {
		t.Fatalf("compute over TLS: %v, %v", got, err)
	}
	if vals, errs, err := c.Run(ctx, pid.Name(), []any{0}); err != nil || len(errs) != 0 || len(vals) != 2 {
		t.Fatalf("run over TLS: %v %v %v", vals, errs, err)
	}

	other, err := security.NewLocal(t.TempDir(), false)
	if err != nil {
		t.Fatal(err)
	}
	wrongToken := sec
	wrongToken.Token = "not-the-token"
	noToken := sec
	noToken.Token = ""
	otherCA := other
	otherCA.Token = sec.Token
	tests := []struct {
		name string
		opts []distributed.ClientOption
		want string
	}{
		{"plaintext", []distributed.ClientOption{distributed.WithSecurity(security.Config{Insecure: true})}, "TLS"},
		{"no security asked", []distributed.ClientOption{distributed.WithSecurity(security.Config{})}, "plaintext not asked for"},
		{"wrong token", []distributed.ClientOption{distributed.WithSecurity(wrongToken)}, "wrong token"},
		{"no token", []distributed.ClientOption{distributed.WithSecurity(noToken)}, "requires a token"},
		{"certificate of another CA", []distributed.ClientOption{distributed.WithSecurity(otherCA)}, "certificate"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			defer cancel()
			c2, err := distributed.Connect(cctx, lc.Address(), tc.opts...)
			if err == nil {
				c2.Close()
				t.Fatal("connected")
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %q does not say %q", err, tc.want)
			}
		})
	}
}

func TestPlaintextBeyondLoopbackRefused(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, err := distributed.Connect(ctx, "10.255.255.1:8786")
	if !errors.Is(err, security.ErrPlaintext) {
		t.Fatalf("plaintext to a remote address: %v", err)
	}
}

func TestSecurityConfig(t *testing.T) {
	if _, err := (security.Config{}).DialOptions(); !errors.Is(err, security.ErrNoSecurity) {
		t.Errorf("zero config: %v", err)
	}
	if _, err := (security.Config{CAFile: "x"}).ServerOptions(); err == nil || !strings.Contains(err.Error(), "needs a CA file") {
		t.Errorf("half a TLS config: %v", err)
	}
	if _, err := (security.Config{Insecure: true, Token: "t"}).DialOptions(); err != nil {
		t.Errorf("plaintext with a token: %v", err)
	}
}
