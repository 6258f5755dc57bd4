package window_test

import (
	"context"
	"fmt"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/shoal-data/shoal/dataframe/dftest"
	"github.com/shoal-data/shoal/dataframe/internal/window"
)

// Monthly minimum and maximum of two partitions of a series in Oslo time,
// with an empty month between them.
func Example() {
	ctx := context.Background()
	mem := memory.DefaultAllocator
	oslo := &arrow.TimestampType{Unit: arrow.Second, TimeZone: "Europe/Oslo"}
	p1, _ := dftest.NewRecord(
		dftest.Timestamps("t", "2026-01-05T10:00:00Z", "2026-01-31T23:30:00Z").As(oslo), // the second is February in Oslo
		dftest.Float64s("temp", -3.5, -8))
	p2, _ := dftest.NewRecord(
		dftest.Timestamps("t", "2026-04-02T12:00:00Z").As(oslo),
		dftest.Float64s("temp", 9.25))
	defer p1.Release()
	defer p2.Release()

	rule := window.MustParseRule("ME")
	aggs := []window.AggSpec{{Column: "temp", Func: window.Min, Name: "min"}, {Column: "temp", Func: window.Max, Name: "max"}}
	var states []arrow.RecordBatch
	for _, p := range []arrow.RecordBatch{p1, p2} {
		s, err := window.Resample(ctx, p, "t", rule, aggs, mem)
		if err != nil {
			fmt.Println(err)
			return
		}
		defer s.Release()
		states = append(states, s)
	}
	merged, err := window.MergeResample(ctx, states, "t", rule, aggs, mem)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer merged.Release()
	out, err := window.FinalizeResample(ctx, merged, "t", rule, aggs, window.FillRange{}, mem)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer out.Release()
	t := out.Column(0).(interface{ Value(int) arrow.Timestamp })
	for i := range int(out.NumRows()) {
		label := t.Value(i).ToTime(arrow.Second).In(must(time.LoadLocation("Europe/Oslo")))
		fmt.Println(label.Format("2006-01-02 -07:00"), out.Column(1).ValueStr(i), out.Column(2).ValueStr(i))
	}
	// Output:
	// 2026-01-31 +01:00 -3.5 -3.5
	// 2026-02-28 +01:00 -8 -8
	// 2026-03-31 +02:00 (null) (null)
	// 2026-04-30 +02:00 9.25 9.25
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
