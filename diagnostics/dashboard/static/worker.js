// The page of one worker (worker?name=ADDRESS): its numbers, its CPU,
// memory and network over its history, its directories and tasks, its CPU
// profile of the last minutes as a flame graph, its last task runs and
// its log.
"use strict";

(function (S) {
  let flame = null;

  S.page({
    params: (url) => ({ name: url.get("name") || "", worker: url.get("name") || "", last: "5m" }),
    topics: (params) => params.name ? ["worker", "profile"] : [],
    setup: (page) => {
      flame = S.Flame(S.$("flame"), S.$("flame-info"));
      const name = page.url.get("name");
      if (!name) {
        const box = S.$("worker-missing");
        box.hidden = false;
        S.replace(box, S.el("p", {}, "Which worker? Pick one on the ", S.el("a", { href: "workers" }, "workers page"), "."));
        return;
      }
      S.$("worker-title").textContent = "Worker " + name;
      document.title = name + " · Shoal dashboard";
      S.$("worker-logs-link").setAttribute("href", "logs?" + new URLSearchParams({ source: name }));
    },
    render: (page) => {
      if (!page.url.get("name")) return;
      const missing = S.$("worker-missing");
      const wp = page.data.worker;
      if (!wp) {
        missing.hidden = false;
        S.replace(missing, S.el("p", {}, page.errors.worker || "No such worker."));
        return;
      }
      missing.hidden = true;
      renderWorker(wp);
      if (page.data.profile) {
        const p = page.data.profile;
        S.$("worker-profile-info").textContent = S.num(p.samples) + " samples, " + S.seconds(p.seconds) + " of CPU";
        flame.draw(p.root);
      } else if (page.errors.profile) {
        S.replace(S.$("flame"), S.empty("No profile: " + page.errors.profile));
      }
    },
  });

  function renderWorker(wp) {
    const w = wp.worker;
    const st = S.$("worker-state");
    st.className = "state state-" + (w.gone ? "erred" : w.state);
    st.textContent = w.gone ? "gone" + (w.reason ? ": " + w.reason : "") : w.state;
    S.replace(S.$("summary"),
      S.card("CPU", S.percent(w.cpu), { sub: "of one core", id: "cpu" }),
      S.card("threads", w.threads, { id: "threads" }),
      S.card("resident memory", w.rss > 0 ? S.bytes(w.rss) : "–", { sub: w.memory_limit > 0 ? "limit " + S.bytes(w.memory_limit) : "no limit", id: "rss" }),
      S.card("managed", S.bytes(w.managed), { sub: "unmanaged " + S.bytes(w.unmanaged), id: "managed" }),
      S.card("spilled", S.bytes(w.spilled), { id: "spilled" }),
      S.card("network", S.rate(w.net_in) + " in", { sub: S.rate(w.net_out) + " out", id: "network" }),
      S.card("open files", w.fds >= 0 ? w.fds : "?", { id: "fds" }),
      S.card("tasks", (w.processing || 0) + " processing", { sub: (w.in_memory || 0) + " results in memory", id: "tasks" }));
    renderCharts(w.history || []);
    S.replace(S.$("worker-disk").tBodies[0], ...(w.disk || []).map((d) => {
      const use = d.size > 0 ? (d.size - d.free) / d.size : 0;
      const bar = S.el("span", { class: "use" + (use > 0.95 ? " full" : use > 0.85 ? " high" : "") }, S.el("i"));
      bar.firstChild.style.width = (100 * Math.min(1, use)).toFixed(1) + "%";
      return S.el("tr", { "data-disk": d.name }, S.el("td", {}, d.name), S.el("td", { class: "mono" }, d.path),
        S.el("td", { class: "num" }, S.bytes(d.used)), S.el("td", { class: "num" }, S.bytes(d.free)),
        S.el("td", { class: "num" }, S.bytes(d.size)), S.el("td", {}, bar, " " + S.percent(100 * use)));
    }));
    const chips = S.taskChips(w.tasks);
    S.replace(S.$("worker-task-counts"), ...(chips.length ? chips : [S.empty("No task.")]));
    const runs = (wp.tasks || []).slice().sort((a, b) => S.parseTime(b.stop) - S.parseTime(a.stop));
    S.replace(S.$("worker-runs").tBodies[0], ...runs.map((r) => {
      const start = S.parseTime(r.start), stop = S.parseTime(r.stop);
      const sw = r.state === "erred" || r.state === "cancelled" ? S.swatch(null, "hatch-" + r.state) : S.swatch(S.color(r.prefix));
      return S.el("tr", { class: r.state, "data-key": r.key },
        S.el("td", { class: "mono" }, S.clockMillis(stop)), S.el("td", { class: "mono" }, r.key),
        S.el("td", {}, sw, r.prefix), S.el("td", { class: r.state === "erred" ? "erred" : "" }, r.state),
        S.el("td", { class: "num" }, S.duration(stop - start)), S.el("td", { class: "error" }, r.error || ""));
    }));
    S.replace(S.$("worker-logs").tBodies[0], ...S.logRows(wp.logs || [], { max: 500 }));
  }

  function renderCharts(h) {
    const box = S.$("worker-charts");
    const width = S.chartWidth(box);
    const pts = (f) => h.map((s) => [S.parseTime(s.time), f(s)]);
    S.replace(box,
      S.timeChart({ id: "cpu", title: "CPU (% of one core)", width: width, series: [
        { name: "CPU", color: "#2f6fb4", points: pts((s) => (s.cpu >= 0 ? s.cpu : NaN)) },
      ], format: (v) => S.num(v) + " %" }),
      S.timeChart({ id: "memory", title: "Memory", width: width, legend: true, series: [
        { name: "resident", color: "#7b61c4", points: pts((s) => (s.rss > 0 ? s.rss : NaN)) },
        { name: "managed", color: "#2f6fb4", points: pts((s) => s.managed) },
        { name: "spilled", color: "#8d949c", points: pts((s) => s.spilled), dash: "4 3" },
      ], format: S.bytes }),
      S.timeChart({ id: "network", title: "Network", width: width, legend: true, series: [
        { name: "in", color: "#2a9d8f", points: pts((s) => s.net_in) },
        { name: "out", color: "#d4a017", points: pts((s) => s.net_out) },
      ], format: S.rate }),
      S.timeChart({ id: "executing", title: "Tasks executing", width: width, series: [
        { name: "executing", color: "#5c9e2f", points: pts((s) => s.executing) },
      ] }));
  }
})(Shoal);
