// The system page: the scheduler's own process over time. Its CPU,
// memory, goroutines and open files, how long the scheduling core takes
// per batch of events, and how late its timers fire.
"use strict";

(function (S) {
  S.page({
    topics: () => ["system"],
    render: (page) => {
      const sys = page.data.system || {};
      const now = sys.now || {};
      S.replace(S.$("summary"),
        S.card("CPU", S.percent(now.cpu), { sub: "of one core", id: "cpu" }),
        S.card("resident memory", S.bytes(now.rss), { id: "rss" }),
        S.card("Go heap in use", S.bytes(now.heap_in_use), { id: "heap" }),
        S.card("goroutines", S.num(now.goroutines), { id: "goroutines" }),
        S.card("open files", now.fds >= 0 ? S.num(now.fds) : "?", { id: "fds" }),
        S.card("handling a batch", S.seconds(now.handle_seconds || 0),
          { sub: "at most " + S.seconds(now.handle_max_seconds || 0) + " in " + S.num(now.batches || 0) + " batches", id: "handle" }),
        S.card("timer lateness", S.seconds(now.lateness_seconds || 0), { id: "lateness" }));
      const h = sys.history || [];
      const pts = (f) => h.map((s) => [S.parseTime(s.time), f(s)]);
      const box = S.$("system-charts");
      const width = S.chartWidth(box);
      const ms = (v) => S.seconds(v);
      S.replace(box,
        S.timeChart({ id: "cpu", title: "CPU (% of one core)", width: width,
          series: [{ name: "CPU", color: "#2f6fb4", points: pts((s) => s.cpu) }], format: (v) => S.num(v) + " %" }),
        S.timeChart({ id: "memory", title: "Memory", width: width, legend: true, format: S.bytes, series: [
          { name: "resident", color: "#7b61c4", points: pts((s) => s.rss) },
          { name: "Go heap in use", color: "#2a9d8f", points: pts((s) => s.heap_in_use) }] }),
        S.timeChart({ id: "goroutines", title: "Goroutines", width: width,
          series: [{ name: "goroutines", color: "#5c9e2f", points: pts((s) => s.goroutines) }] }),
        S.timeChart({ id: "fds", title: "Open file descriptors", width: width,
          series: [{ name: "open files", color: "#0f7c8a", points: pts((s) => s.fds >= 0 ? s.fds : NaN) }] }),
        S.timeChart({ id: "handle", title: "Time the scheduling core took per batch of events", width: width, legend: true,
          format: ms, series: [
            { name: "mean", color: "#2f6fb4", points: pts((s) => s.handle_seconds) },
            { name: "longest", color: "#d4a017", points: pts((s) => s.handle_max_seconds), dash: "4 3" }] }),
        S.timeChart({ id: "lateness", title: "Timer lateness (goroutine scheduling latency)", width: width, format: ms,
          series: [{ name: "lateness", color: "#9a6fd1", points: pts((s) => s.lateness_seconds) }] }));
    },
  });
})(Shoal);
