// The summary of a performance report: the period in numbers (wall time,
// task runs, bytes computed, moved and spilled, workers), what the
// function of the report returned, the computations of the period with
// where the program asked for them, and the memory of each worker over
// the period. It reads the topic "report", which only a report's file
// answers (offline.js).
"use strict";

(function (S) {
  S.page({
    topics: () => ["report"],
    render: (page) => {
      const r = page.data.report;
      if (!r) {
        S.replace(S.$("report-summary"), S.empty(page.errors.report || "No report."));
        return;
      }
      const sum = r.summary;
      const start = S.parseTime(sum.start), stop = S.parseTime(sum.stop);
      S.$("report-period").textContent = S.datetime(start) + " to " + S.clock(stop);
      document.title = "Shoal performance report · " + S.datetime(start);
      const sub = [];
      if (sum.erred) sub.push(S.num(sum.erred) + " erred");
      if (sum.cancelled) sub.push(S.num(sum.cancelled) + " cancelled");
      S.replace(S.$("report-summary"),
        S.card("wall time", S.seconds(sum.seconds), { id: "seconds", raw: sum.seconds }),
        S.card("task runs", S.num(sum.tasks), { id: "tasks", raw: sum.tasks, sub: sub.join(", ") || "none erred" }),
        S.card("erred", S.num(sum.erred), { id: "erred", raw: sum.erred }),
        S.card("computations", S.num(sum.computations), { id: "computations", raw: sum.computations }),
        S.card("computed", S.bytes(sum.bytes_computed), { id: "computed", raw: sum.bytes_computed, sub: "results of the tasks" }),
        S.card("transferred", S.bytes(sum.bytes_transferred), { id: "transferred", raw: sum.bytes_transferred,
          sub: "between workers" }),
        S.card("spilled", S.bytes(sum.bytes_spilled), { id: "spilled", raw: sum.bytes_spilled, sub: "written to disk" }),
        S.card("workers", S.num(sum.workers), { id: "workers", raw: sum.workers, sub: S.num(sum.threads) + " threads" }));
      const eb = S.$("report-error");
      eb.hidden = !sum.error && !sum.dropped;
      S.replace(eb, sum.error ? S.el("div", {}, S.el("strong", {}, "The function failed: "), sum.error) : null,
        sum.dropped ? S.el("div", {}, S.num(sum.dropped) + " events were lost: the numbers miss them.") : null);
      computations(r.computations || []);
      memory(r.workers || [], start, stop);
    },
  });

  function computations(comps) {
    const body = S.$("report-computations").tBodies[0];
    if (comps.length === 0) {
      S.replace(body, S.el("tr", {}, S.el("td", { colspan: 7, class: "empty" }, "No computation in the period.")));
      return;
    }
    S.replace(body, ...comps.slice().reverse().map((c) => {
      const start = S.parseTime(c.started), end = S.parseTime(c.finished);
      return S.el("tr", { "data-computation": c.id, "data-state": c.state },
        S.el("td", { class: "num" }, c.id), S.el("td", { class: "state-" + c.state }, c.state),
        S.el("td", { class: "num" }, S.num(c.tasks)), S.el("td", { class: "mono" }, S.clockMillis(start)),
        S.el("td", { class: "num" }, isFinite(end) ? S.duration(end - start) : "–"),
        S.el("td", { class: "caller" }, c.caller ? S.callerLabel(c.caller) : ""),
        S.el("td", { class: "error" }, c.error || ""));
    }));
  }

  function memory(workers, t0, t1) {
    const box = S.$("report-memory");
    const width = S.chartWidth(box);
    const series = (f) => workers.map((w) => ({ name: w.name || w.address, color: S.color(w.address),
      points: (w.history || []).map((s) => [S.parseTime(s.time), f(s)]) }));
    S.replace(box,
      S.timeChart({ id: "managed", title: "Managed: results in memory", width: width, legend: true, t0: t0, t1: t1,
        series: series((s) => s.managed), format: S.bytes }),
      S.timeChart({ id: "rss", title: "Resident memory of the process", width: width, legend: true, t0: t0, t1: t1,
        series: series((s) => (s.rss > 0 ? s.rss : NaN)), format: S.bytes }),
      S.timeChart({ id: "spilled", title: "Spilled to disk", width: width, legend: true, t0: t0, t1: t1,
        series: series((s) => s.spilled), format: S.bytes }));
  }
})(Shoal);
