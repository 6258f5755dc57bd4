// Package dump is the format of a cluster dump: the state of a Shoal
// cluster at one moment, in one file, for a post-mortem of a cluster that
// may be gone. distributed.Client.DumpClusterState writes one (and
// local.Executor.DumpClusterState, of the in-process executor, in the
// same format); Read reads one back; the shoal command inspects one
// offline:
//
//	shoal dump inspect FILE                 workers, erred and stuck tasks, memory
//	shoal dump story FILE KEY...            how tasks came to be where they are
//	shoal dump tasks FILE --state erred     the tasks in a state
//	shoal dashboard --dump FILE             the dashboard's pages, from the file
//
// # Format
//
// A dump is one File as JSON, gzipped. Its Version says which version of
// this format it follows: Version is the one this package writes and
// reads. A later version adds fields and never changes the meaning of
// those here; a reader of an older version skips the fields it does not
// know.
//
// A File holds the scheduler's view of the cluster (Scheduler: every
// task it holds, every worker, its transition log and its log records),
// the view of each worker (Worker: its own state machine, transition log
// and handled events as it answered, its log records, its last reports
// of resources and its fine metrics), and what the dashboard showed
// (Dashboard). A worker that did not answer has Error set and no State;
// a worker that had left has Gone set and only what the scheduler kept
// of it: its logs and reports.
//
// Times are RFC 3339, sizes in bytes. Task states on the scheduler are
// "released", "waiting", "queued", "processing", "memory", "erred",
// "forgotten" and "cancelled"; on a worker, "waiting" (for its inputs),
// "ready" (for a thread), "executing", "memory", "error", "fetching",
// "missing" (no peer could give it), "cancelled" and "released".
package dump

import (
	"bufio"
	"cmp"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/shoal-data/shoal/diagnostics"
	"github.com/shoal-data/shoal/diagnostics/dashboard"
)

// Version is the version of the format this package writes and reads.
const Version = 1

// File is a cluster dump.
type File struct {
	Version int       `json:"version"`
	Time    time.Time `json:"time"` // when it was taken
	// Executor is "cluster" for a dump of a cluster, "local" for one of
	// the in-process executor.
	Executor  string    `json:"executor"`
	Scheduler Scheduler `json:"scheduler"`
	Workers   []Worker  `json:"workers"` // by address; those gone after the others
	// Dashboard is what the dashboard's pages show of the cluster; nil
	// when it could not be had.
	Dashboard *dashboard.Snapshot `json:"dashboard,omitempty"`
}

// Scheduler is the scheduler's state.
type Scheduler struct {
	Address string    `json:"address,omitempty"` // host:port of its service
	ID      string    `json:"id,omitempty"`
	Started time.Time `json:"started,omitzero"`
	// Clock is the time of the last event the scheduling core handled.
	Clock   time.Time         `json:"clock,omitzero"`
	Tasks   []Task            `json:"tasks"`   // every task it holds, by key
	Workers []SchedulerWorker `json:"workers"` // connected, in order of arrival
	// Clients are the keys each client (a computation) holds or waits
	// for, by client.
	Clients map[string][]string `json:"clients"`
	Counts  map[string]int      `json:"counts"` // tasks by state
	// Transitions are the last transitions of every task, oldest first
	// (100,000 by default).
	Transitions []Transition          `json:"transitions"`
	Logs        []dashboard.LogRecord `json:"logs"` // its last log records, oldest first
}

// Task is a task as the scheduler holds it.
type Task struct {
	Key       string   `json:"key"`
	Op        string   `json:"op"`
	State     string   `json:"state"`
	Priority  [3]int64 `json:"priority"` // the user's, the graph's generation, the order in the graph: lower first
	Deps      []string `json:"deps,omitempty"`
	WaitingOn int      `json:"waiting_on,omitempty"` // dependencies not in memory yet
	Waiters   int      `json:"waiters,omitempty"`    // tasks waiting for this one
	WhoHas    []string `json:"who_has,omitempty"`    // workers holding its value
	// ProcessingOn is the worker the scheduler sent it to run on.
	ProcessingOn string   `json:"processing_on,omitempty"`
	Bytes        int64    `json:"bytes,omitempty"` // of its value
	Clients      []string `json:"clients,omitempty"`
	RetriesLeft  int      `json:"retries_left,omitempty"`
	Error        string   `json:"error,omitempty"` // why it erred
}

// SchedulerWorker is a worker as the scheduler sees it.
type SchedulerWorker struct {
	Address     string             `json:"address"`
	Threads     int                `json:"threads"`
	MemoryLimit int64              `json:"memory_limit,omitempty"`
	Resources   map[string]float64 `json:"resources,omitempty"`
	State       string             `json:"state"` // "running", "paused", "closing" or "gone"
	Processing  int                `json:"processing"`
	Bytes       int64              `json:"bytes"` // of the values it holds
	Memory      Memory             `json:"memory"`
}

// Memory is a worker's memory as it last reported it.
type Memory struct {
	Managed int64 `json:"managed"` // values held in memory
	Process int64 `json:"process"` // its process's resident memory; 0: unknown
	Spilled int64 `json:"spilled"` // values written to disk
}

// Transition is a task's change of state on the scheduler (Worker empty)
// or on a worker.
type Transition struct {
	Time     time.Time `json:"time"`
	Key      string    `json:"key"`
	From     string    `json:"from"`
	To       string    `json:"to"`
	Cause    string    `json:"cause"`              // the kind of event that caused it, such as "task-finished"; on a worker, "thread-free" starts a ready task
	Stimulus string    `json:"stimulus,omitempty"` // the id of the event, on the scheduler
	Seq      uint64    `json:"seq,omitempty"`      // the number of the event, on the scheduler
	Worker   string    `json:"worker,omitempty"`   // the worker whose transition it is; empty: the scheduler's
	Error    string    `json:"error,omitempty"`    // for a task that failed
}

// Worker is one worker: its own state and what the scheduler kept of it.
type Worker struct {
	Address string `json:"address"`
	Name    string `json:"name,omitempty"`
	// Gone says the worker had left the cluster; Reason says why.
	Gone   bool   `json:"gone,omitempty"`
	Reason string `json:"reason,omitempty"`
	// Error says why State could not be had from the worker.
	Error string       `json:"error,omitempty"`
	State *WorkerState `json:"state,omitempty"`
	// Logs are its last log records, oldest first, as the scheduler
	// kept them (gone workers' too).
	Logs []dashboard.LogRecord `json:"logs"`
	// Metrics are its last reports of resources (a second apart by
	// default), oldest first.
	Metrics []dashboard.WorkerSample `json:"metrics"`
	// FineMetrics are the totals of its fine performance metrics.
	FineMetrics []diagnostics.FineMetric `json:"fine_metrics"`
}

// WorkerState is a worker's state machine as the worker answered.
type WorkerState struct {
	Time        time.Time `json:"time"` // when it answered
	Threads     int       `json:"threads"`
	MemoryLimit int64     `json:"memory_limit,omitempty"`
	Paused      bool      `json:"paused,omitempty"` // it starts no task: its memory is above the pause threshold
	Memory      Memory    `json:"memory"`
	// Tasks are the tasks it was given and has not finished: waiting
	// for inputs, ready for a thread, or executing.
	Tasks    []WorkerTask     `json:"tasks"`
	Data     map[string]int64 `json:"data"`     // the values it holds: bytes by key
	Fetching []Fetch          `json:"fetching"` // the values it gets from peers
	// Transitions are its last transitions of tasks, oldest first; Events
	// the last events its state machine handled (10,000 each by
	// default).
	Transitions []Transition `json:"transitions"`
	Events      []Event      `json:"events"`
}

// WorkerTask is a task a worker was given.
type WorkerTask struct {
	Key         string    `json:"key"`
	Op          string    `json:"op"`
	State       string    `json:"state"`          // "waiting", "ready" or "executing"
	Since       time.Time `json:"since,omitzero"` // when it came to its state
	Computation uint64    `json:"computation,omitempty"`
	Missing     []string  `json:"missing,omitempty"` // the inputs it waits for
}

// Fetch is a value a worker gets from a peer.
type Fetch struct {
	Key   string    `json:"key"`
	From  []string  `json:"from"`
	Since time.Time `json:"since,omitzero"`
}

// Event is an event a worker's state machine handled: an instruction of
// the scheduler ("run-task", "fetch-key", "release-key", "cancel-task",
// "reset", "put"), or what happened on the worker ("executed",
// "fetched", "pause", "resume").
type Event struct {
	Time   time.Time `json:"time"`
	Kind   string    `json:"kind"`
	Key    string    `json:"key,omitempty"`
	Detail string    `json:"detail,omitempty"` // such as the error of a task, or the peers of a fetch
}

// Write writes f as a dump: gzipped JSON.
func Write(w io.Writer, f *File) error {
	zw := gzip.NewWriter(w)
	if err := json.NewEncoder(zw).Encode(f); err != nil {
		return fmt.Errorf("dump: encode: %w", err)
	}
	if err := zw.Close(); err != nil {
		return fmt.Errorf("dump: %w", err)
	}
	return nil
}

// Save writes f to the file path (see Write), whole or not at all: a
// file of that name is replaced once the dump is written.
func Save(path string, f *File) (err error) {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return fmt.Errorf("dump %s: %w", path, err)
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	bw := bufio.NewWriter(tmp)
	if err := Write(bw, f); err != nil {
		return fmt.Errorf("dump %s: %w", path, err)
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("dump %s: %w", path, err)
	}
	if err := tmp.Chmod(0o644); err != nil {
		return fmt.Errorf("dump %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("dump %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("dump %s: %w", path, err)
	}
	return nil
}

// Decode reads a dump written by Write. It fails for a dump of a later
// version than Version, naming it.
func Decode(r io.Reader) (*File, error) {
	zr, err := gzip.NewReader(r)
	if err != nil {
		return nil, fmt.Errorf("dump: not gzipped JSON: %w", err)
	}
	defer zr.Close()
	var f File
	if err := json.NewDecoder(zr).Decode(&f); err != nil {
		return nil, fmt.Errorf("dump: %w", err)
	}
	switch {
	case f.Version == 0:
		return nil, fmt.Errorf("dump: no version: not a Shoal cluster dump")
	case f.Version > Version:
		return nil, fmt.Errorf("dump: version %d, and this program reads up to version %d: use a newer shoal", f.Version, Version)
	}
	return &f, nil
}

// Read reads the dump in the file path.
func Read(path string) (*File, error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	f, err := Decode(bufio.NewReader(fh))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return f, nil
}

// Story returns the transitions of keys on the scheduler and on every
// worker, oldest first: how each task came to be where it is. A
// scheduler's transition to "erred" carries the task's error when the
// dump has it.
func (f *File) Story(keys ...string) []Transition {
	want := map[string]bool{}
	for _, k := range keys {
		want[k] = true
	}
	errs := map[string]string{}
	for _, t := range f.Scheduler.Tasks {
		if want[t.Key] && t.Error != "" {
			errs[t.Key] = t.Error
		}
	}
	pick := func(ts []Transition) []Transition {
		var out []Transition
		for _, t := range ts {
			if want[t.Key] {
				if t.Error == "" && t.Worker == "" && t.To == "erred" {
					t.Error = errs[t.Key]
				}
				out = append(out, t)
			}
		}
		return out
	}
	parts := [][]Transition{pick(f.Scheduler.Transitions)}
	for _, w := range f.Workers {
		if w.State != nil {
			parts = append(parts, pick(w.State.Transitions))
		}
	}
	return MergeStories(parts...)
}

// MergeStories merges transitions of the scheduler and the workers into
// one story, oldest first; transitions of the same time keep their
// order, the scheduler's first.
func MergeStories(parts ...[]Transition) []Transition {
	out := slices.Concat(parts...)
	slices.SortStableFunc(out, func(a, b Transition) int { return a.Time.Compare(b.Time) })
	return out
}

// SortWorkers orders workers by address, those gone after the others.
func SortWorkers(ws []Worker) {
	slices.SortFunc(ws, func(a, b Worker) int {
		ga, gb := 0, 0
		if a.Gone {
			ga = 1
		}
		if b.Gone {
			gb = 1
		}
		return cmp.Or(cmp.Compare(ga, gb), cmp.Compare(a.Address, b.Address))
	})
}

// Stuck is a task that looks stuck, and why.
type Stuck struct {
	Key    string `json:"key"`
	State  string `json:"state"`            // on the scheduler, or on Worker
	Worker string `json:"worker,omitempty"` // where it is stuck
	Why    string `json:"why"`
}

// Stuck returns the tasks that look stuck, by key: those the scheduler
// sent to a worker that is gone, did not answer, or does not know them;
// those a worker has run, or waited for the inputs of, for longer than
// after; and those that wait on the scheduler while no worker is
// connected.
func (f *File) Stuck(after time.Duration) []Stuck {
	var out []Stuck
	workers := map[string]*Worker{}
	for i := range f.Workers {
		workers[f.Workers[i].Address] = &f.Workers[i]
	}
	for _, t := range f.Scheduler.Tasks {
		switch {
		case t.State == "processing" && t.ProcessingOn != "":
			w := workers[t.ProcessingOn]
			why := ""
			switch {
			case w == nil || w.Gone:
				why = "its worker is gone"
			case w.State == nil:
				why = "its worker did not answer: " + w.Error
			case !w.State.knows(t.Key):
				why = "its worker does not know it: neither runs it, nor waits to, nor holds it"
			}
			if why != "" {
				out = append(out, Stuck{Key: t.Key, State: t.State, Worker: t.ProcessingOn, Why: why})
			}
		case (t.State == "waiting" || t.State == "queued") && len(f.Scheduler.Workers) == 0:
			out = append(out, Stuck{Key: t.Key, State: t.State, Why: "no worker is connected to run it"})
		}
	}
	for _, w := range f.Workers {
		if w.State == nil {
			continue
		}
		for _, t := range w.State.Tasks {
			if t.State == "ready" || t.Since.IsZero() {
				continue
			}
			if d := w.State.Time.Sub(t.Since); d > after {
				why := fmt.Sprintf("executing for %v", d.Round(time.Second))
				if t.State == "waiting" {
					why = fmt.Sprintf("waiting for %v for its inputs %v", d.Round(time.Second), t.Missing)
				}
				out = append(out, Stuck{Key: t.Key, State: t.State, Worker: w.Address, Why: why})
			}
		}
	}
	slices.SortStableFunc(out, func(a, b Stuck) int { return cmp.Compare(a.Key, b.Key) })
	return out
}

// knows says whether the worker runs key, waits to, or holds its value.
func (s *WorkerState) knows(key string) bool {
	if _, ok := s.Data[key]; ok {
		return true
	}
	return slices.ContainsFunc(s.Tasks, func(t WorkerTask) bool { return t.Key == key })
}
