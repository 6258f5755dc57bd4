package distributed_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/shoal-data/shoal/distributed"
	"github.com/shoal-data/shoal/distributed/server"
	"github.com/shoal-data/shoal/graph"
)

var rows = graph.MustRegisterFunc("distributed_test.rows", func(_ context.Context, r arrow.RecordBatch) (int, error) {
	return int(r.NumRows()), nil
})

func TestScatterProcesses(t *testing.T) {
	_, c := processCluster(t, distributed.LocalClusterOptions{})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	b := array.NewInt64Builder(memory.DefaultAllocator)
	for i := range 1000 {
		b.Append(int64(i))
	}
	col := b.NewArray()
	rec := array.NewRecordBatch(arrow.NewSchema([]arrow.Field{{Name: "x", Type: arrow.PrimitiveTypes.Int64}}, nil),
		[]arrow.Array{col}, 1000)
	fs, err := c.Scatter(ctx, []any{10, 20, 30, rec})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Wait(ctx, fs...); err != nil {
		t.Fatal(err)
	}
	holders := map[string]bool{}
	for _, f := range fs {
		if f.Err() != nil || len(f.Workers()) != 1 {
			t.Fatalf("scattered future %s: %v, held by %v", f.Key(), f.Err(), f.Workers())
		}
		holders[f.Workers()[0]] = true
	}
	if len(holders) != 2 {
		t.Errorf("values went to %v, want both workers", holders)
	}
	// Used where they are by later tasks, and gathered back.
	got, err := graph.Compute[int](ctx, c, sum.Call(graph.List(double.Call(fs[0].Delayed()), fs[1].Delayed(),
		fs[2].Delayed(), rows.Call(fs[3].Delayed()))))
	if err != nil || got != 20+20+30+1000 {
		t.Fatalf("sum of scattered values: %v, %v", got, err)
	}
	vals, err := c.Gather(ctx, fs...)
	if err != nil {
		t.Fatal(err)
	}
	if vals[0] != 10 || vals[1] != 20 || vals[2] != 30 {
		t.Errorf("gathered %v", vals[:3])
	}
	if r, ok := vals[3].(arrow.RecordBatch); !ok || r.NumRows() != 1000 {
		t.Errorf("gathered record %v", vals[3])
	}
}

func TestDatasets(t *testing.T) {
	lc, c := inProcess(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	fs, err := c.Map(ctx, double.Name(), []any{1, 2, 3})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.PublishDataset(ctx, "doubles", fs, false); err != nil {
		t.Fatal(err)
	}
	if err := c.PublishDataset(ctx, "doubles", fs, false); err == nil || !strings.Contains(err.Error(), "exists") {
		t.Errorf("publishing twice: %v", err)
	}
	// The values outlive the client that computed them.
	c.Close()
	c2, err := lc.Client(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	names, err := c2.ListDatasets(ctx)
	if err != nil || !slices.Equal(names, []string{"doubles"}) {
		t.Fatalf("datasets %v, %v", names, err)
	}
	got, err := c2.GetDataset(ctx, "doubles")
	if err != nil {
		t.Fatal(err)
	}
	vals, err := c2.Gather(ctx, got...)
	if err != nil || !slices.Equal(vals, []any{2, 4, 6}) {
		t.Fatalf("dataset values %v, %v", vals, err)
	}
	if _, err := c2.GetDataset(ctx, "nope"); err == nil || !strings.Contains(err.Error(), `no dataset "nope"`) {
		t.Errorf("missing dataset: %v", err)
	}
	for _, f := range got {
		f.Release()
	}
	if err := c2.UnpublishDataset(ctx, "doubles"); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the dataset's values are released", func() bool { return lc.Scheduler().NumTasks() == 0 })
}

func TestLogsAndTopicEvents(t *testing.T) {
	_, c := inProcess(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := c.LogEvent(ctx, "progress", "half way"); err != nil {
		t.Fatal(err)
	}
	if err := c.LogEvent(ctx, "progress", "done"); err != nil {
		t.Fatal(err)
	}
	evs, err := c.TopicEvents(ctx, "progress")
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) != 2 || evs[0].Message != "half way" || evs[1].Message != "done" || evs[0].Client != c.ID() {
		t.Errorf("events %+v", evs)
	}
	if evs, _ := c.TopicEvents(ctx, "other"); len(evs) != 0 {
		t.Errorf("events of another topic: %v", evs)
	}
	if err := c.LogEvent(ctx, "", "x"); err == nil {
		t.Error("an event without a topic was taken")
	}
	logs, err := c.SchedulerLogs(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	joined := 0
	for _, r := range logs {
		if r.Message == "worker joined" && r.Attrs["worker"] != "" && r.Attrs["scheduler"] != "" {
			joined++
		}
	}
	if joined != 2 {
		t.Errorf("%d 'worker joined' records with attributes in %v", joined, logs)
	}
	if last, _ := c.SchedulerLogs(ctx, 1); len(last) != 1 || last[0].Message != logs[len(logs)-1].Message {
		t.Errorf("last record: %v", last)
	}
	// A failing task's warning reaches the scheduler with the key and op.
	if _, err := graph.Compute[int](ctx, c, fail.Call(5)); err == nil {
		t.Fatal("no error")
	}
	eventually(t, "the worker's warning reached the scheduler", func() bool {
		wl, err := c.WorkerLogs(ctx, 0)
		if err != nil {
			return false
		}
		for _, l := range wl {
			for _, r := range l.Records {
				if r.Message == "task failed" && strings.HasPrefix(r.Attrs["key"], "distributed_test.fail") &&
					r.Attrs["op"] == fail.Name() && strings.Contains(r.Attrs["error"], "boom") {
					return true
				}
			}
		}
		return false
	})
}

// recordingPlugin records what a scheduler plugin is told.
type recordingPlugin struct {
	mu    sync.Mutex
	added []string
	gone  []string
	trans map[string]bool
	seen  chan struct{}
}

func (p *recordingPlugin) Transition(k graph.Key, from, to string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.trans[from+">"+to] = true
	if to == "memory" {
		select {
		case p.seen <- struct{}{}:
		default:
		}
	}
}

func (p *recordingPlugin) WorkerAdded(w string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.added = append(p.added, w)
}

func (p *recordingPlugin) WorkerRemoved(w, reason string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.gone = append(p.gone, w+": "+reason)
}

// countingPlugin is a worker plugin that counts its setups and the tasks
// it sees end.
type countingPlugin struct {
	mu   sync.Mutex
	done int
}

var (
	countingMu sync.Mutex
	counting   []*countingPlugin
)

func init() {
	distributed.RegisterWorkerPlugin("distributed_test.counting", func([]byte) (distributed.WorkerPlugin, error) {
		p := &countingPlugin{}
		countingMu.Lock()
		counting = append(counting, p)
		countingMu.Unlock()
		return p, nil
	})
}

func (p *countingPlugin) Setup(context.Context, *graph.Env) error { return nil }
func (p *countingPlugin) Teardown(context.Context) error          { return nil }
func (p *countingPlugin) Transition(_ graph.Key, from, to string) {
	if from == "executing" && to == "memory" {
		p.mu.Lock()
		p.done++
		p.mu.Unlock()
	}
}

func TestPlugins(t *testing.T) {
	sp := &recordingPlugin{trans: map[string]bool{}, seen: make(chan struct{}, 1)}
	lc, c := newCluster(t, distributed.LocalClusterOptions{Workers: 1, InProcess: true,
		Scheduler: server.Config{Plugins: []server.Plugin{sp}}})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	st, err := c.RegisterWorkerPlugin(ctx, distributed.PluginSpec{Name: "distributed_test.counting"})
	if err != nil || len(st) != 1 {
		t.Fatalf("register: %v %v", st, err)
	}
	// A worker that joins later gets it too.
	runJoiningWorker(t, lc)
	eventually(t, "the late worker set the plugin up", func() bool {
		countingMu.Lock()
		defer countingMu.Unlock()
		return len(counting) == 2
	})
	if _, err := graph.Compute[int](ctx, c, double.Call(4)); err != nil {
		t.Fatal(err)
	}
	select {
	case <-sp.seen:
	case <-ctx.Done():
		t.Fatal("the scheduler plugin saw no task reach memory")
	}
	countingMu.Lock()
	total := 0
	for _, p := range counting {
		p.mu.Lock()
		total += p.done
		p.mu.Unlock()
	}
	countingMu.Unlock()
	if total != 1 {
		t.Errorf("worker plugins saw %d tasks end, want 1", total)
	}
	sp.mu.Lock()
	defer sp.mu.Unlock()
	if len(sp.added) != 2 || !sp.trans["processing>memory"] {
		t.Errorf("scheduler plugin: added %v, transitions %v", sp.added, sp.trans)
	}
}

func TestCancelledContext(t *testing.T) {
	lc, c := inProcess(t)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := graph.Compute[int](ctx, c, sleep.Call(60_000))
		done <- err
	}()
	eventually(t, "the task runs", func() bool {
		info, err := c.Info(context.Background())
		return err == nil && info.Tasks["processing"] == 1
	})
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("compute: %v, want context.Canceled", err)
	}
	eventually(t, "the cancelled work is released", func() bool { return lc.Scheduler().NumTasks() == 0 })
}
