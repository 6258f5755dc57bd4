package metrics

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/shoal-data/shoal/distributed/security"
)

// TestServeHTTPBeyondLoopback serves on every interface (and connects
// over loopback): with the cluster's certificates it is HTTPS and wants
// a client certificate; without, it is plain HTTP and says so in the log;
// on loopback it is plain HTTP.
func TestServeHTTPBeyondLoopback(t *testing.T) {
	sec, err := security.NewLocal(t.TempDir(), false)
	if err != nil {
		t.Fatal(err)
	}
	tlsCfg, err := sec.HTTPTLS()
	if err != nil || tlsCfg == nil {
		t.Fatalf("HTTPTLS: %v, %v", tlsCfg, err)
	}
	cert, err := tls.LoadX509KeyPair(sec.CertFile, sec.KeyFile)
	if err != nil {
		t.Fatal(err)
	}
	ca, err := os.ReadFile(sec.CAFile)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(ca)
	get := func(url string, certs []tls.Certificate) (string, error) {
		c := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, Certificates: certs,
			ServerName: "localhost"}}}
		r, err := c.Get(url)
		if err != nil {
			return "", err
		}
		defer r.Body.Close()
		b, err := io.ReadAll(r.Body)
		return string(b), err
	}
	hello := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "hello") })
	port := func(s *Server) string {
		_, p, _ := net.SplitHostPort(s.Address())
		return p
	}
	tests := []struct {
		name   string
		addr   string
		tls    *tls.Config
		https  bool // served over HTTPS, wanting a client certificate
		warned bool
	}{
		{"beyond loopback, with certificates", ":0", tlsCfg, true, false},
		{"beyond loopback, without", ":0", nil, false, true},
		{"on loopback, with certificates", "127.0.0.1:0", tlsCfg, false, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var logs bytes.Buffer
			s, err := ServeHTTP("dashboard", tc.addr, hello, tc.tls, slog.New(slog.NewTextHandler(&logs, nil)))
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			local := "127.0.0.1:" + port(s)
			body, err := get("https://"+local+"/", []tls.Certificate{cert})
			if tc.https != (err == nil && body == "hello") {
				t.Errorf("HTTPS with a client certificate: %q, %v", body, err)
			}
			if tc.https {
				if _, err := get("https://"+local+"/", nil); err == nil {
					t.Error("HTTPS without a client certificate was served")
				}
			}
			body, err = get("http://"+local+"/", nil)
			if !tc.https != (err == nil && body == "hello") {
				t.Errorf("plain HTTP: %q, %v", body, err)
			}
			if warned := strings.Contains(logs.String(), "plain HTTP to the network"); warned != tc.warned {
				t.Errorf("warned %v; log: %s", warned, logs.String())
			}
		})
	}
}
