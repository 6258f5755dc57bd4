package local

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/shoal-data/shoal/diagnostics"
	"github.com/shoal-data/shoal/diagnostics/alert"
	"github.com/shoal-data/shoal/graph"
)

// alertEvents sends the alerts an executor publishes on a channel.
func alertEvents(t *testing.T, e *Executor) <-chan diagnostics.Alert {
	ch := make(chan diagnostics.Alert, 256)
	sub := e.Events().Subscribe(func(evs []diagnostics.Event) {
		for _, ev := range evs {
			if ev.Alert != nil {
				select {
				case ch <- *ev.Alert:
				default:
					t.Errorf("too many alerts: %+v", ev.Alert)
				}
			}
		}
	})
	t.Cleanup(sub.Close)
	return ch
}

// nextAlert returns the next alert of a rule raised (or resolved), and
// fails the test after a minute.
func nextAlert(t *testing.T, ch <-chan diagnostics.Alert, name string, raised bool) diagnostics.Alert {
	t.Helper()
	timeout := time.After(time.Minute)
	for {
		select {
		case a := <-ch:
			if a.Name == name && a.Active() == raised {
				return a
			}
		case <-timeout:
			t.Fatalf("no %s alert (raised %v)", name, raised)
		}
	}
}

func TestAlertStraggler(t *testing.T) {
	reg := testRegistry(t)
	// "wait": returns at once, or waits to be cancelled when its params
	// say so.
	if err := reg.Register(graph.Op{Name: "test.wait", Signature: "v1", Run: func(ctx context.Context, in graph.OpInput) (any, error) {
		if len(in.Params) > 0 {
			<-ctx.Done()
			return nil, ctx.Err()
		}
		return nil, nil
	}}); err != nil {
		t.Fatal(err)
	}
	e := New(WithRegistry(reg), WithThreads(2), WithProfileWindow(100*time.Millisecond),
		WithAlerts(alert.Config{StragglerMin: 300 * time.Millisecond, StragglerTasks: 3}))
	defer e.Close()
	alerts := alertEvents(t, e)
	g := graph.New()
	var quick []graph.Key
	for i := range 5 {
		k := graph.NewKey("wait", "0badf00d", i)
		quick = append(quick, k)
		g.Add(&graph.Task{Key: k, Op: "test.wait"})
	}
	slow := graph.NewKey("wait", "0badf00d", 9)
	g.Add(&graph.Task{Key: slow, Op: "test.wait", Params: []byte("forever")})
	if _, err := e.Compute(context.Background(), g, quick...); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := e.Compute(ctx, g, slow)
		done <- err
	}()
	a := nextAlert(t, alerts, alert.Straggler, true)
	if a.Key != slow || a.Worker != "local" || !strings.Contains(a.Message, string(slow)) {
		t.Errorf("straggler alert %+v, want of %s", a, slow)
	}
	active, _, err := e.Alerts(context.Background())
	if err != nil || len(active) != 1 || active[0].ID() != a.ID() {
		t.Errorf("Alerts: %+v, %v; want the straggler", active, err)
	}
	cancel()
	<-done
	if r := nextAlert(t, alerts, alert.Straggler, false); r.ID() != a.ID() {
		t.Errorf("resolved %+v, want %s", r, a.ID())
	}
}

func TestAlertSkew(t *testing.T) {
	reg := testRegistry(t)
	// "read": says it read the bytes of its params from its files.
	if err := reg.Register(graph.Op{Name: "test.read", Signature: "v1", Run: func(ctx context.Context, in graph.OpInput) (any, error) {
		v, err := in.Env.Registry.UnmarshalValue(in.Params)
		if err != nil {
			return nil, err
		}
		graph.AddMetric(ctx, diagnostics.ActivityDiskRead, diagnostics.UnitBytes, float64(v.(int64)))
		return nil, nil
	}}); err != nil {
		t.Fatal(err)
	}
	e := New(WithRegistry(reg), WithThreads(2), WithAlerts(alert.Config{SkewMinBytes: 1 << 20}))
	defer e.Close()
	alerts := alertEvents(t, e)
	const id = "3fa2c1d0"
	g := graph.New()
	var splits, collects []graph.Key
	for i := range 3 {
		k := graph.NewKey("shuffle-split", id, i)
		splits = append(splits, k)
		g.Add(&graph.Task{Key: k, Op: "test.noop"})
	}
	for j, mib := range []int64{2, 3, 2, 40, 3, 2} {
		k := graph.NewKey("shuffle-collect", id, j)
		collects = append(collects, k)
		g.Add(&graph.Task{Key: k, Op: "test.read", Deps: splits, Params: param(t, reg, mib<<20)})
	}
	if _, err := e.Compute(context.Background(), g, collects...); err != nil {
		t.Fatal(err)
	}
	a := nextAlert(t, alerts, alert.ShuffleSkew, true)
	if a.Key != collects[3] || a.Shuffle != id || a.Value != 40<<20 {
		t.Errorf("skew alert %+v, want of %s", a, collects[3])
	}
	if r := nextAlert(t, alerts, alert.ShuffleSkew, false); r.ID() != a.ID() {
		t.Errorf("resolved %+v, want %s (the computation ended)", r, a.ID())
	}
}

func TestAlertSpilling(t *testing.T) {
	reg := testRegistry(t)
	e := New(WithRegistry(reg), WithThreads(1), WithMemoryLimit(1<<20), WithLocalDir(t.TempDir()),
		WithAlerts(alert.Config{SpillRate: 1 << 10, SpillWindow: time.Minute}))
	defer e.Close()
	alerts := alertEvents(t, e)
	g := graph.New()
	var keys []graph.Key
	for i := range 8 {
		k := graph.NewKey("big", "0badf00d", i)
		keys = append(keys, k)
		g.Add(&graph.Task{Key: k, Op: "test.big", Params: param(t, reg, int64(64<<10))}) // 512 KiB each
	}
	if _, err := e.Compute(context.Background(), g, keys...); err != nil {
		t.Fatal(err)
	}
	a := nextAlert(t, alerts, alert.Spilling, true)
	if a.Worker != "local" || a.Value <= 1<<10 {
		t.Errorf("spilling alert %+v", a)
	}
}
