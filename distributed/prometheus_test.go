package distributed_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// promServer is a real Prometheus server (Debian's prometheus package;
// set SHOAL_PROMETHEUS to its path if it is not on PATH) started by a
// test on loopback, scraping the targets it was given every second.
type promServer struct {
	t    *testing.T
	addr string
}

// startPrometheus starts Prometheus scraping targets (host:port of
// /metrics) and evaluating the rules of ruleFiles every second, and stops
// it at the end of the test (showing its log if the test failed). The
// test is skipped when there is no prometheus binary.
func startPrometheus(t *testing.T, targets []string, ruleFiles ...string) *promServer {
	t.Helper()
	bin := prometheusBinary(t)
	quoted := make([]string, len(targets))
	for i, x := range targets {
		quoted[i] = fmt.Sprintf("%q", x)
	}
	cfg := "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n"
	if len(ruleFiles) > 0 {
		cfg += "rule_files:\n"
		for _, f := range ruleFiles {
			abs, err := filepath.Abs(f)
			if err != nil {
				t.Fatal(err)
			}
			cfg += fmt.Sprintf("  - %q\n", abs)
		}
	}
	cfg += fmt.Sprintf("scrape_configs:\n  - job_name: shoal\n    static_configs:\n      - targets: [%s]\n",
		strings.Join(quoted, ", "))
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "prometheus.yml"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := lis.Addr().String()
	lis.Close()
	cmd := exec.Command(bin, "--config.file="+filepath.Join(dir, "prometheus.yml"), "--web.listen-address="+addr,
		"--storage.tsdb.path="+filepath.Join(dir, "data"))
	out, err := os.Create(filepath.Join(dir, "prometheus.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		out.Close()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
		out.Close()
		if t.Failed() {
			b, _ := os.ReadFile(filepath.Join(dir, "prometheus.log"))
			t.Logf("prometheus log:\n%s", b)
		}
	})
	return &promServer{t: t, addr: addr}
}

// prometheusBinary returns the path of the prometheus binary, or skips
// the test when there is none.
func prometheusBinary(t *testing.T) string {
	t.Helper()
	if bin := os.Getenv("SHOAL_PROMETHEUS"); bin != "" {
		return bin
	}
	bin, err := exec.LookPath("prometheus")
	if err != nil {
		t.Skip("no prometheus binary (apt-get install prometheus, or set SHOAL_PROMETHEUS)")
	}
	return bin
}

// get reads an API answer's data into v; it says why it could not.
func (p *promServer) get(path string, v any) error {
	resp, err := http.Get("http://" + p.addr + path)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	r := struct {
		Status string `json:"status"`
		Error  string `json:"error"`
		Data   any    `json:"data"`
	}{Data: v}
	if err := json.Unmarshal(b, &r); err != nil {
		return fmt.Errorf("%s: %w: %s", path, err, b)
	}
	if r.Status != "success" {
		return fmt.Errorf("%s: %s: %s", path, r.Status, r.Error)
	}
	return nil
}

// query evaluates a PromQL expression now; nil when it could not.
func (p *promServer) query(q string) []map[string]any {
	var data struct {
		Result []map[string]any `json:"result"`
	}
	if p.get("/api/v1/query?query="+url.QueryEscape(q), &data) != nil {
		return nil
	}
	return data.Result
}

// promAlert is an alert of Prometheus's /api/v1/alerts.
type promAlert struct {
	Labels      map[string]string `json:"labels"`
	Annotations map[string]string `json:"annotations"`
	State       string            `json:"state"` // pending or firing
}

// alerts returns the alerts pending or firing now.
func (p *promServer) alerts() []promAlert {
	var data struct {
		Alerts []promAlert `json:"alerts"`
	}
	if err := p.get("/api/v1/alerts", &data); err != nil {
		p.t.Logf("alerts: %v", err)
	}
	return data.Alerts
}

// poll polls cond every 100ms until it holds, for at most a minute: for
// what another process (Prometheus) does, which nothing announces.
func poll(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
