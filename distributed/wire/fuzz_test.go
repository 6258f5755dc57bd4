package wire

import (
	"encoding/json"
	"maps"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/shoal-data/shoal/diagnostics"
	"github.com/shoal-data/shoal/diagnostics/dump"
)

// FuzzDecodeReplies decodes arbitrary bytes as the replies and requests
// whose contents have decoders of their own: alerts, the transitions of
// a story, the configuration of the Environ plugin, the variables of an
// Environ request and a RunReply's error. Nothing panics, and what
// decodes encodes back to the same message.
func FuzzDecodeReplies(f *testing.F) {
	start := time.Unix(1735830245, 123456789)
	f.Add(marshalFor(f, &AlertsReply{Active: []*AlertInfo{EncodeAlert(&diagnostics.Alert{Name: "disk-full",
		Severity: "warning", Worker: "w", Path: "/tmp", Value: 0.93, Threshold: 0.9, Start: start})},
		Recent: []*AlertInfo{EncodeAlert(&diagnostics.Alert{Name: "skew", Key: "k", Start: start, End: start.Add(time.Minute)})}}))
	f.Add(marshalFor(f, &DumpStoryReply{Transitions: EncodeTransitions([]dump.Transition{
		{Time: start, Key: "a-1", From: "waiting", To: "processing", Cause: "graph-submitted", Seq: 3},
		{Key: "a-1", From: "executing", To: "error", Worker: "w", Error: "boom"}})}))
	f.Add(marshalFor(f, &PluginRequest{Name: EnvironPlugin, Config: []byte(`{"A":"1","B":""}`)}))
	f.Add(marshalFor(f, &PluginRequest{Name: EnvironPlugin, Config: []byte(`{"A=B":"1"}`)}))
	f.Add(marshalFor(f, &EnvironRequest{Vars: map[string]string{"A": "1"}}))
	f.Add(marshalFor(f, &RunReply{Error: EncodeError(context0{})}))
	// Fields of other messages are not this one's: they do not come back.
	unmarshal := proto.UnmarshalOptions{DiscardUnknown: true}.Unmarshal
	f.Fuzz(func(t *testing.T, b []byte) {
		var alerts AlertsReply
		if unmarshal(b, &alerts) == nil {
			for _, w := range append(alerts.Active, alerts.Recent...) {
				a := DecodeAlert(w)
				if back := EncodeAlert(&a); !proto.Equal(back, w) {
					t.Errorf("alert %v decoded to %+v, which encodes to %v", w, a, back)
				}
			}
		}
		var story DumpStoryReply
		if unmarshal(b, &story) == nil {
			ts := DecodeTransitions(story.Transitions)
			back := &DumpStoryReply{Transitions: EncodeTransitions(ts)}
			if !proto.Equal(back, &story) {
				t.Errorf("transitions %v decoded to %+v, which encode to %v", &story, ts, back)
			}
		}
		var plugin PluginRequest
		if unmarshal(b, &plugin) == nil {
			if vars, err := DecodeEnviron(plugin.Config); err == nil {
				js, err := json.Marshal(vars)
				if err != nil {
					t.Fatal(err)
				}
				again, err := DecodeEnviron(js)
				if err != nil || !maps.Equal(again, vars) {
					t.Errorf("environ %q decoded to %q, then %q, %v", plugin.Config, vars, again, err)
				}
			}
		}
		var env EnvironRequest
		if unmarshal(b, &env) == nil {
			_ = CheckEnviron(env.Vars)
		}
		var run RunReply
		if unmarshal(b, &run) == nil {
			if err := DecodeError(run.Error); err != nil {
				_ = err.Error()
			}
		}
	})
}

// context0 is an error of no registered type.
type context0 struct{}

func (context0) Error() string { return "a failure" }

func marshalFor(tb testing.TB, m proto.Message) []byte {
	tb.Helper()
	b, err := proto.Marshal(m)
	if err != nil {
		tb.Fatal(err)
	}
	return b
}
