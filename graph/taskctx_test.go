package graph_test

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/shoal-data/shoal/graph"
)

type meter struct {
	mu  sync.Mutex
	got []string
}

func (m *meter) AddMetric(task graph.Key, activity, unit string, value float64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.got = append(m.got, string(task)+" "+activity+" "+unit)
}

// TestTaskContext checks what a task's code learns from its context: its
// logger is tagged with the task, its metrics reach the executor's meter,
// and outside a task both do nothing.
func TestTaskContext(t *testing.T) {
	var buf bytes.Buffer
	env := &graph.Env{Logger: slog.New(slog.NewTextHandler(&buf, nil)).With("worker", "w1"), Worker: "w1"}
	task := &graph.Task{Key: "load-0123456789abcdef-3", Op: "myapp.load"}
	m := &meter{}
	reg := graph.NewRegistry()
	var seen graph.Key
	op := &graph.Op{Name: "myapp.load", Run: func(ctx context.Context, in graph.OpInput) (any, error) {
		graph.Logger(ctx).Info("loading", "path", "a.csv")
		graph.AddMetric(ctx, "disk-read", "bytes", 10)
		seen, _ = graph.TaskKey(ctx)
		return nil, nil
	}}
	env.Registry = reg
	ctx := graph.TaskContext(context.Background(), task, env, "7", m)
	if _, err := graph.RunOp(ctx, op, task, nil, env); err != nil {
		t.Fatal(err)
	}
	line := buf.String()
	for _, want := range []string{"msg=loading", "worker=w1", "key=load-0123456789abcdef-3", "prefix=load",
		"computation=7", "path=a.csv"} {
		if !strings.Contains(line, want) {
			t.Errorf("the task's record %q has no %s", line, want)
		}
	}
	if len(m.got) != 1 || m.got[0] != "load-0123456789abcdef-3 disk-read bytes" || seen != task.Key {
		t.Errorf("metrics %v, key %q", m.got, seen)
	}

	// RunOp makes the context itself when the executor did not.
	buf.Reset()
	if _, err := graph.RunOp(context.Background(), op, task, nil, env); err != nil {
		t.Fatal(err)
	}
	if line := buf.String(); !strings.Contains(line, "key=load-0123456789abcdef-3") || strings.Contains(line, "computation") {
		t.Errorf("without TaskContext: %q", line)
	}

	// Outside a task.
	graph.Logger(context.Background()).Info("nowhere")
	graph.AddMetric(context.Background(), "x", "seconds", 1)
	if k, ok := graph.TaskKey(context.Background()); ok || k != "" {
		t.Errorf("TaskKey outside a task: %q %v", k, ok)
	}
}
