package wire

import (
	"time"

	"github.com/shoal-data/shoal/diagnostics"
	"github.com/shoal-data/shoal/graph"
)

// EncodeAlert writes an alert for the wire.
func EncodeAlert(a *diagnostics.Alert) *AlertInfo {
	w := &AlertInfo{Name: a.Name, Severity: a.Severity, Worker: a.Worker, Path: a.Path, Key: string(a.Key),
		Shuffle: a.Shuffle, Value: a.Value, Threshold: a.Threshold, Message: a.Message, Action: a.Action,
		StartUnixNano: a.Start.UnixNano()}
	if !a.End.IsZero() {
		w.EndUnixNano = a.End.UnixNano()
	}
	return w
}

// DecodeAlert reads an alert of the wire.
func DecodeAlert(w *AlertInfo) diagnostics.Alert {
	a := diagnostics.Alert{Name: w.Name, Severity: w.Severity, Worker: w.Worker, Path: w.Path, Key: graph.Key(w.Key),
		Shuffle: w.Shuffle, Value: w.Value, Threshold: w.Threshold, Message: w.Message, Action: w.Action,
		Start: time.Unix(0, w.StartUnixNano)}
	if w.EndUnixNano != 0 {
		a.End = time.Unix(0, w.EndUnixNano)
	}
	return a
}
