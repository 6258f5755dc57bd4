package distributed_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/shoal-data/shoal/dataframe"
	"github.com/shoal-data/shoal/distributed"
	"github.com/shoal-data/shoal/graph"
	"github.com/shoal-data/shoal/internal/browsertest"
)

// busy burns the CPU for 10 to 29 milliseconds (i tells the calls apart)
// and says so in its log.
var busy = graph.MustRegisterFunc("distributed_test.busy", func(ctx context.Context, i int) (int, error) {
	ms := 10 + i%20
	graph.Logger(ctx).Info("busy", "ms", ms)
	x := uint64(ms)
	for end := time.Now().Add(time.Duration(ms) * time.Millisecond); time.Now().Before(end); {
		for i := 0; i < 10_000; i++ {
			x = x*6364136223846793005 + 1442695040888963407
		}
	}
	return int(x & 1), nil
})

// jsCheck wraps a check in a function with helpers: q(selector) is the
// first element, qa(selector) all of them, text(selector) the text of the
// first.
func jsCheck(body string) string {
	return `(() => {
	const q = (s) => document.querySelector(s);
	const qa = (s) => [...document.querySelectorAll(s)];
	const text = (s) => { const e = q(s); return e ? e.textContent.trim() : ""; };
	` + body + `
})()`
}

// TestDashboardInBrowser opens every page of a LocalCluster's dashboard in
// Chromium while the cluster computes: each renders without a console
// error, shows what the cluster did (a failed task, a transfer between
// workers, a shuffle, the tasks' logs) and changes as the computation
// goes on. A failed check saves a screenshot in $SHOAL_TEST_ARTIFACTS;
// with SHOAL_TEST_SCREENSHOTS set, every page does.
func TestDashboardInBrowser(t *testing.T) {
	b := browsertest.New(t, browsertest.WithTimeout(30*time.Second))
	lc, c := newCluster(t, distributed.LocalClusterOptions{Workers: 2, ThreadsPerWorker: 2, InProcess: true,
		HeartbeatInterval: 100 * time.Millisecond})
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	base := strings.TrimSuffix(lc.DashboardURL(), "/status")
	info, err := c.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	w0, w1 := info.Workers[0].Address, info.Workers[1].Address

	// What the pages show of the past: a failure, a transfer, a shuffle.
	if _, err := graph.Compute[int](ctx, c, fail.Call(99)); err == nil || !strings.Contains(err.Error(), "failing on 99") {
		t.Fatalf("the failing task: %v", err)
	}
	var parts []any
	for i := range 4 {
		parts = append(parts, blob.Call(100+i).WithAnnotations(graph.Annotations{Workers: []string{w0}}))
	}
	if _, err := graph.Compute[int](ctx, c, total.Call(graph.List(parts...)).WithAnnotations(graph.Annotations{Workers: []string{w1}})); err != nil {
		t.Fatal(err)
	}
	df, err := dataframe.ReadCSV(ctx, writeTutorialCSV(t, t.TempDir(), 4, 500), dataframe.CSVOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := df.SortValues("temperature").Compute(ctx, c); err != nil {
		t.Fatal(err)
	}
	// A shuffle whose collects are fused into the aggregation reading them.
	if _, err := df.SortValues("temperature").GroupBy("station").Agg(dataframe.Mean("temperature").As("m")).Compute(ctx, c); err != nil {
		t.Fatal(err)
	}

	// The present: a computation of busy tasks that lasts until the pages
	// are checked (it is cancelled then).
	var ds []graph.Delayed
	for i := range 6000 {
		ds = append(ds, busy.Call(i))
	}
	g, keys, err := graph.Collect(ds...)
	if err != nil {
		t.Fatal(err)
	}
	runCtx, stopRun := context.WithCancel(ctx)
	defer stopRun()
	if _, err := c.Submit(runCtx, g, keys...); err != nil {
		t.Fatal(err)
	}

	const busyGroup = `'distributed_test.busy'`
	pages := []struct {
		path string
		// shown is true when the page shows what the cluster did.
		shown string
		// moving is a value that changes while the cluster computes.
		moving string
	}{
		{"status", `return text("#summary-workers") === "2" && qa("#task-stream rect, #task-stream path").length > 0 &&
			!q("#errors-banner").hidden && qa("#computations .computation[data-state=failed]").length === 1`,
			`return text("#task-stream") + text("#progress")`},
		{"workers", `return qa("#workers-table tbody tr").length === 2 && qa("#workers-table [data-disk]").length >= 2`,
			`return text("#workers-table tbody")`},
		{"worker?name=" + w0, `return text("#worker-title").includes("` + w0 + `") && qa("#worker-runs tbody tr").length > 0`,
			`return text("#worker-runs tbody") + text("#worker-logs tbody")`},
		{"system", `return qa("#system-charts figure path.line").length > 0`,
			`return qa("#system-charts figure path.line").map((p) => p.getAttribute("d")).join()`},
		{"groups", `return qa("#groups-graph g.group").some((g) => g.dataset.group.startsWith("shuffle-collect")) &&
			qa("#groups-graph path.edge").length > 0 && q("[data-group=` + busyGroup + `]") !== null`,
			`return text("[data-group=` + busyGroup + `]")`},
		{"logs", `return qa("#log-table tbody tr").length > 0 && qa("#log-table td.message").some((td) => td.textContent === "busy")`,
			`return text("#logs-info")`},
		{"errors", `return qa("#error-table tbody tr").some((r) => r.dataset.key.startsWith("distributed_test.fail")) &&
			text("#error-table .err").includes("failing on 99")`,
			``},
		{"profile", `return qa("#flame g.frame").length > 1 && qa("#profile-prefixes input").some((i) => i.value === "distributed_test.busy")`,
			`return text("#profile-info")`},
		{"fine-metrics", `return qa(".fine-row[data-prefix='distributed_test.busy']").length === 1 &&
			qa("#fine-table tr[data-activity=transfer-in]").length > 0`,
			`return text(".fine-row[data-prefix='distributed_test.busy'] .total")`},
		{"bandwidth", `return q("rect.cell[data-from='` + w0 + `'][data-to='` + w1 + `']") !== null`, ``},
		{"shuffles", `return qa(".shuffle").length === 2 && qa(".shuffle").every((sh) =>
			qa("[data-shuffle='" + sh.dataset.shuffle + "'] tbody tr").some((r) => +r.dataset.written > 0) &&
			qa("[data-shuffle='" + sh.dataset.shuffle + "'] tbody tr").some((r) => +r.dataset.read > 0))`, ``},
	}
	for _, pg := range pages {
		t.Run(strings.SplitN(pg.path, "?", 2)[0], func(t *testing.T) {
			p := b.NewPage(t)
			p.Navigate(base + "/" + pg.path)
			p.WaitRendered(1)
			p.WaitFor("the page to show what the cluster did", jsCheck(pg.shown))
			if pg.moving != "" {
				first := browsertest.Eval[string](p, jsCheck(pg.moving))
				p.WaitFor("the page to change while the cluster computes",
					jsCheck(fmt.Sprintf(`return (() => { %s })() !== %q;`, pg.moving, first)))
			}
			p.NoErrors()
			if os.Getenv("SHOAL_TEST_SCREENSHOTS") != "" {
				p.Screenshot("live")
			}
		})
	}
}
