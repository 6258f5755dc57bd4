package dump

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/shoal-data/shoal/diagnostics/dashboard"
)

// fuzzFile is a dump with something in each part, the seed of FuzzDecode.
func fuzzFile() *File {
	return &File{Version: Version, Time: t0, Executor: "cluster",
		Scheduler: Scheduler{Address: "127.0.0.1:8786", ID: "s", Started: t0.Add(-time.Hour), Clock: t0,
			Tasks: []Task{
				{Key: "a-0", Op: "a", State: "memory", Bytes: 8, WhoHas: []string{"w1"}, Priority: [3]int64{0, 1, 2}},
				{Key: "b-0", Op: "b", State: "processing", ProcessingOn: "w2", Deps: []string{"a-0"}, WaitingOn: 1},
				{Key: "c-0", Op: "c", State: "erred", Error: "boom"},
			},
			Workers: []SchedulerWorker{{Address: "w1", Threads: 2, State: "running", Memory: Memory{Managed: 8},
				Resources: map[string]float64{"GPU": 1}}},
			Clients: map[string][]string{"c1": {"a-0"}}, Counts: map[string]int{"memory": 1, "erred": 1},
			Transitions: []Transition{{Time: t0, Key: "c-0", From: "processing", To: "erred", Cause: "task-failed", Seq: 3}},
			Logs:        []dashboard.LogRecord{{Time: t0, Level: "INFO", Message: "hello"}}},
		Workers: []Worker{
			{Address: "w1", Name: "one", State: &WorkerState{Time: t0, Threads: 2, Data: map[string]int64{"a-0": 8},
				Tasks:    []WorkerTask{{Key: "d-0", State: "waiting", Since: t0.Add(-time.Hour), Missing: []string{"a-0"}}},
				Fetching: []Fetch{{Key: "a-0", From: []string{"w2"}, Since: t0}},
				Events:   []Event{{Time: t0, Kind: "run-task", Key: "d-0"}}}},
			{Address: "w2", Error: "deadline exceeded"},
			{Address: "w3", Gone: true, Reason: "killed"},
		},
		Dashboard: &dashboard.Snapshot{Time: t0, Status: &dashboard.Status{Workers: []dashboard.Worker{{Address: "w1"}}},
			Errors: &dashboard.Errors{Errors: []dashboard.ErrorRecord{{Key: "c-0", Worker: "w1", Error: "boom"}}}},
	}
}

func gzipped(b []byte) []byte {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	zw.Write(b)
	zw.Close()
	return buf.Bytes()
}

// FuzzDecode reads arbitrary JSON as a dump (gzipped, as Decode wants it;
// raw: the bytes as they are), as shoal dump and shoal dashboard --dump
// read a file of any origin. Decode returns an error or a File whose
// stories and stuck tasks can be asked for; what it read writes again, to
// a dump that reads back the same.
func FuzzDecode(f *testing.F) {
	js, err := json.Marshal(fuzzFile())
	if err != nil {
		f.Fatal(err)
	}
	f.Add(js, false)
	f.Add(js[:len(js)/2], false)
	f.Add(gzipped(js)[:40], true)
	f.Add([]byte(`{"version":1,"dashboard":{},"workers":[{"state":{}}],"scheduler":{"tasks":[{"state":"processing","processing_on":"x"}]}}`), false)
	f.Add([]byte(`{"version":2}`), false)
	f.Fuzz(func(t *testing.T, data []byte, raw bool) {
		if !raw {
			data = gzipped(data)
		}
		d, err := Decode(bytes.NewReader(data))
		if err != nil {
			if !strings.HasPrefix(err.Error(), "dump: ") {
				t.Errorf("the error does not say it is of a dump: %v", err)
			}
			return
		}
		var keys []string
		for _, tk := range d.Scheduler.Tasks {
			keys = append(keys, tk.Key)
		}
		d.Story(keys...)
		d.Stuck(time.Minute)
		var buf bytes.Buffer
		if err := Write(&buf, d); err != nil {
			t.Fatalf("a dump read does not write again: %v", err)
		}
		again, err := Decode(bytes.NewReader(buf.Bytes()))
		if err != nil {
			t.Fatalf("a dump written does not read back: %v", err)
		}
		a, _ := json.Marshal(d)
		b, _ := json.Marshal(again)
		if !bytes.Equal(a, b) {
			t.Fatalf("written and read back, the dump changed:\n%s\n%s", a, b)
		}
	})
}
