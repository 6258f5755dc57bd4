package dashboard

import (
	"slices"
	"sync"
	"time"

	"github.com/shoal-data/shoal/diagnostics"
)

// ReportSummary sums up the period of a performance report.
type ReportSummary struct {
	Start   time.Time `json:"start"`
	Stop    time.Time `json:"stop"`
	Seconds float64   `json:"seconds"` // wall time of the period
	// Tasks counts the task runs that ended in the period; Erred and
	// Cancelled are those of them that failed or were cancelled.
	Tasks     int `json:"tasks"`
	Erred     int `json:"erred"`
	Cancelled int `json:"cancelled"`
	// Computations counts the graphs submitted in the period.
	Computations int `json:"computations"`
	// BytesComputed is the size of the results of the tasks that ran,
	// BytesTransferred what workers fetched from one another (results
	// and shuffle files), BytesSpilled what they wrote to disk to free
	// memory.
	BytesComputed    int64 `json:"bytes_computed"`
	BytesTransferred int64 `json:"bytes_transferred"`
	BytesSpilled     int64 `json:"bytes_spilled"`
	// Workers counts the workers connected at the end, and those that
	// left during the period; Threads those of the connected ones.
	Workers int `json:"workers"`
	Threads int `json:"threads"`
	// Error is what the function of the report returned, if it failed.
	Error string `json:"error,omitempty"`
	// Dropped counts the events the report could not keep up with: its
	// numbers miss them.
	Dropped uint64 `json:"dropped,omitempty"`
}

// Period records what the pages show of a stretch of time, for a
// performance report: the events an executor publishes from Start to
// Stop, into a Recorder of its own, and what the executor's Source says
// at both ends. The task stream, progress, computations, errors, groups
// and shuffles of the report come from its Recorder: they are those of
// the period alone.
type Period struct {
	rec   *Recorder
	start time.Time
	sub   *diagnostics.Subscription
	fine  *FineMetrics // the Source's at the start
	bw    *Bandwidth

	mu  sync.Mutex
	sum ReportSummary
}

// NewPeriod returns a period that has not started: Recorder may be used
// to make the Source Start and Stop read.
func NewPeriod() *Period { return &Period{rec: NewRecorder(0)} }

// Recorder returns the period's Recorder. A Source that knows the shapes
// of the graphs submitted calls its AddGraph.
func (p *Period) Recorder() *Recorder { return p.rec }

// Start starts recording the events of hub, and notes what src counts
// since it began (fine metrics, bandwidth) to tell the period's own.
func (p *Period) Start(hub *diagnostics.Hub, src Source) {
	p.start = time.Now()
	p.fine, p.bw = src.FineMetrics(), src.Bandwidth()
	p.sub = hub.Subscribe(p.record)
}

// record takes a batch of events, as the hub's subscriber.
func (p *Period) record(evs []diagnostics.Event) {
	p.rec.Record(evs)
	p.mu.Lock()
	defer p.mu.Unlock()
	for i := range evs {
		e := &evs[i]
		switch e.Kind {
		case diagnostics.ComputeStarted:
			p.sum.Computations++
		case diagnostics.TaskTransition:
			if e.Worker == "" {
				continue
			}
			tr, ok := diagnostics.TaskRecordOf(e)
			if !ok {
				continue
			}
			p.sum.Tasks++
			switch tr.State {
			case diagnostics.StateErred:
				p.sum.Erred++
			case diagnostics.StateCancelled:
				p.sum.Cancelled++
			default:
				p.sum.BytesComputed += tr.Bytes
			}
		}
	}
}

// Stop stops recording and takes the snapshot of the period from src,
// with the period's own task stream (at most maxBars runs one by one;
// DefaultSnapshotBars when 0), progress, computations, errors, groups and
// shuffles, its fine metrics and bandwidth, and its summary. The runs of
// the workers' pages are src's that ended in the period. fnErr is
// what the function of the report returned. Call Stop once, after
// Start.
func (p *Period) Stop(src Source, maxBars int, fnErr error) *Snapshot {
	p.sub.Close() // delivers what was published until now
	stop := time.Now()
	if maxBars <= 0 {
		maxBars = DefaultSnapshotBars
	}
	s := Capture(src, CaptureOptions{Start: p.start, Stop: stop, MaxBars: maxBars})
	rec := p.rec
	threads := map[string]int{}
	for _, w := range s.Workers.Workers {
		threads[w.Address] = w.Threads
	}
	s.TaskWindow = rec.TaskWindow(stop, stop.Sub(p.start), maxBars)
	for i := range s.TaskWindow.Workers {
		s.TaskWindow.Workers[i].Threads = threads[s.TaskWindow.Workers[i].Address]
	}
	s.Status.Progress = rec.Progress()
	s.Status.StreamNext = rec.Count()
	s.Status.Computations = rec.Computations()
	s.Status.RecentErrors, s.Status.Erred = rec.Errors(5)
	s.Errors.Errors, s.Errors.Total = rec.Errors(0)
	s.Errors.Failed = []Computation{}
	for _, c := range s.Status.Computations {
		if c.State == "failed" {
			s.Errors.Failed = append(s.Errors.Failed, c)
		}
	}
	s.Groups = rec.Groups()
	s.Shuffles = periodShuffles(rec.Shuffles(), s.Shuffles)
	tl := rec.Timeline(p.start, stop, 200)
	for _, pr := range s.profiles() {
		pr.Timeline = tl
	}
	s.FineMetrics = fineSince(s.FineMetrics, p.fine)
	s.Bandwidth = bandwidthSince(s.Bandwidth, p.bw)

	p.mu.Lock()
	sum := p.sum
	p.mu.Unlock()
	sum.Start, sum.Stop, sum.Seconds = p.start, stop, stop.Sub(p.start).Seconds()
	sum.Dropped = p.sub.Dropped()
	for _, r := range s.FineMetrics.Rows {
		if r.Unit != diagnostics.UnitBytes {
			continue
		}
		switch r.Activity {
		case diagnostics.ActivityTransferIn:
			sum.BytesTransferred += int64(r.Value)
		case diagnostics.ActivitySpillWrite:
			sum.BytesSpilled += int64(r.Value)
		}
	}
	for _, w := range s.Workers.Workers {
		if !w.Gone {
			sum.Workers++
			sum.Threads += w.Threads
		} else if n := len(w.History); n > 0 && !w.History[n-1].Time.Before(p.start) {
			sum.Workers++
		}
	}
	if fnErr != nil {
		sum.Error = fnErr.Error()
	}
	s.Report = &sum
	return s
}

// Discard stops recording, for a period whose snapshot is not wanted.
func (p *Period) Discard() { p.sub.Close() }

// profiles returns the profiles the snapshot holds.
func (s *Snapshot) profiles() []*Profile {
	var out []*Profile
	if s.Profile != nil {
		out = append(out, s.Profile)
	}
	for _, m := range []map[string]*Profile{s.PrefixProfiles, s.WorkerProfiles} {
		for _, p := range m {
			out = append(out, p)
		}
	}
	return out
}

// periodShuffles are the shuffles of the period, with what each worker
// wrote, read and holds of them as the Source says.
func periodShuffles(own []Shuffle, src *Shuffles) *Shuffles {
	out := &Shuffles{Shuffles: []Shuffle{}}
	for _, sh := range own {
		for _, s := range src.Shuffles {
			if s.ID == sh.ID {
				sh.Workers = s.Workers
			}
		}
		out.Shuffles = append(out.Shuffles, sh)
	}
	return out
}

// fineSince returns the fine metrics added since before.
func fineSince(now, before *FineMetrics) *FineMetrics {
	type key struct{ prefix, activity, unit string }
	was := map[key]float64{}
	for _, r := range before.Rows {
		was[key{r.Prefix, r.Activity, r.Unit}] += r.Value
	}
	out := &FineMetrics{Activities: now.Activities, Rows: []FineMetricRow{}}
	for _, r := range now.Rows {
		r.Value -= was[key{r.Prefix, r.Activity, r.Unit}]
		if r.Value > 0 {
			out.Rows = append(out.Rows, r)
		}
	}
	return out
}

// bandwidthSince returns what moved since before.
func bandwidthSince(now, before *Bandwidth) *Bandwidth {
	out := &Bandwidth{Workers: []string{}, Pairs: []Transfer{}, Prefixes: []PrefixTransfer{}}
	for _, t := range now.Pairs {
		for _, b := range before.Pairs {
			if b.From == t.From && b.To == t.To {
				t.Bytes, t.Seconds, t.Count = t.Bytes-b.Bytes, t.Seconds-b.Seconds, t.Count-b.Count
			}
		}
		if t.Count > 0 || t.Bytes > 0 {
			out.Pairs = append(out.Pairs, t)
			for _, w := range []string{t.From, t.To} {
				if !slices.Contains(out.Workers, w) {
					out.Workers = append(out.Workers, w)
				}
			}
		}
	}
	slices.Sort(out.Workers)
	for _, t := range now.Prefixes {
		for _, b := range before.Prefixes {
			if b.Prefix == t.Prefix {
				t.Bytes, t.Seconds, t.Count = t.Bytes-b.Bytes, t.Seconds-b.Seconds, t.Count-b.Count
			}
		}
		if t.Count > 0 || t.Bytes > 0 {
			out.Prefixes = append(out.Prefixes, t)
		}
	}
	return out
}
