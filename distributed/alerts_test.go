package distributed_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/shoal-data/shoal/dataframe"
	"github.com/shoal-data/shoal/diagnostics"
	"github.com/shoal-data/shoal/diagnostics/alert"
	"github.com/shoal-data/shoal/distributed"
	"github.com/shoal-data/shoal/distributed/server"
	"github.com/shoal-data/shoal/graph"
)

// watchAlerts sends the scheduler's alerts of a rule, raised and
// resolved, on channels.
func watchAlerts(t *testing.T, lc *distributed.LocalCluster, name string) (raised, resolved <-chan diagnostics.Alert) {
	up, down := make(chan diagnostics.Alert, 64), make(chan diagnostics.Alert, 64)
	sub := lc.Scheduler().Events().Subscribe(func(evs []diagnostics.Event) {
		for _, e := range evs {
			if e.Alert == nil || e.Alert.Name != name {
				continue
			}
			ch := up
			if e.Kind == diagnostics.AlertResolved {
				ch = down
			}
			select {
			case ch <- *e.Alert:
			default:
				t.Errorf("too many %s alerts: %+v", name, e.Alert)
			}
		}
	})
	t.Cleanup(sub.Close)
	return up, down
}

func receive(ctx context.Context, t *testing.T, ch <-chan diagnostics.Alert, what string) diagnostics.Alert {
	t.Helper()
	select {
	case a := <-ch:
		return a
	case <-ctx.Done():
		t.Fatalf("no alert %s", what)
		return diagnostics.Alert{}
	}
}

// TestStragglerAlert runs tasks of a prefix that take a millisecond,
// then one of the same prefix that takes a minute: the scheduler raises a
// straggler alert naming it and its worker, from what the worker's
// heartbeats say it runs, and resolves it once the task is cancelled.
func TestStragglerAlert(t *testing.T) {
	lc, c := newCluster(t, distributed.LocalClusterOptions{Workers: 1, ThreadsPerWorker: 2, InProcess: true,
		HeartbeatInterval: 100 * time.Millisecond,
		Scheduler:         server.Config{Alerts: alert.Config{StragglerMin: 300 * time.Millisecond, StragglerTasks: 3}}})
	raised, resolved := watchAlerts(t, lc, alert.Straggler)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var quick []graph.Delayed
	for i := range 5 {
		quick = append(quick, sleep.Call(1+i))
	}
	if _, err := graph.ComputeAll(ctx, c, quick...); err != nil {
		t.Fatal(err)
	}
	slowCtx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() {
		_, err := graph.Compute[int](slowCtx, c, sleep.Call(60_000))
		done <- err
	}()
	a := receive(ctx, t, raised, "for the task of a minute")
	info, err := c.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if worker := info.Workers[0].Address; a.Worker != worker || a.Key.Prefix() != quick[0].Key().Prefix() ||
		!strings.Contains(a.Message, string(a.Key)) || !strings.Contains(a.Message, worker) || a.Severity != alert.Warning {
		t.Errorf("straggler alert %+v: want the sleep of a minute on worker %s", a, worker)
	}
	stop()
	if err := <-done; err == nil {
		t.Error("the cancelled computation succeeded")
	}
	if r := receive(ctx, t, resolved, "resolved once the task was cancelled"); r.ID() != a.ID() {
		t.Errorf("resolved %+v, want %s", r, a.ID())
	}
}

// skewedFrame has parts partitions of rows each, most of whose rows have
// the key "hot"; the others have one of 64 keys.
func skewedFrame(parts, rows int) dataframe.DataFrame {
	schema := arrow.NewSchema([]arrow.Field{{Name: "k", Type: arrow.BinaryTypes.String},
		{Name: "v", Type: arrow.PrimitiveTypes.Int64}}, nil)
	var recs []arrow.RecordBatch
	for p := range parts {
		b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
		for i := range rows {
			k := "hot"
			if i%8 == 0 {
				k = fmt.Sprintf("k%d", (p*rows+i)%64)
			}
			b.Field(0).(*array.StringBuilder).Append(k)
			b.Field(1).(*array.Int64Builder).Append(int64(i))
		}
		recs = append(recs, b.NewRecordBatch())
		b.Release()
	}
	df := dataframe.FromRecords(recs...)
	for _, r := range recs {
		r.Release()
	}
	return df
}

// TestSkewAlert shuffles rows most of which have one key: the
// partition that gets them reads far more than the others, and the
// scheduler raises an alert naming the shuffle, the task that read it and
// its worker, from the bytes the workers say each task read; the alert
// is resolved when the computation ends.
func TestSkewAlert(t *testing.T) {
	lc, c := newCluster(t, distributed.LocalClusterOptions{Workers: 2, ThreadsPerWorker: 1, InProcess: true,
		Scheduler: server.Config{Alerts: alert.Config{SkewMinBytes: 1 << 10}}})
	raised, resolved := watchAlerts(t, lc, alert.ShuffleSkew)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out, err := skewedFrame(4, 4000).Shuffle(8, "k").Compute(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	defer out.Release()
	if out.NumRows() != 16_000 {
		t.Errorf("%d rows out of the shuffle, want 16000", out.NumRows())
	}
	a := receive(ctx, t, raised, "for the partition of the hot key")
	if a.Shuffle == "" || !strings.HasPrefix(string(a.Key), "shuffle-collect-"+a.Shuffle) || a.Worker == "" ||
		!strings.Contains(a.Message, "shuffle "+a.Shuffle) || !strings.Contains(a.Message, string(a.Key)) ||
		a.Value <= a.Threshold {
		t.Errorf("skew alert %+v", a)
	}
	if r := receive(ctx, t, resolved, "resolved when the computation ended"); r.ID() != a.ID() {
		t.Errorf("resolved %+v, want %s", r, a.ID())
	}
	select {
	case x := <-raised:
		t.Errorf("a second partition raised: %+v", x)
	default:
	}
}
