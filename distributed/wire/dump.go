package wire

import (
	"time"

	"github.com/shoal-data/shoal/diagnostics/dump"
)

// EncodeTransitions writes transitions of a story as messages.
func EncodeTransitions(ts []dump.Transition) []*DumpTransition {
	out := make([]*DumpTransition, len(ts))
	for i, t := range ts {
		out[i] = &DumpTransition{Key: t.Key, From: t.From, To: t.To, Cause: t.Cause, Stimulus: t.Stimulus,
			Worker: t.Worker, Error: t.Error, Seq: t.Seq}
		if !t.Time.IsZero() {
			out[i].TimeUnixNano = t.Time.UnixNano()
		}
	}
	return out
}

// DecodeTransitions reads transitions written by EncodeTransitions.
func DecodeTransitions(ms []*DumpTransition) []dump.Transition {
	out := make([]dump.Transition, len(ms))
	for i, m := range ms {
		out[i] = dump.Transition{Key: m.Key, From: m.From, To: m.To, Cause: m.Cause, Stimulus: m.Stimulus,
			Worker: m.Worker, Error: m.Error, Seq: m.Seq}
		if m.TimeUnixNano != 0 {
			out[i].Time = time.Unix(0, m.TimeUnixNano)
		}
	}
	return out
}
