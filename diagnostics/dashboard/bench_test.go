package dashboard

import (
	"fmt"
	"net/url"
	"testing"
	"time"
)

// bigSource answers as a cluster of 200 workers would, with a task
// window of 3000 runs, to measure what the dashboard itself costs per
// refresh of a topic: the encoding of its JSON, made once whatever the
// number of viewers.
type bigSource struct{ *fakeSource }

const bigWorkers = 200

func (bigSource) Snapshot() *Status {
	st := &Status{Time: t0, Tasks: map[string]int{"memory": 60_000, "waiting": 40_000}}
	for i := range bigWorkers {
		st.Workers = append(st.Workers, worker(fmt.Sprintf("10.0.%d.%d:40000", i/250, i%250), 0))
	}
	for i := range 100 {
		st.Progress = append(st.Progress, Progress{Prefix: fmt.Sprintf("prefix-%d", i), Total: 1000, Done: 600, Memory: 500})
	}
	return st
}

func (bigSource) Workers() *Workers {
	ws := &Workers{Time: t0}
	for i := range bigWorkers {
		ws.Workers = append(ws.Workers, workerStats(fmt.Sprintf("10.0.%d.%d:40000", i/250, i%250), 0))
	}
	return ws
}

func (bigSource) TaskWindow(window time.Duration, bars int) *TaskWindow {
	tw := &TaskWindow{Start: t0, Stop: t0.Add(window), Prefixes: []string{"a", "b"}}
	for i := range bigWorkers {
		tw.Workers = append(tw.Workers, StreamWorker{Address: fmt.Sprintf("10.0.%d.%d:40000", i/250, i%250), Threads: 4})
	}
	for i := range bars {
		st := t0.Add(time.Duration(i) * 10 * time.Millisecond)
		tw.Runs = append(tw.Runs, TaskRun{Seq: uint64(i), Worker: tw.Workers[i%bigWorkers].Address,
			Key: fmt.Sprintf("a-%d", i), Prefix: "a", Start: st, Stop: st.Add(time.Second), State: "memory"})
	}
	tw.Count = len(tw.Runs)
	return tw
}

// BenchmarkEvent measures the making of a topic's event from what the
// Source answered: the dashboard's cost per topic watched and interval,
// the Source's own aside (it answers ready-made values here).
func BenchmarkEvent(b *testing.B) {
	src := bigSource{newFake()}
	for _, name := range []string{"status", "workers", "task-window"} {
		q, err := topicNamed(name).parse(url.Values{})
		if err != nil {
			b.Fatal(err)
		}
		v, _ := q.fetch(src, t0)
		b.Run(name, func(b *testing.B) {
			fixed := query{fetch: func(Source, time.Time) (any, error) { return v, nil }}
			var n int
			for b.Loop() {
				n = len(makeEvent(name, fixed, src, t0))
			}
			b.SetBytes(int64(n))
		})
	}
}
