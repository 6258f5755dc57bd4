package dump

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

var t0 = time.Date(2025, 1, 2, 15, 4, 5, 0, time.UTC)

func TestSaveRead(t *testing.T) {
	f := &File{Version: Version, Time: t0, Executor: "cluster",
		Scheduler: Scheduler{Address: "127.0.0.1:8786", Tasks: []Task{{Key: "a-0", Op: "a", State: "memory", Bytes: 8}},
			Counts: map[string]int{"memory": 1}},
		Workers: []Worker{{Address: "127.0.0.1:1", State: &WorkerState{Time: t0, Threads: 2,
			Data: map[string]int64{"a-0": 8}}}}}
	path := filepath.Join(t.TempDir(), "d.json.gz")
	if err := Save(path, f); err != nil {
		t.Fatal(err)
	}
	back, err := Read(path)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back, f) {
		t.Errorf("read back %+v, want %+v", back, f)
	}
}

func TestDecodeErrors(t *testing.T) {
	gz := func(v any) []byte {
		var b bytes.Buffer
		zw := gzip.NewWriter(&b)
		json.NewEncoder(zw).Encode(v)
		zw.Close()
		return b.Bytes()
	}
	tests := []struct {
		name string
		data []byte
		want string
	}{
		{"not gzipped", []byte(`{"version": 1}`), "not gzipped JSON"},
		{"no version", gz(map[string]any{"time": t0}), "no version: not a Shoal cluster dump"},
		{"a later version", gz(map[string]any{"version": Version + 1}), "use a newer shoal"},
		{"not JSON", gz("x")[:10], "dump:"},
	}
	for _, tc := range tests {
		if _, err := Decode(bytes.NewReader(tc.data)); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
	if _, err := Read(filepath.Join(t.TempDir(), "none")); err == nil {
		t.Error("read a file that does not exist")
	}
}

func TestStory(t *testing.T) {
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	f := &File{
		Scheduler: Scheduler{
			Tasks: []Task{{Key: "f-0", State: "erred", Error: "boom"}},
			Transitions: []Transition{
				{Time: at(0), Key: "f-0", From: "released", To: "waiting"},
				{Time: at(0), Key: "g-0", From: "released", To: "waiting"},
				{Time: at(5), Key: "f-0", From: "processing", To: "erred"},
			}},
		Workers: []Worker{
			{Address: "w1", State: &WorkerState{Transitions: []Transition{
				{Time: at(2), Key: "f-0", From: "ready", To: "executing", Worker: "w1"},
				{Time: at(4), Key: "f-0", From: "executing", To: "error", Worker: "w1", Error: "boom"},
			}}},
			{Address: "w2", Gone: true},
		},
	}
	var got []string
	for _, tr := range f.Story("f-0") {
		got = append(got, tr.Worker+":"+tr.From+"->"+tr.To+":"+tr.Error)
	}
	want := []string{":released->waiting:", "w1:ready->executing:", "w1:executing->error:boom", ":processing->erred:boom"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("story %q, want %q", got, want)
	}
}

func TestStuck(t *testing.T) {
	f := &File{Time: t0,
		Scheduler: Scheduler{
			Tasks: []Task{
				{Key: "a", State: "processing", ProcessingOn: "gone"},
				{Key: "b", State: "processing", ProcessingOn: "silent"},
				{Key: "c", State: "processing", ProcessingOn: "w1"},
				{Key: "d", State: "processing", ProcessingOn: "w1"},
				{Key: "e", State: "processing", ProcessingOn: "w1"},
				{Key: "f", State: "waiting"},
			},
			Workers: []SchedulerWorker{{Address: "w1"}, {Address: "silent"}}},
		Workers: []Worker{
			{Address: "gone", Gone: true},
			{Address: "silent", Error: "deadline exceeded"},
			{Address: "w1", State: &WorkerState{Time: t0, Data: map[string]int64{"d": 1}, Tasks: []WorkerTask{
				{Key: "e", State: "executing", Since: t0.Add(-time.Second)},
				{Key: "g", State: "waiting", Since: t0.Add(-2 * time.Hour), Missing: []string{"x"}},
			}}},
		},
	}
	var got []string
	for _, s := range f.Stuck(time.Minute) {
		got = append(got, s.Key+" "+s.Worker+": "+s.Why)
	}
	want := []string{
		"a gone: its worker is gone",
		"b silent: its worker did not answer: deadline exceeded",
		"c w1: its worker does not know it: neither runs it, nor waits to, nor holds it",
		"g w1: waiting for 2h0m0s for its inputs [x]",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("stuck:\n%q\nwant\n%q", got, want)
	}
	f.Scheduler.Workers = nil
	if s := f.Stuck(time.Minute); len(s) != 5 || s[3].Key != "f" || s[3].Why != "no worker is connected to run it" {
		t.Errorf("with no worker connected: %+v", s)
	}
}
