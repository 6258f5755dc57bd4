package dashboard

import (
	"cmp"
	"slices"
	"time"
)

// Snapshot is what the pages show, taken from a Source at one time so
// that the same pages can show it without the Source: a performance
// report carries one, a cluster dump keeps one, and FileHandler serves
// the pages from one. Its JSON is the topics' JSON, one field each.
//
// Offline, a page whose topic has parameters shows what the snapshot
// holds: the task stream of TaskWindow whatever window is asked for, the
// profile of the whole snapshot (or of one prefix, or of one worker:
// PrefixProfiles and WorkerProfiles; not of several at once), the logs of
// Logs filtered in the page, and the pages of the workers of WorkerPages.
type Snapshot struct {
	Time  time.Time `json:"time"`           // when it was taken
	Start time.Time `json:"start,omitzero"` // the start of the period it shows; zero: all that was kept

	Status      *Status       `json:"status"`
	TaskWindow  *TaskWindow   `json:"task_window"`
	Workers     *Workers      `json:"workers"`
	WorkerPages []*WorkerPage `json:"worker_pages"` // of the workers of Workers, at most MaxWorkerPages
	System      *System       `json:"system"`
	Groups      *Groups       `json:"groups"`
	Logs        *Logs         `json:"logs"`
	Errors      *Errors       `json:"errors"`
	// Profile is the profile of the period; nil when the Source had
	// none (ProfileError says why).
	Profile        *Profile            `json:"profile,omitempty"`
	ProfileError   string              `json:"profile_error,omitempty"`
	PrefixProfiles map[string]*Profile `json:"prefix_profiles,omitempty"` // of each prefix alone, by prefix
	WorkerProfiles map[string]*Profile `json:"worker_profiles,omitempty"` // of each worker alone, by address
	FineMetrics    *FineMetrics        `json:"fine_metrics"`
	Bandwidth      *Bandwidth          `json:"bandwidth"`
	Shuffles       *Shuffles           `json:"shuffles"`
	// Report sums up the period of a performance report; nil in a
	// snapshot of no report.
	Report *ReportSummary `json:"report,omitempty"`
}

// The bounds of a snapshot.
const (
	// MaxWorkerPages bounds the workers whose pages a snapshot keeps.
	MaxWorkerPages = 256
	// MaxProfiles bounds the profiles of single prefixes, and of single
	// workers, a snapshot keeps: those with the most CPU time.
	MaxProfiles = 16
	// DefaultSnapshotBars is how many task runs the task stream of a
	// snapshot shows one by one, unless told otherwise; beyond, it sums
	// them in buckets of time.
	DefaultSnapshotBars = 5000
	// snapshotWindow is the task stream of a snapshot of no period.
	snapshotWindow = 15 * time.Minute
)

// CaptureOptions say what of a Source a snapshot takes.
type CaptureOptions struct {
	// Start and Stop bound the period to take: worker samples, logs,
	// errors and profile samples out of it are left out. A zero Start
	// takes all that was kept (the task stream of the last 15 minutes);
	// a zero Stop is now.
	Start, Stop time.Time
	// MaxBars is how many task runs the task stream shows one by one
	// (DefaultSnapshotBars when 0); beyond, they are summed in buckets.
	MaxBars int
}

// Capture takes a snapshot of src: every topic, the page of each worker,
// and the profiles of the whole period, of each prefix and of each worker.
func Capture(src Source, opts CaptureOptions) *Snapshot {
	if opts.Stop.IsZero() {
		opts.Stop = time.Now()
	}
	if opts.MaxBars <= 0 {
		opts.MaxBars = DefaultSnapshotBars
	}
	window := snapshotWindow
	if !opts.Start.IsZero() {
		window = max(opts.Stop.Sub(opts.Start), time.Second)
	}
	s := &Snapshot{Time: opts.Stop, Start: opts.Start, Status: src.Snapshot(),
		TaskWindow: src.TaskWindow(window, opts.MaxBars), Workers: src.Workers(), System: src.System(),
		Groups: src.Groups(), Logs: src.Logs(LogQuery{Limit: maxLogLimit}), Errors: src.Errors(),
		FineMetrics: src.FineMetrics(), Bandwidth: src.Bandwidth(), Shuffles: src.Shuffles()}
	for _, w := range s.Workers.Workers {
		if len(s.WorkerPages) == MaxWorkerPages {
			break
		}
		if p := src.Worker(w.Address); p != nil {
			s.WorkerPages = append(s.WorkerPages, p)
		}
	}
	s.captureProfiles(src, ProfileQuery{Start: opts.Start, Stop: opts.Stop})
	s.since(opts.Start)
	return s
}

// captureProfiles takes the profile of q, and of each of its prefixes
// and workers alone: of the MaxProfiles workers with the most CPU time,
// and of the MaxProfiles prefixes that ran the longest (a profile of a
// prefix merges every window: only those are asked for).
func (s *Snapshot) captureProfiles(src Source, q ProfileQuery) {
	p, err := src.Profile(q)
	if err != nil {
		s.ProfileError = err.Error()
		return
	}
	s.Profile = p
	byCPU := func(names []string, query func(string) ProfileQuery) map[string]*Profile {
		out := map[string]*Profile{}
		for _, n := range names {
			if p, err := src.Profile(query(n)); err == nil && p.Samples > 0 {
				out[n] = p
			}
		}
		for len(out) > MaxProfiles {
			least := ""
			for n, p := range out {
				if least == "" || p.Seconds < out[least].Seconds {
					least = n
				}
			}
			delete(out, least)
		}
		return out
	}
	s.PrefixProfiles = byCPU(busiest(p.Prefixes, p.Timeline, MaxProfiles), func(n string) ProfileQuery {
		return ProfileQuery{Start: q.Start, Stop: q.Stop, Prefixes: []string{n}}
	})
	s.WorkerProfiles = byCPU(p.Workers, func(n string) ProfileQuery {
		return ProfileQuery{Start: q.Start, Stop: q.Stop, Workers: []string{n}}
	})
}

// busiest returns the n prefixes that ran the longest by tl, the first
// of prefixes for those tl does not know.
func busiest(prefixes []string, tl Timeline, n int) []string {
	busy := map[string]float64{}
	for i, p := range tl.Prefixes {
		for _, b := range tl.Busy[i] {
			busy[p] += b
		}
	}
	out := slices.Clone(prefixes)
	slices.SortStableFunc(out, func(a, b string) int { return cmp.Compare(busy[b], busy[a]) })
	return out[:min(n, len(out))]
}

// since leaves out what happened before start: worker samples, logs and
// errors.
func (s *Snapshot) since(start time.Time) {
	if start.IsZero() {
		return
	}
	before := func(t time.Time) bool { return t.Before(start) }
	for i := range s.Workers.Workers {
		w := &s.Workers.Workers[i]
		w.History = slices.DeleteFunc(w.History, func(x WorkerSample) bool { return before(x.Time) })
	}
	for _, p := range s.WorkerPages {
		p.Worker.History = slices.DeleteFunc(p.Worker.History, func(x WorkerSample) bool { return before(x.Time) })
		p.Logs = slices.DeleteFunc(p.Logs, func(x LogEntry) bool { return before(x.Time) })
		p.Tasks = slices.DeleteFunc(p.Tasks, func(x TaskRun) bool { return before(x.Stop) })
	}
	n := len(s.Logs.Records)
	s.Logs.Records = slices.DeleteFunc(s.Logs.Records, func(x LogEntry) bool { return before(x.Time) })
	s.Logs.Matched -= n - len(s.Logs.Records)
	s.Status.Logs = slices.DeleteFunc(s.Status.Logs, func(x LogRecord) bool { return before(x.Time) })
	s.Errors.Errors = slices.DeleteFunc(s.Errors.Errors, func(x ErrorRecord) bool { return before(x.Time) })
	s.Errors.Failed = slices.DeleteFunc(s.Errors.Failed, func(x Computation) bool { return before(x.Started) })
	s.Errors.Total = len(s.Errors.Errors)
	s.Status.Computations = slices.DeleteFunc(s.Status.Computations, func(x Computation) bool {
		return before(x.Started)
	})
}
