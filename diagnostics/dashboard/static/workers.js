// The workers page: every worker with its use of resources as it last
// reported them, and sparklines of its last minutes. Gone workers stay,
// greyed, with why they went.
"use strict";

(function (S) {
  S.page({
    topics: () => ["workers"],
    render: (page) => {
      const ws = (page.data.workers && page.data.workers.workers) || [];
      const now = S.parseTime(page.data.workers && page.data.workers.time);
      renderSummary(ws);
      const body = S.$("workers-table").tBodies[0];
      if (ws.length === 0) {
        S.replace(body, S.el("tr", {}, S.el("td", { colspan: 15, class: "empty" }, "No worker.")));
        return;
      }
      S.replace(body, ...ws.map((w) => row(w, now)));
    },
  });

  function renderSummary(ws) {
    const live = ws.filter((w) => !w.gone);
    // CPU and resident memory are unknown (negative, zero) for workers
    // that share their process: those count for nothing.
    let cpu = 0, rss = 0, netIn = 0, netOut = 0, threads = 0, cpuKnown = false, rssKnown = false;
    for (const w of live) {
      if (w.cpu >= 0) { cpu += w.cpu; cpuKnown = true; }
      if (w.rss > 0) { rss += w.rss; rssKnown = true; }
      netIn += w.net_in; netOut += w.net_out; threads += w.threads;
    }
    if (!cpuKnown) cpu = -1;
    S.replace(S.$("summary"),
      S.card("workers", live.length, { sub: ws.length > live.length ? (ws.length - live.length) + " gone" : "", id: "workers" }),
      S.card("threads", threads, { id: "threads" }),
      S.card("CPU", S.percent(cpu), { sub: "of one core", id: "cpu" }),
      S.card("resident memory", rssKnown ? S.bytes(rss) : "–", { id: "rss" }),
      S.card("network", S.rate(netIn) + " in", { sub: S.rate(netOut) + " out", id: "network" }));
  }

  function row(w, now) {
    const h = w.history || [];
    const limit = w.memory_limit;
    return S.el("tr", { class: w.gone ? "gone" : "", "data-worker": w.address, "data-gone": w.gone ? "true" : null },
      S.el("td", {}, S.workerLink(w.address), w.name ? S.el("div", { class: "sub" }, w.name) : null),
      S.el("td", { class: "state-cell wrap state-" + w.state }, w.gone ? "gone" + (w.reason ? ": " + w.reason : "") : w.state),
      S.el("td", { class: "num" }, S.percent(w.cpu)),
      S.el("td", {}, S.sparkline(h.map((s) => (s.cpu >= 0 ? s.cpu : NaN)), { max: 100, cls: "cpu", label: "CPU",
        title: "CPU, % of one core, over the last " + h.length + " reports" })),
      S.el("td", { class: "num", title: limit > 0 ? "memory limit " + S.bytes(limit) : "no memory limit" },
        w.rss > 0 ? S.bytes(w.rss) : "–"),
      S.el("td", {}, S.sparkline(h.map((s) => (s.rss > 0 ? s.rss : NaN)), { max: limit, cls: "memory", color: "#7b61c4", label: "memory",
        title: "resident memory over the last " + h.length + " reports" })),
      S.el("td", { class: "num" }, S.bytes(w.managed)),
      S.el("td", { class: "num" }, S.bytes(w.unmanaged)),
      S.el("td", { class: "num" }, S.bytes(w.spilled)),
      S.el("td", { class: "num" }, S.rate(w.net_in)),
      S.el("td", { class: "num" }, S.rate(w.net_out)),
      S.diskCell(w.disk),
      S.el("td", { class: "num" }, w.fds >= 0 ? w.fds : "?"),
      S.el("td", {}, S.el("span", { class: "chips" }, ...S.taskChips(w.tasks))),
      S.el("td", { class: "num" }, S.ago(S.parseTime(w.last_seen), now)));
  }
})(Shoal);
