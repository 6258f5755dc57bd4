package diagnostics

import (
	"context"
	"time"

	"github.com/shoal-data/shoal/graph"
)

// Alert is something wrong that an executor noticed while a computation
// ran, such as a worker's disk nearly full, a straggler task or a skewed
// shuffle: what, where, and what to do about it. Package
// diagnostics/alert has the rules that raise alerts, and names them.
//
// An alert is raised once, when its rule first holds, and resolved once,
// when it no longer does: executors publish an AlertRaised event, then an
// AlertResolved event with End set.
type Alert struct {
	Name     string `json:"name"`     // the rule, such as "disk-full" (see package diagnostics/alert)
	Severity string `json:"severity"` // "warning", or "critical" when work is about to fail
	Worker   string `json:"worker"`   // the worker it is about
	// Path, Key and Shuffle say what on the worker it is about, when
	// there is one: a directory, a task, a shuffle's ID.
	Path    string    `json:"path,omitempty"`
	Key     graph.Key `json:"key,omitempty"`
	Shuffle string    `json:"shuffle,omitempty"`
	// Value is what was measured, Threshold what the rule compares it
	// with, in the rule's unit (a fraction, bytes, bytes per second or
	// seconds).
	Value     float64   `json:"value"`
	Threshold float64   `json:"threshold"`
	Message   string    `json:"message"` // what is wrong, naming the worker and the task, path or shuffle
	Action    string    `json:"action"`  // what to do about it
	Start     time.Time `json:"start"`   // when it was raised
	End       time.Time `json:"end,omitzero"`
}

// ID identifies an alert: alerts of one rule about the same worker and
// the same path, task or shuffle are one alert.
func (a *Alert) ID() string {
	return a.Name + "|" + a.Worker + "|" + a.Path + "|" + a.Shuffle + "|" + string(a.Key)
}

// Active reports whether the alert is not resolved yet.
func (a *Alert) Active() bool { return a.End.IsZero() }

// String returns the message and the action.
func (a *Alert) String() string { return a.Message + ": " + a.Action }

// AlertSource is an executor that raises alerts: both the cluster's
// client and the in-process executor are. Alerts returns the alerts
// raised and not resolved, oldest first, and the last ones resolved.
type AlertSource interface {
	Alerts(ctx context.Context) (active, recent []Alert, err error)
}
