package distributed_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io/fs"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/shoal-data/shoal/distributed"
	"github.com/shoal-data/shoal/distributed/security"
	"github.com/shoal-data/shoal/graph"
	"google.golang.org/grpc/credentials"
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
		{"no security option", nil, "WithSecurity"},
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

// TestConnectNeedsSecurity: Connect without WithSecurity fails at once,
// saying what to give, on loopback too.
func TestConnectNeedsSecurity(t *testing.T) {
	for _, addr := range []string{"10.255.255.1:8786", "127.0.0.1:8786", "localhost:8786"} {
		t.Run(addr, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			_, err := distributed.Connect(ctx, addr)
			if !errors.Is(err, security.ErrPlaintext) || !strings.Contains(err.Error(), "WithSecurity") ||
				!strings.Contains(err.Error(), "Insecure: true") {
				t.Fatalf("connect without security: %v, want ErrPlaintext saying how to give certificates or ask for plaintext", err)
			}
		})
	}
}

// TestLocalClusterSecurity: a LocalCluster uses mutual TLS unless asked
// for plaintext, with temporary certificates of its own when given none,
// which its clients get and Close removes.
func TestLocalClusterSecurity(t *testing.T) {
	given, err := security.NewLocal(t.TempDir(), false)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name      string
		sec       *security.Config
		scheme    string
		plaintext bool // a plaintext client gets in
		removed   bool // Close removes the certificates
	}{
		{"default: temporary certificates", nil, "tls://", false, true},
		{"certificates given", &given, "tls://", false, false},
		{"plaintext asked for", &security.Config{Insecure: true}, "tcp://", true, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			lc, err := distributed.NewLocalCluster(ctx, distributed.LocalClusterOptions{Workers: 1, InProcess: true,
				Security: tc.sec})
			if err != nil {
				t.Fatal(err)
			}
			defer lc.Close()
			sec := lc.Security()
			switch {
			case tc.sec != nil && sec != *tc.sec:
				t.Fatalf("security %+v, want the one given %+v", sec, *tc.sec)
			case tc.sec == nil && (sec.Insecure || sec.CAFile == "" || sec.CertFile == "" || sec.KeyFile == ""):
				t.Fatalf("security %+v, want temporary certificates", sec)
			}
			c, err := lc.Client(ctx)
			if err != nil {
				t.Fatal(err)
			}
			got, err := graph.Compute[int](ctx, c, double.Call(21))
			info, ierr := c.Info(ctx)
			c.Close()
			if err != nil || got != 42 || ierr != nil {
				t.Fatalf("compute: %v, %v; info: %v", got, err, ierr)
			}
			if info.Connection != tc.scheme+lc.Address() {
				t.Errorf("connection %q, want %q", info.Connection, tc.scheme+lc.Address())
			}
			pc, err := distributed.Connect(ctx, lc.Address(), distributed.WithSecurity(security.Config{Insecure: true}))
			switch {
			case tc.plaintext && err != nil:
				t.Errorf("plaintext client: %v", err)
			case !tc.plaintext && (err == nil || !strings.Contains(err.Error(), "TLS")):
				t.Errorf("plaintext client of a TLS cluster: %v, want an error that says TLS", err)
			}
			if pc != nil {
				pc.Close()
			}
			if !tc.plaintext {
				// TLS without a client certificate: the scheduler ends the
				// handshake, and the error says what was missing.
				ca, err := os.ReadFile(sec.CAFile)
				if err != nil {
					t.Fatal(err)
				}
				pool := x509.NewCertPool()
				pool.AppendCertsFromPEM(ca)
				nc, err := distributed.Connect(ctx, lc.Address(), distributed.WithTransportCredentials(
					credentials.NewTLS(&tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS13})))
				if err == nil || !strings.Contains(err.Error(), "client certificate") {
					t.Errorf("client without a certificate: %v, want an error that says it needs a client certificate", err)
				}
				if nc != nil {
					nc.Close()
				}
			}
			if _, err := distributed.Connect(ctx, lc.Address()); !errors.Is(err, security.ErrPlaintext) {
				t.Errorf("client without security: %v, want ErrPlaintext", err)
			}
			if err := lc.Close(); err != nil {
				t.Fatal(err)
			}
			for _, f := range []string{sec.CAFile, sec.CertFile, sec.KeyFile} {
				if f == "" {
					continue
				}
				_, err := os.Stat(f)
				if removed := errors.Is(err, fs.ErrNotExist); removed != tc.removed {
					t.Errorf("%s after Close: %v, want removed %v", f, err, tc.removed)
				}
			}
		})
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
