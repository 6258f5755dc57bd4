// The fine metrics page: where the time of each task prefix went, on
// every worker: a bar per prefix of its seconds by activity (compute,
// waiting for inputs, transfers, spilling, ...), with the CPU time that
// the profiler sampled of its compute as a mark of its own, and a table
// of every total (seconds, bytes and counts).
"use strict";

(function (S) {
  // The colours of the activities; others take the prefix palette's.
  const ACTIVITY = {
    compute: "#2f6fb4", queued: "#b39ddb", waiting: "#d9c27a", "transfer-in": "#2a9d8f",
    "transfer-out": "#7fcdbb", "spill-write": "#7b61c4", "spill-read": "#c2a5cf", "disk-write": "#6b8e23",
    "disk-read": "#a6c36f", encode: "#e0a526", decode: "#f2cc6b", idle: "#d6dbe0",
  };
  const CPU = "#173a61";

  function activityColor(a, i) { return ACTIVITY[a] || S.PALETTE[(i + 3) % S.PALETTE.length]; }

  S.page({
    topics: () => ["fine-metrics"],
    render: (page) => {
      const fm = page.data["fine-metrics"] || {};
      const rows = fm.rows || [];
      const acts = (fm.activities || []).slice();
      for (const r of rows) if (!acts.includes(r.activity)) acts.push(r.activity);
      const stacked = acts.filter((a) => a !== "cpu" && rows.some((r) => r.activity === a && r.unit === "seconds"));
      // Seconds per prefix and activity.
      const per = new Map();
      for (const r of rows) {
        if (r.unit !== "seconds") continue;
        if (!per.has(r.prefix)) per.set(r.prefix, new Map());
        const m = per.get(r.prefix);
        m.set(r.activity, (m.get(r.activity) || 0) + r.value);
      }
      const total = (m) => { let t = 0; for (const [a, v] of m) if (a !== "cpu") t += v; return t; };
      const prefixes = [...per.keys()].sort((a, b) => total(per.get(b)) - total(per.get(a)));
      let scale = 0;
      for (const p of prefixes) scale = Math.max(scale, total(per.get(p)));
      S.replace(S.$("fine-legend"), S.legend(stacked.map((a) => ({ label: a, color: activityColor(a, acts.indexOf(a)) }))
        .concat([{ label: "cpu (of compute)", color: CPU }])));
      const bars = S.$("fine-bars");
      if (prefixes.length === 0) S.replace(bars, S.empty("No task ran yet."));
      else S.replace(bars, S.el("div", { class: "fine-row muted" }, S.el("span", {}, "prefix"), S.el("span", {}, ""),
        S.el("span", { class: "total" }, "total"), S.el("span", { class: "cpu" }, "CPU of compute")),
      ...prefixes.map((p) => bar(p, per.get(p), stacked, acts, scale)));
      renderTable(rows, acts);
    },
  });

  function bar(prefix, m, stacked, acts, scale) {
    const s = S.svg("svg", { viewBox: "0 0 1000 20", preserveAspectRatio: "none", role: "img" });
    s.append(S.svg("rect", { class: "bar-bg", x: 0, y: 0, width: 1000, height: 20 }));
    const tot = [...m].reduce((t, [a, v]) => a === "cpu" ? t : t + v, 0);
    let x = 0, computeX = -1;
    for (const a of stacked) {
      const v = m.get(a) || 0;
      if (!(v > 0)) continue;
      const w = 1000 * v / scale;
      if (a === "compute") computeX = x;
      s.append(S.titled(S.svg("rect", { class: "act", x: x.toFixed(2), y: 0, width: w.toFixed(2), height: 14,
        fill: activityColor(a, acts.indexOf(a)), "data-activity": a }),
      prefix + ": " + a + " " + S.seconds(v) + " (" + S.percent(100 * v / tot) + ")"));
      x += w;
    }
    const cpu = m.get("cpu") || 0, compute = m.get("compute") || 0;
    if (cpu > 0) {
      s.append(S.titled(S.svg("rect", { class: "cpu-mark", x: Math.max(0, computeX).toFixed(2), y: 15,
        width: (1000 * cpu / scale).toFixed(2), height: 5, fill: CPU, "data-activity": "cpu" }),
      prefix + ": " + S.seconds(cpu) + " of CPU sampled" + (compute > 0 ? ", " + S.percent(100 * cpu / compute) + " of compute" : "")));
    }
    return S.el("div", { class: "fine-row", "data-prefix": prefix },
      S.el("span", { class: "name", title: prefix || "what belongs to no task" }, prefix || "(no task)"), s,
      S.el("span", { class: "total" }, S.seconds(tot)),
      S.el("span", { class: "cpu" }, cpu > 0 ? S.seconds(cpu) + (compute > 0 ? " · " + S.percent(100 * cpu / compute) : "") : "–"));
  }

  function value(r) {
    if (r.unit === "seconds") return S.seconds(r.value);
    if (r.unit === "bytes") return S.bytes(r.value);
    return S.num(r.value);
  }

  function renderTable(rows, acts) {
    const sorted = rows.slice().sort((a, b) => a.prefix < b.prefix ? -1 : a.prefix > b.prefix ? 1 :
      acts.indexOf(a.activity) - acts.indexOf(b.activity) || (a.unit < b.unit ? -1 : a.unit > b.unit ? 1 : 0));
    S.replace(S.$("fine-table").tBodies[0], ...sorted.map((r) => S.el("tr", { "data-prefix": r.prefix, "data-activity": r.activity },
      S.el("td", { class: "mono" }, r.prefix || "(no task)"), S.el("td", {}, r.activity), S.el("td", {}, r.unit),
      S.el("td", { class: "num", title: String(r.value) }, value(r)))));
  }
})(Shoal);
