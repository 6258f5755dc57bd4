package server

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"sync"
	"time"

	"google.golang.org/grpc"

	"github.com/shoal-data/shoal/diagnostics/dashboard"
	"github.com/shoal-data/shoal/diagnostics/dump"
	"github.com/shoal-data/shoal/distributed/internal/flightdata"
	"github.com/shoal-data/shoal/distributed/wire"
	"github.com/shoal-data/shoal/graph"
	"github.com/shoal-data/shoal/internal/dumpstate"
)

// The cluster dump, the stories of tasks across the cluster, and the
// recording of a performance report's period.

// dumpTimeout bounds the wait for a worker's state or story.
const dumpTimeout = 10 * time.Second

// DumpClusterState returns the state of the cluster: the scheduler's,
// every connected worker's as it answers (within ctx and ten seconds),
// what the scheduler kept of the workers that left, and what the
// dashboard shows.
func (s *Server) DumpClusterState(ctx context.Context) *dump.File {
	s.flushTelemetry(ctx, nil)
	f := &dump.File{Version: dump.Version, Time: time.Now(), Executor: "cluster"}
	logs, _ := s.WorkerLogs(0)
	s.mu.Lock()
	f.Scheduler = dumpstate.Scheduler(s.state)
	names := map[string]string{}
	for addr, wc := range s.workers {
		f.Workers = append(f.Workers, dump.Worker{Address: addr})
		names[addr] = wc.info.Name
	}
	for addr, g := range s.gone {
		if s.workers[addr] == nil {
			f.Workers = append(f.Workers, dump.Worker{Address: addr, Gone: true, Reason: g.reason})
			names[addr] = g.name
		}
	}
	s.mu.Unlock()
	f.Scheduler.Address, f.Scheduler.ID, f.Scheduler.Started = s.Address(), s.id, s.started
	f.Scheduler.Logs = []dashboard.LogRecord{}
	for _, r := range s.ring.Records() {
		f.Scheduler.Logs = append(f.Scheduler.Logs, logRecord(r))
	}
	fine := s.tel.fine.Totals()
	var wg sync.WaitGroup
	for i := range f.Workers {
		w := &f.Workers[i]
		if names[w.Address] != w.Address {
			w.Name = names[w.Address]
		}
		w.Logs = []dashboard.LogRecord{}
		for _, r := range logs[w.Address] {
			w.Logs = append(w.Logs, wireLog(r))
		}
		for _, m := range fine {
			if m.Worker == w.Address {
				w.FineMetrics = append(w.FineMetrics, m)
			}
		}
		s.tel.mu.Lock()
		if wt := s.tel.workers[w.Address]; wt != nil {
			w.Metrics = wt.samples()
		}
		s.tel.mu.Unlock()
		if w.Gone {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			st, err := s.workerState(ctx, w.Address)
			if err != nil {
				w.Error = err.Error()
				return
			}
			w.State = st
		}()
	}
	wg.Wait()
	dump.SortWorkers(f.Workers)
	f.Dashboard = dashboard.Capture(dashSource{s}, dashboard.CaptureOptions{})
	return f
}

// workerState asks a worker for its state machine.
func (s *Server) workerState(ctx context.Context, addr string) (*dump.WorkerState, error) {
	ctx, cancel := context.WithTimeout(ctx, dumpTimeout)
	defer cancel()
	conn, err := s.peers.Get(addr)
	if err != nil {
		return nil, fmt.Errorf("reach worker %s: %w", addr, err)
	}
	// A worker holding many values says much: more than gRPC's default
	// bound of a message.
	rep, err := wire.NewWorkerClient(conn).DumpState(ctx, &wire.DumpStateRequest{},
		grpc.MaxCallRecvMsgSize(flightdata.MaxMessageBytes))
	if err != nil {
		return nil, fmt.Errorf("state of worker %s: %w", addr, err)
	}
	var st dump.WorkerState
	if err := json.Unmarshal(rep.Json, &st); err != nil {
		return nil, fmt.Errorf("state of worker %s: %w", addr, err)
	}
	return &st, nil
}

// ClusterStory returns the transitions of keys on the scheduler and on
// the connected workers, oldest first; a transition of the scheduler to
// erred carries the task's error. A worker that does not answer within
// ctx and ten seconds is left out, and said so in the log.
func (s *Server) ClusterStory(ctx context.Context, keys ...graph.Key) []dump.Transition {
	s.mu.Lock()
	own := dumpstate.Transitions(s.state.Story(keys...))
	for i := range own {
		if t := &own[i]; t.To == "erred" {
			if ti, ok := s.state.Task(graph.Key(t.Key)); ok {
				t.Error = ti.Error
			}
		}
	}
	var addrs []string
	for addr := range s.workers {
		addrs = append(addrs, addr)
	}
	s.mu.Unlock()
	slices.Sort(addrs)
	req := &wire.DumpStoryRequest{Keys: make([]string, len(keys))}
	for i, k := range keys {
		req.Keys[i] = string(k)
	}
	parts := make([][]dump.Transition, len(addrs)+1)
	parts[0] = own
	ctx, cancel := context.WithTimeout(ctx, dumpTimeout)
	defer cancel()
	var wg sync.WaitGroup
	for i, addr := range addrs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			conn, err := s.peers.Get(addr)
			if err == nil {
				var rep *wire.DumpStoryReply
				if rep, err = wire.NewWorkerClient(conn).DumpStory(ctx, req); err == nil {
					parts[i+1] = wire.DecodeTransitions(rep.Transitions)
					return
				}
			}
			s.logger.Warn("a worker did not tell its side of a story", "worker", addr, "error", err)
		}()
	}
	wg.Wait()
	return dump.MergeStories(parts...)
}

func (x *service) DumpState(ctx context.Context, _ *wire.DumpStateRequest) (*wire.DumpStateReply, error) {
	var buf bytes.Buffer
	if err := dump.Write(&buf, x.s.DumpClusterState(ctx)); err != nil {
		return nil, fmt.Errorf("scheduler %s: %w", x.s.Address(), err)
	}
	return &wire.DumpStateReply{Json: buf.Bytes()}, nil
}

func (x *service) DumpStory(ctx context.Context, r *wire.DumpStoryRequest) (*wire.DumpStoryReply, error) {
	keys := make([]graph.Key, len(r.Keys))
	for i, k := range r.Keys {
		keys[i] = graph.Key(k)
	}
	return &wire.DumpStoryReply{Transitions: wire.EncodeTransitions(x.s.ClusterStory(ctx, keys...))}, nil
}

// DumpReport records a period for a client's performance report: from
// the client's first message to its second, it records the scheduler's
// events into a dashboard.Period; then it answers with the period's
// snapshot, gzipped JSON.
func (x *service) DumpReport(stream wire.Scheduler_DumpReportServer) error {
	s := x.s
	if _, err := stream.Recv(); err != nil {
		return err
	}
	p := dashboard.NewPeriod()
	src := dashSource{s}
	p.Start(s.hub, src)
	s.mu.Lock()
	s.reports = append(s.reports, p.Recorder())
	s.mu.Unlock()
	stopped := false
	defer func() {
		s.mu.Lock()
		s.reports = slices.DeleteFunc(s.reports, func(r *dashboard.Recorder) bool { return r == p.Recorder() })
		s.mu.Unlock()
		if !stopped {
			p.Discard() // the client left
		}
	}()
	if err := stream.Send(&wire.DumpReportDown{Started: true}); err != nil {
		return err
	}
	if _, err := stream.Recv(); err != nil {
		if errors.Is(err, io.EOF) {
			return invalid("a performance report's period ended without its second message")
		}
		return err
	}
	s.flushTelemetry(stream.Context(), nil)
	snap := p.Stop(src, 0, nil)
	stopped = true
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	if err := json.NewEncoder(zw).Encode(snap); err != nil {
		return fmt.Errorf("scheduler %s: encode the report's data: %w", s.Address(), err)
	}
	if err := zw.Close(); err != nil {
		return err
	}
	return stream.Send(&wire.DumpReportDown{Snapshot: buf.Bytes()})
}
