package server

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/google/pprof/profile"

	"github.com/shoal-data/shoal/diagnostics"
	"github.com/shoal-data/shoal/diagnostics/dashboard"
	"github.com/shoal-data/shoal/distributed/wire"
)

// What the workers send about themselves with their heartbeats: CPU
// profile windows, fine performance metrics, transfers and their use of
// resources. The scheduler keeps it beside the scheduling core, under a
// lock of its own, and handles it outside the core's lock.

// historySize is how many samples of each worker's use of resources are
// kept: 15 minutes at a heartbeat a second.
const historySize = 900

// telemetryTimeout bounds the wait for a worker's telemetry.
const telemetryTimeout = 5 * time.Second

type telemetry struct {
	profiles *diagnostics.ProfileStore
	fine     diagnostics.FineMetrics

	mu          sync.Mutex
	workers     map[string]*workerTel // by address, gone ones too (until forgotten with the gone)
	pairs       map[[2]string]*dashboard.Transfer
	prefixes    map[string]*dashboard.PrefixTransfer
	shuffleIO   map[string]map[string]*dashboard.ShuffleWorker // by task group, then worker
	shuffleDisk map[string]map[string]int64                    // by shuffle id, then worker: bytes now
	freeDisk    map[string]int64                               // by worker: free bytes of its scratch directory
}

// workerTel is what a worker last said of itself.
type workerTel struct {
	stats   *wire.WorkerStats
	at      time.Time
	cpu     float64 // percent of a core since the report before; -1 unknown
	netIn   float64 // bytes/s
	netOut  float64
	history []dashboard.WorkerSample // ring of historySize
	next    int                      // where the next sample goes, once full
}

func newTelemetry() *telemetry {
	return &telemetry{profiles: diagnostics.NewProfileStore(0), workers: map[string]*workerTel{},
		pairs: map[[2]string]*dashboard.Transfer{}, prefixes: map[string]*dashboard.PrefixTransfer{},
		shuffleIO: map[string]map[string]*dashboard.ShuffleWorker{}, shuffleDisk: map[string]map[string]int64{},
		freeDisk: map[string]int64{}}
}

// workerTelemetry takes in what a worker's batch says of it. It is called
// without s.mu.
func (s *Server) workerTelemetry(addr string, b *wire.WorkerBatch) {
	t := s.tel
	for _, pw := range b.Profiles {
		p, err := profile.ParseData(pw.Profile)
		if err != nil {
			s.logger.Warn("a worker sent a CPU profile that cannot be read", "worker", addr, "error", err)
			continue
		}
		t.profiles.Add(&diagnostics.ProfileWindow{Worker: addr, Start: time.Unix(0, pw.StartUnixNano),
			Stop: time.Unix(0, pw.StopUnixNano), Profile: p})
	}
	if len(b.Metrics) > 0 {
		ms := make([]diagnostics.FineMetric, len(b.Metrics))
		for i, m := range b.Metrics {
			ms[i] = diagnostics.FineMetric{Worker: addr, Prefix: m.Prefix, Activity: m.Activity, Unit: m.Unit,
				Value: m.Value}
		}
		t.fine.AddAll(ms)
		if s.hub.Active() {
			s.hub.Publish(diagnostics.Event{Kind: diagnostics.Metrics, Worker: addr, Metrics: ms})
		}
	}
	if b.Stats == nil && len(b.Transfers) == 0 && len(b.ShuffleIo) == 0 {
		return
	}
	now := time.Now()
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, x := range b.Transfers {
		from, to := x.Peer, addr
		if x.Out {
			from, to = addr, x.Peer
		}
		pt := t.pairs[[2]string{from, to}]
		if pt == nil {
			pt = &dashboard.Transfer{From: from, To: to}
			t.pairs[[2]string{from, to}] = pt
		}
		pt.Bytes += x.Bytes
		pt.Seconds += x.Seconds
		pt.Count += x.Count
		pp := t.prefixes[x.Prefix]
		if pp == nil {
			pp = &dashboard.PrefixTransfer{Prefix: x.Prefix}
			t.prefixes[x.Prefix] = pp
		}
		pp.Bytes += x.Bytes
		pp.Seconds += x.Seconds
		pp.Count += x.Count
	}
	for _, io := range b.ShuffleIo {
		m := t.shuffleIO[io.Group]
		if m == nil {
			m = map[string]*dashboard.ShuffleWorker{}
			t.shuffleIO[io.Group] = m
		}
		sw := m[addr]
		if sw == nil {
			sw = &dashboard.ShuffleWorker{Address: addr}
			m[addr] = sw
		}
		sw.BytesWritten += io.Written
		sw.BytesRead += io.Read
	}
	st := b.Stats
	if st == nil {
		return
	}
	wt := t.workers[addr]
	if wt == nil {
		wt = &workerTel{cpu: -1}
		t.workers[addr] = wt
	}
	if prev := wt.stats; prev != nil {
		if dt := now.Sub(wt.at).Seconds(); dt > 0 {
			wt.cpu = -1
			if st.CpuSeconds >= 0 && prev.CpuSeconds >= 0 {
				wt.cpu = max(0, 100*(st.CpuSeconds-prev.CpuSeconds)/dt)
			}
			wt.netIn = max(0, float64(st.NetIn-prev.NetIn)/dt)
			wt.netOut = max(0, float64(st.NetOut-prev.NetOut)/dt)
		}
	}
	wt.stats, wt.at = st, now
	sample := dashboard.WorkerSample{Time: now, CPU: wt.cpu, RSS: st.Rss, NetIn: wt.netIn, NetOut: wt.netOut,
		Executing: int(st.Tasks["executing"])}
	if m := b.Memory; m != nil {
		sample.Managed, sample.Spilled = m.Managed, m.Spilled
		if sample.RSS == 0 {
			sample.RSS = m.Process
		}
	}
	if len(wt.history) < historySize {
		wt.history = append(wt.history, sample)
	} else {
		wt.history[wt.next] = sample
		wt.next = (wt.next + 1) % historySize
	}
	for id, m := range t.shuffleDisk {
		delete(m, addr)
		if len(m) == 0 {
			delete(t.shuffleDisk, id)
		}
	}
	for _, sd := range st.Shuffles {
		m := t.shuffleDisk[sd.Id]
		if m == nil {
			m = map[string]int64{}
			t.shuffleDisk[sd.Id] = m
		}
		m[addr] += sd.Bytes
	}
	for _, d := range st.Disks {
		if d.Name == "scratch" || len(st.Disks) == 1 {
			t.freeDisk[addr] = d.Free
		}
	}
}

// history returns a worker's samples, oldest first. Called with t.mu held.
func (wt *workerTel) samples() []dashboard.WorkerSample {
	out := make([]dashboard.WorkerSample, 0, len(wt.history))
	out = append(out, wt.history[wt.next:]...)
	return append(out, wt.history[:wt.next]...)
}

// forgetWorker drops the telemetry of a worker the scheduler forgot (one
// of the workers gone long ago, beyond those it keeps).
func (t *telemetry) forgetWorker(addr string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.workers, addr)
	delete(t.freeDisk, addr)
}

// Profile returns the CPU profile of the cluster in the windows and
// samples opts selects, merged from the windows the workers sent; first
// it asks every worker to cut its current window, so that the samples
// until the call are in. Each sample carries the labels of its task
// (prefix, key, computation) and of its worker.
func (s *Server) Profile(ctx context.Context, opts diagnostics.ProfileOptions) (*profile.Profile, error) {
	s.flushTelemetry(ctx, opts.Workers)
	return s.tel.profiles.Profile(opts)
}

// flushTelemetry asks the workers (those named, or all) for what they
// would send with their next heartbeat, cutting their profile windows
// now, and takes it in.
func (s *Server) flushTelemetry(ctx context.Context, names []string) {
	s.mu.Lock()
	var addrs []string
	for addr, wc := range s.workers {
		if len(names) == 0 || slices.Contains(names, addr) || slices.Contains(names, wc.info.Name) {
			addrs = append(addrs, addr)
		}
	}
	s.mu.Unlock()
	ctx, cancel := context.WithTimeout(ctx, telemetryTimeout)
	defer cancel()
	var wg sync.WaitGroup
	for _, addr := range addrs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			conn, err := s.peers.Get(addr)
			if err != nil {
				return
			}
			b, err := wire.NewWorkerClient(conn).Telemetry(ctx, &wire.InfoRequest{})
			if err != nil {
				s.logger.Debug("could not get a worker's telemetry", "worker", addr, "error", err)
				return
			}
			b.Stats = nil // rates want the heartbeats' pace
			s.workerTelemetry(addr, b)
		}()
	}
	wg.Wait()
}

// FineMetrics returns the totals of the workers' fine performance
// metrics, per worker, prefix, activity and unit, asking each worker
// first for what it has not sent yet.
func (s *Server) FineMetrics(ctx context.Context) []diagnostics.FineMetric {
	s.flushTelemetry(ctx, nil)
	return s.tel.fine.Totals()
}

// encodeProfile writes p gzipped.
func encodeProfile(p *profile.Profile) ([]byte, error) {
	var buf bytes.Buffer
	if err := p.Write(&buf); err != nil {
		return nil, fmt.Errorf("encode the profile: %w", err)
	}
	return buf.Bytes(), nil
}

// profileOptions reads the options of a ProfileRequest.
func profileOptions(r *wire.ProfileRequest) diagnostics.ProfileOptions {
	opts := diagnostics.ProfileOptions{Prefixes: r.Prefixes, Workers: r.Workers}
	if r.StartUnixNano != 0 {
		opts.Start = time.Unix(0, r.StartUnixNano)
	}
	if r.StopUnixNano != 0 {
		opts.Stop = time.Unix(0, r.StopUnixNano)
	}
	return opts
}

func (x *service) Profile(ctx context.Context, r *wire.ProfileRequest) (*wire.ProfileReply, error) {
	p, err := x.s.Profile(ctx, profileOptions(r))
	if err != nil {
		return nil, err
	}
	b, err := encodeProfile(p)
	if err != nil {
		return nil, err
	}
	return &wire.ProfileReply{Profile: b}, nil
}

func (x *service) FineMetrics(ctx context.Context, _ *wire.InfoRequest) (*wire.FineMetricsReply, error) {
	ms := x.s.FineMetrics(ctx)
	rep := &wire.FineMetricsReply{Metrics: make([]*wire.FineMetric, len(ms))}
	for i, m := range ms {
		rep.Metrics[i] = &wire.FineMetric{Worker: m.Worker, Prefix: m.Prefix, Activity: m.Activity, Unit: m.Unit,
			Value: m.Value}
	}
	return rep, nil
}
