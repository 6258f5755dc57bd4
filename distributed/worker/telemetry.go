package worker

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"maps"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc/metadata"

	"github.com/shoal-data/shoal/diagnostics"
	"github.com/shoal-data/shoal/diagnostics/alert"
	"github.com/shoal-data/shoal/distributed/internal/metrics"
	"github.com/shoal-data/shoal/distributed/internal/procmem"
	"github.com/shoal-data/shoal/distributed/wire"
	"github.com/shoal-data/shoal/graph"
	"github.com/shoal-data/shoal/internal/spillfile"
)

// What a worker tells about itself beyond its tasks: its CPU profile,
// fine performance metrics, transfers and use of resources, sent to the
// scheduler with every heartbeat.

// maxQueuedWindows bounds the profile windows waiting to be sent: a
// worker cut off from its scheduler keeps the newest.
const maxQueuedWindows = 64

// diskEvery is how often a worker measures its directories (walking them
// costs).
const diskEvery = 2 * time.Second

// The gRPC metadata by which a worker that fetches from a peer says who
// it is and for which prefix, so that the peer counts what it serves.
const (
	mdPeer   = "shoal-peer"
	mdPrefix = "shoal-prefix"
)

// telemetry is the worker's telemetry. Its fields have their own locks or
// are guarded by Worker.mu where said.
type telemetry struct {
	profiler *diagnostics.Profiler // nil when profiling is off
	fine     diagnostics.FineMetrics
	meter    graph.Meter
	reads    *alert.Reads // counts what tasks read, for the scheduler's skew alert; meter is it

	netIn, netOut atomic.Int64 // bytes fetched from peers, served to peers and clients
	// Fetches under way, and the bytes they get as their holders
	// reported.
	fetching, fetchingBytes atomic.Int64
	serving, servingBytes   atomic.Int64 // values being served, and their bytes

	inputs runInputs // of runs, while the scheduler traces them

	mu        sync.Mutex
	windows   []*wire.ProfileWindow // cut, not sent yet
	transfers map[transferKey]*wire.TransferStat
	shuffleIO map[string]*wire.ShuffleIO // by task group, since the last heartbeat

	// Guarded by Worker.mu.
	times    map[string]*taskTimes // per prefix, not yet in fine
	idleMark time.Time
	idleTime time.Duration
	compID   uint64 // the last computation named, and its name
	compName string
	diskAt   time.Time
	disks    []*wire.DiskUsage
	shuffles []*wire.ShuffleDisk
}

type transferKey struct {
	peer, prefix string
	out          bool
}

// taskTimes adds up the times of a prefix's tasks until they go into the
// fine metrics at the next heartbeat.
type taskTimes struct {
	compute, queued, waiting time.Duration
}

// startTelemetry starts the profiler, unless told not to.
func (w *Worker) startTelemetry() {
	t := &w.tel
	t.reads = alert.NewReads(workerMeter{w})
	t.meter = t.reads
	t.transfers = map[transferKey]*wire.TransferStat{}
	t.shuffleIO = map[string]*wire.ShuffleIO{}
	t.times = map[string]*taskTimes{}
	if !w.cfg.NoProfile {
		t.profiler = diagnostics.StartProfiler(diagnostics.ProfilerOptions{Window: w.cfg.ProfileWindow,
			Worker: w.addr, Logger: w.logger, OnWindow: w.profileWindow})
	}
}

// profileWindow queues a window of CPU samples for the scheduler and
// counts its CPU time in the fine metrics. It runs on the sampler's
// goroutine.
func (w *Worker) profileWindow(pw *diagnostics.ProfileWindow) {
	for prefix, sec := range diagnostics.CPUByPrefix(pw.Profile) {
		w.tel.fine.Add(w.addr, prefix, diagnostics.ActivityCPU, diagnostics.UnitSeconds, sec)
	}
	var buf bytes.Buffer
	if err := pw.Profile.Write(&buf); err != nil {
		w.logger.Warn("cannot encode a CPU profile window; its samples are lost", "error", err)
		return
	}
	t := &w.tel
	t.mu.Lock()
	t.windows = append(t.windows, &wire.ProfileWindow{StartUnixNano: pw.Start.UnixNano(),
		StopUnixNano: pw.Stop.UnixNano(), Profile: buf.Bytes()})
	if over := len(t.windows) - maxQueuedWindows; over > 0 {
		t.windows = append([]*wire.ProfileWindow(nil), t.windows[over:]...)
	}
	t.mu.Unlock()
}

// inFlight counts fetches starting (n > 0) or ending.
func (t *telemetry) inFlight(n, bytes int64) {
	t.fetching.Add(n)
	t.fetchingBytes.Add(bytes)
}

// takeWindows returns the windows not sent yet.
func (t *telemetry) takeWindows() []*wire.ProfileWindow {
	t.mu.Lock()
	defer t.mu.Unlock()
	ws := t.windows
	t.windows = nil
	return ws
}

// transfer counts bytes moved between this worker and peer for results
// of prefix: fetched (out false) or served to a client (out true).
func (t *telemetry) transfer(peer, prefix string, out bool, bytes int64, d time.Duration) {
	k := transferKey{peer, prefix, out}
	t.mu.Lock()
	ts := t.transfers[k]
	if ts == nil {
		ts = &wire.TransferStat{Peer: peer, Prefix: prefix, Out: out}
		t.transfers[k] = ts
	}
	ts.Bytes += bytes
	ts.Seconds += d.Seconds()
	ts.Count++
	t.mu.Unlock()
}

// workerMeter is the graph.Meter of the worker's tasks: their fine
// metrics, and what tasks write to and read from their files (a
// shuffle's shards, written by its splits and read, here or from a peer,
// by its collects or the tasks they were fused into), by task group.
type workerMeter struct{ w *Worker }

func (m workerMeter) AddMetric(task graph.Key, activity, unit string, value float64) {
	w := m.w
	prefix := task.Prefix()
	w.tel.fine.Add(w.addr, prefix, activity, unit, value)
	if unit != diagnostics.UnitBytes {
		return
	}
	var written, read int64
	switch activity {
	case diagnostics.ActivityDiskWrite:
		written = int64(value)
	case diagnostics.ActivityDiskRead, diagnostics.ActivityTransferIn:
		read = int64(value)
	default:
		return
	}
	group := task.Group()
	t := &w.tel
	t.mu.Lock()
	io := t.shuffleIO[group]
	if io == nil {
		io = &wire.ShuffleIO{Group: group}
		t.shuffleIO[group] = io
	}
	io.Written += written
	io.Read += read
	t.mu.Unlock()
}

// takeShuffleIO and takeTransfers return what was counted since they were
// last called.
func (t *telemetry) takeShuffleIO() []*wire.ShuffleIO {
	t.mu.Lock()
	defer t.mu.Unlock()
	return takeAll(t.shuffleIO)
}

func (t *telemetry) takeTransfers() []*wire.TransferStat {
	t.mu.Lock()
	defer t.mu.Unlock()
	return takeAll(t.transfers)
}

// takeAll empties m and returns its values.
func takeAll[K comparable, V any](m map[K]V) []V {
	if len(m) == 0 {
		return nil
	}
	out := slices.Collect(maps.Values(m))
	clear(m)
	return out
}

// accountIdle adds the idle thread time since the last call while the
// worker had tasks. Called with w.mu held, before the state changes.
func (w *Worker) accountIdle(now time.Time) {
	t := &w.tel
	if !t.idleMark.IsZero() && w.state.Tasks() > 0 {
		if idle := w.cfg.Threads - w.state.Executing(); idle > 0 {
			t.idleTime += time.Duration(idle) * now.Sub(t.idleMark)
		}
	}
	t.idleMark = now
}

// addTimes counts a task's times. Called with w.mu held.
func (w *Worker) addTimes(prefix string, compute, queued, waiting time.Duration) {
	tt := w.tel.times[prefix]
	if tt == nil {
		tt = &taskTimes{}
		w.tel.times[prefix] = tt
	}
	tt.compute += compute
	tt.queued += queued
	tt.waiting += waiting
}

// foldTimes moves the tasks' times and the idle time into the fine
// metrics. Called with w.mu held.
func (w *Worker) foldTimes() {
	t := &w.tel
	for prefix, tt := range t.times {
		t.fine.Add(w.addr, prefix, diagnostics.ActivityCompute, diagnostics.UnitSeconds, tt.compute.Seconds())
		t.fine.Add(w.addr, prefix, diagnostics.ActivityQueued, diagnostics.UnitSeconds, tt.queued.Seconds())
		t.fine.Add(w.addr, prefix, diagnostics.ActivityWaiting, diagnostics.UnitSeconds, tt.waiting.Seconds())
	}
	clear(t.times)
	t.fine.Add(w.addr, "", diagnostics.ActivityIdle, diagnostics.UnitSeconds, t.idleTime.Seconds())
	t.idleTime = 0
}

// computation names a computation for logs and profiles. Called with
// w.mu held.
func (w *Worker) computation(id uint64) string {
	if id == 0 {
		return ""
	}
	if w.tel.compID != id {
		w.tel.compID, w.tel.compName = id, strconv.FormatUint(id, 10)
	}
	return w.tel.compName
}

// heartbeat fills in what a heartbeat batch carries beyond memory. Called
// without w.mu.
func (w *Worker) heartbeat(b *wire.WorkerBatch) {
	now := time.Now()
	t := &w.tel
	w.mu.Lock()
	st := &wire.WorkerStats{CpuSeconds: -1, Fds: -1, Tasks: map[string]int32{}}
	for s, n := range w.state.TaskStates() {
		st.Tasks[s] = int32(n)
	}
	for _, r := range w.running {
		st.Running = append(st.Running, &wire.AlertRunning{Key: string(r.key), StartUnixNano: r.start.UnixNano()})
	}
	measure := now.Sub(t.diskAt) >= diskEvery
	if measure {
		t.diskAt = now
	}
	w.mu.Unlock()
	if !w.cfg.InProcess {
		st.CpuSeconds = procmem.CPUSeconds()
		st.Rss = procmem.RSS()
		st.Fds = int32(procmem.OpenFiles())
	}
	st.NetIn, st.NetOut = t.netIn.Load(), t.netOut.Load()
	if measure {
		disks, shuffles := w.measureDisks()
		w.mu.Lock()
		t.disks, t.shuffles = disks, shuffles
		w.mu.Unlock()
	}
	w.mu.Lock()
	st.Disks, st.Shuffles = t.disks, t.shuffles
	w.mu.Unlock()
	b.Stats = st
	w.telemetryBatch(b)
}

// telemetryBatch adds to b what was added to the fine metrics, the
// profile windows, the transfers and the shuffle I/O since the last
// batch. Called without w.mu.
func (w *Worker) telemetryBatch(b *wire.WorkerBatch) {
	t := &w.tel
	w.mu.Lock()
	w.accountIdle(time.Now())
	w.foldTimes()
	w.mu.Unlock()
	for _, m := range t.fine.Drain() {
		b.Metrics = append(b.Metrics, &wire.FineMetric{Prefix: m.Prefix, Activity: m.Activity, Unit: m.Unit,
			Value: m.Value})
	}
	b.Profiles = t.takeWindows()
	b.Transfers = t.takeTransfers()
	b.ShuffleIo = t.takeShuffleIO()
}

// measureDisks measures the worker's directories.
func (w *Worker) measureDisks() ([]*wire.DiskUsage, []*wire.ShuffleDisk) {
	dirs := [][2]string{{"local", w.dir}}
	if w.env.LocalDir != w.dir {
		dirs = append(dirs, [2]string{"scratch", w.env.LocalDir})
	}
	var disks []*wire.DiskUsage
	var shuffles []*wire.ShuffleDisk
	for _, d := range dirs {
		u, err := metrics.Disk(d[1])
		if err != nil {
			w.logger.Debug("cannot measure disk usage", "path", d[1], "error", err)
		}
		disks = append(disks, &wire.DiskUsage{Name: d[0], Path: d[1], Used: u.Used, Free: u.Free, Size: u.Size})
		for id, n := range u.Shuffles {
			shuffles = append(shuffles, &wire.ShuffleDisk{Id: id, Bytes: n})
		}
	}
	return disks, shuffles
}

// peerContext tells the peer a request goes to who asks, and for which
// prefix.
func (w *Worker) peerContext(ctx context.Context, prefix string) context.Context {
	return metadata.AppendToOutgoingContext(ctx, mdPeer, w.addr, mdPrefix, prefix)
}

// requester returns the peer that made a request (its address, or
// "client") and the prefix it asked for, if it said.
func requester(ctx context.Context) (peer, prefix string) {
	md, _ := metadata.FromIncomingContext(ctx)
	peer, prefix = "client", ""
	if v := md.Get(mdPeer); len(v) > 0 {
		peer = v[0]
	}
	if v := md.Get(mdPrefix); len(v) > 0 {
		prefix = v[0]
	}
	return peer, prefix
}

// served counts bytes of results of prefix served to peer (a worker's
// address, or "client") in d.
func (w *Worker) served(peer, prefix string, bytes int64, d time.Duration) {
	w.tel.netOut.Add(bytes)
	w.metrics.transfer.WithLabelValues("out").Add(float64(bytes))
	f := &w.tel.fine
	f.Add(w.addr, prefix, diagnostics.ActivityTransferOut, diagnostics.UnitSeconds, d.Seconds())
	f.Add(w.addr, prefix, diagnostics.ActivityTransferOut, diagnostics.UnitBytes, float64(bytes))
	f.Add(w.addr, prefix, diagnostics.ActivityTransferOut, diagnostics.UnitCount, 1)
	if peer == "client" {
		// What goes to peers, they count as fetched.
		w.tel.transfer(peer, prefix, true, bytes, d)
	}
}

// inService counts values starting (n > 0) or ending to be served, and
// their bytes.
func (t *telemetry) inService(n, bytes int64) {
	t.serving.Add(n)
	t.servingBytes.Add(bytes)
}

// fetched counts a value of key fetched from peer in d.
func (w *Worker) fetched(peer string, k graph.Key, bytes int64, d time.Duration) {
	prefix := k.Prefix()
	w.tel.netIn.Add(bytes)
	w.metrics.transfer.WithLabelValues("in").Add(float64(bytes))
	f := &w.tel.fine
	f.Add(w.addr, prefix, diagnostics.ActivityTransferIn, diagnostics.UnitSeconds, d.Seconds())
	f.Add(w.addr, prefix, diagnostics.ActivityTransferIn, diagnostics.UnitBytes, float64(bytes))
	f.Add(w.addr, prefix, diagnostics.ActivityTransferIn, diagnostics.UnitCount, 1)
	w.tel.transfer(peer, prefix, false, bytes, d)
}

// countingReader counts what a task reads of a peer's file, and the time
// it waits in Read (from opening the file on), and tells on Close.
type countingReader struct {
	io.ReadCloser
	n    int64
	wait time.Duration // in Read, and opening
	done func(n int64, d time.Duration)
	once sync.Once
}

func (r *countingReader) Read(p []byte) (int, error) {
	start := time.Now()
	n, err := r.ReadCloser.Read(p)
	r.wait += time.Since(start)
	r.n += int64(n)
	return n, err
}

func (r *countingReader) Close() error {
	err := r.ReadCloser.Close()
	r.once.Do(func() { r.done(r.n, r.wait) })
	return err
}

// stopTelemetry stops the profiler.
func (w *Worker) stopTelemetry() {
	w.tel.profiler.Stop()
}

// FineMetrics returns the totals of the worker's fine performance
// metrics.
func (w *Worker) FineMetrics() []diagnostics.FineMetric {
	w.mu.Lock()
	w.accountIdle(time.Now())
	w.foldTimes()
	w.mu.Unlock()
	return w.tel.fine.Totals()
}

// spillMetrics counts a spill or its reading back in the fine metrics of
// the value's prefix: the file system's time, bytes and count under
// activity, the rest under code (encode or decode).
func (w *Worker) spillMetrics(k graph.Key, activity, code string, size int64, tm spillfile.Timing) {
	p, f := k.Prefix(), &w.tel.fine
	f.Add(w.addr, p, activity, diagnostics.UnitSeconds, tm.IO.Seconds())
	f.Add(w.addr, p, activity, diagnostics.UnitBytes, float64(size))
	f.Add(w.addr, p, activity, diagnostics.UnitCount, 1)
	f.Add(w.addr, p, code, diagnostics.UnitSeconds, (tm.Total - tm.IO).Seconds())
}

// Logger returns the worker's logger: what is logged with it at level
// Info and above goes to the scheduler with the worker's own records.
func (w *Worker) Logger() *slog.Logger { return w.logger }
