package server

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/shoal-data/shoal/diagnostics/dashboard"
)

func TestDashboardServed(t *testing.T) {
	s, err := New(Config{DashboardListen: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	addr := s.DashboardAddress()
	if addr == "" || s.Info().DashboardAddress != addr {
		t.Fatalf("DashboardAddress %q, Info reports %q", addr, s.Info().DashboardAddress)
	}
	resp, err := http.Get("http://" + addr + "/api/status")
	if err != nil {
		t.Fatal(err)
	}
	var st dashboard.Status
	err = json.NewDecoder(resp.Body).Decode(&st)
	resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	if st.Scheduler.ID != s.ID() || st.Scheduler.Address != s.Address() || len(st.Workers) != 0 ||
		st.Scheduler.Started.IsZero() {
		t.Errorf("status: %+v", st)
	}
	found := false
	for _, r := range st.Logs {
		found = found || r.Message == "scheduler started"
	}
	if !found {
		t.Errorf("logs: %+v, want the scheduler's start", st.Logs)
	}
	resp, err = http.Get("http://" + addr + "/health")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(body) != "ok\n" {
		t.Errorf("/health: %q", body)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := s.Close(ctx); err != nil {
		t.Fatal(err)
	}
	http.DefaultClient.CloseIdleConnections()
	if _, err := http.Get("http://" + addr + "/health"); err == nil {
		t.Errorf("the dashboard is still served after Close")
	}
}

func TestDashboardOff(t *testing.T) {
	s, _ := newServer(t, Config{DashboardAddress: "dashboard.example.com:443"})
	if a := s.DashboardAddress(); a != "" {
		t.Errorf("DashboardAddress %q, want none served", a)
	}
	if a := s.Info().DashboardAddress; a != "dashboard.example.com:443" {
		t.Errorf("Info reports %q, want the address configured", a)
	}
	if ts := s.TaskStream(0, 10); len(ts.Tasks) != 0 || ts.Next != 0 {
		t.Errorf("task stream without a dashboard: %+v", ts)
	}
	if st := s.Snapshot(); st.Scheduler.ID != s.ID() || len(st.Progress) != 0 {
		t.Errorf("snapshot without a dashboard: %+v", st)
	}
}

func TestDashboardPortTaken(t *testing.T) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer lis.Close()
	_, err = New(Config{DashboardListen: lis.Addr().String(), MetricsListen: "127.0.0.1:0"})
	if err == nil || !strings.Contains(err.Error(), "dashboard: listen on "+lis.Addr().String()) {
		t.Fatalf("New with the dashboard's port taken: %v", err)
	}
}
