// The status page: the cluster at a glance. Its summary, its erred tasks,
// the task stream of the last minutes (a bar per run in lanes per worker,
// or, when there are too many runs, how busy each worker was with each
// prefix), the progress of the computations and of each prefix, the
// memory of the workers, the workers and the scheduler's log.
"use strict";

(function (S) {
  const WINDOWS = ["1m", "5m", "15m"];
  const STATES = ["waiting", "queued", "processing", "memory", "erred", "released", "cancelled"];

  S.page({
    params: (url) => {
      const w = url.get("window");
      return { window: WINDOWS.includes(w) ? w : "1m" };
    },
    topics: () => ["status", "task-window"],
    setup: (page) => {
      const sel = S.$("stream-window");
      // A file has the stream of its period only.
      sel.parentElement.hidden = !!S.data.offline;
      const w = page.url.get("window");
      if (WINDOWS.includes(w)) sel.value = w;
      sel.addEventListener("change", () => page.set({ window: sel.value === "1m" ? "" : sel.value }));
      S.hoverTips(S.$("task-stream"));
    },
    render: (page) => {
      const st = page.data.status;
      if (st && page.changed.has("status")) renderStatus(st);
      const tw = page.data["task-window"];
      if (tw && page.changed.has("task-window")) renderStream(tw);
    },
  });

  function renderStatus(st) {
    S.showScheduler(st);
    document.title = "Shoal dashboard · " + st.scheduler.address;
    const workers = st.workers || [];
    let threads = 0, limit = 0, used = 0;
    for (const w of workers) { threads += w.threads; limit += w.memory_limit; used += w.managed + w.unmanaged; }
    S.$("summary-workers").textContent = workers.length;
    S.$("summary-threads").textContent = threads;
    S.$("summary-memory").textContent = S.bytes(used) + (limit > 0 ? " / " + S.bytes(limit) : "");
    S.$("summary-clients").textContent = st.scheduler.clients;
    S.$("summary-uptime").textContent = S.duration(S.parseTime(st.time) - S.parseTime(st.scheduler.started));
    renderCounts(st.tasks || {});
    renderBanner(st);
    renderComputations(st.computations || [], S.parseTime(st.time));
    renderProgress(st.progress || []);
    renderMemory(workers);
    renderWorkers(workers, S.parseTime(st.time));
    S.replace(S.$("logs").tBodies[0], ...S.logRows(st.logs || [], { max: 200 }));
  }

  function renderCounts(tasks) {
    const chips = [];
    let total = 0;
    for (const s of STATES) {
      const n = tasks[s] || 0;
      total += n;
      if (n > 0 || s === "processing" || s === "memory" || s === "erred") {
        chips.push(S.el("span", { class: "chip " + s, "data-state": s }, S.el("b", {}, n), " " + s));
      }
    }
    chips.unshift(S.el("span", { class: "chip total" }, S.el("b", {}, total), " held"));
    S.replace(S.$("task-counts"), ...chips);
  }

  function renderBanner(st) {
    const box = S.$("errors-banner");
    box.hidden = !(st.erred > 0);
    if (box.hidden) return;
    const items = (st.recent_errors || []).slice(0, 3).map((e) =>
      S.el("li", { "data-key": e.key }, S.el("span", { class: "mono" }, e.key), " on ",
        e.worker ? S.workerLink(e.worker) : "?", ": ", S.el("span", { class: "err" }, S.shorten(e.error, 160)),
        S.el("span", { class: "muted" }, " · " + S.clock(S.parseTime(e.time)))));
    S.replace(box, S.el("strong", { id: "errors-count" }, st.erred + (st.erred === 1 ? " task erred" : " tasks erred")),
      " ", S.el("a", { href: "errors" }, "see every error →"), S.el("ul", {}, ...items));
  }

  function renderComputations(comps, now) {
    const box = S.$("computations");
    if (comps.length === 0) { S.replace(box); return; }
    // The five newest, and the last failed ones after them: a failure
    // stays in sight while later computations come and go.
    const shown = comps.slice(0, 5).concat(comps.slice(5).filter((c) => c.state === "failed").slice(0, 3));
    const blocks = shown.map((c) => {
      const start = S.parseTime(c.started), end = S.parseTime(c.finished);
      const took = isFinite(end) ? "took " + S.duration(end - start) : "running for " + S.duration(now - start);
      const head = S.el("div", { class: "comp-head" },
        S.el("b", {}, "computation " + c.id), " ", S.el("span", { class: "state state-" + c.state }, c.state),
        S.el("span", { class: "muted" }, " · " + c.tasks + " tasks · started " + S.clock(start) + " · " + took),
        c.caller ? S.el("span", { class: "muted" }, " · from ", S.callerLabel(c.caller)) : null);
      const rows = (c.progress || []).map((p) => {
        const row = S.barRow(p.prefix, S.progressSegments(p), p.total, S.progressCount(p),
          { cls: c.state === "failed" ? "failed" : "" });
        row.dataset.prefix = p.prefix;
        return row;
      });
      return S.el("div", { class: "computation state-" + c.state, "data-computation": c.id, "data-state": c.state },
        head, c.error ? S.el("div", { class: "comp-error" }, c.error) : null, ...rows);
    });
    S.replace(box, ...blocks);
  }

  function renderProgress(progress) {
    const box = S.$("progress");
    if (progress.length === 0) { S.replace(box, S.empty("No computation yet.")); return; }
    S.replace(box, ...progress.map((p) => {
      const row = S.barRow(p.prefix, S.progressSegments(p), p.total, S.progressCount(p));
      row.dataset.prefix = p.prefix;
      return row;
    }));
  }

  function renderMemory(workers) {
    const box = S.$("memory");
    if (workers.length === 0) { S.replace(box, S.empty("No worker.")); return; }
    let scale = 0;
    for (const w of workers) scale = Math.max(scale, w.memory_limit || 0, w.managed + w.unmanaged + w.spilled);
    S.replace(box, ...workers.map((w) => {
      const total = w.memory_limit > 0 ? Math.max(w.memory_limit, w.managed + w.unmanaged + w.spilled) : scale;
      const used = w.managed + w.unmanaged;
      let count = S.bytes(used);
      if (w.memory_limit > 0) count += " / " + S.bytes(w.memory_limit);
      if (w.spilled > 0) count += " + " + S.bytes(w.spilled) + " spilled";
      const managedFill = w.memory_limit > 0 && used > 0.8 * w.memory_limit ? S.C.warn : S.C.managed;
      const row = S.barRow(w.name || w.address, [
        { value: w.managed, fill: managedFill, title: S.bytes(w.managed) + " managed (results in memory)" },
        { value: w.unmanaged, fill: S.C.unmanaged, title: S.bytes(w.unmanaged) + " unmanaged (the rest of the process)" },
        { value: w.spilled, fill: S.C.spilled, title: S.bytes(w.spilled) + " spilled to disk" },
      ], total, count, { title: w.address, href: "worker?" + new URLSearchParams({ name: w.address }) });
      row.dataset.worker = w.address;
      return row;
    }));
  }

  function renderWorkers(workers, now) {
    S.replace(S.$("workers").tBodies[0], ...workers.map((w) => {
      const seen = S.parseTime(w.last_seen);
      return S.el("tr", { "data-worker": w.address },
        S.el("td", {}, S.workerLink(w.address)),
        S.el("td", {}, w.name || ""),
        S.el("td", { class: "state-" + w.state }, w.state),
        S.el("td", { class: "num" }, w.threads),
        S.el("td", { class: "num" }, w.processing),
        S.el("td", { class: "num" }, w.in_memory),
        S.el("td", { class: "num" }, S.bytes(w.managed)),
        S.el("td", { class: "num" }, S.bytes(w.unmanaged)),
        S.el("td", { class: "num" }, S.bytes(w.spilled)),
        S.el("td", { class: "num" }, w.memory_limit > 0 ? S.bytes(w.memory_limit) : "none"),
        S.el("td", { class: "num" }, S.ago(seen, now)));
    }));
  }

  // ---- the task stream ----

  const LABEL_W = 170, LANE_H = 10, ROW_GAP = 6, AXIS_H = 18, AGG_H = 34;

  function renderStream(tw) {
    const box = S.$("task-stream");
    const t0 = S.parseTime(tw.start), t1 = S.parseTime(tw.stop);
    const info = S.$("stream-info");
    const workers = tw.workers || [];
    info.textContent = tw.count + " runs" + (tw.erred ? ", " + tw.erred + " erred" : "") +
      (tw.aggregated ? " · summed in buckets of " + S.seconds(tw.bucket_seconds) : "");
    box.dataset.mode = tw.aggregated ? "aggregated" : "runs";
    if (!(t1 > t0) || workers.length === 0 || tw.count === 0) {
      S.replace(S.$("stream-legend"));
      S.replace(box, S.empty("No task ran in this time."));
      return;
    }
    const width = S.widthOf(box, 500);
    const plotW = width - LABEL_W - 8;
    const x = (t) => LABEL_W + plotW * (t - t0) / (t1 - t0);
    let prefixes, drawn;
    if (tw.aggregated) {
      prefixes = tw.prefixes || [];
      drawn = drawBuckets(tw, workers, prefixes, x, plotW, t0, t1);
    } else {
      const seen = new Set();
      for (const r of tw.runs || []) seen.add(r.prefix);
      prefixes = (tw.prefixes || []).filter((p) => seen.has(p));
      for (const p of seen) if (!prefixes.includes(p)) prefixes.push(p);
      drawn = drawRuns(tw, workers, x, t0, t1);
    }
    const { shapes, rowsH } = drawn;
    const height = rowsH + AXIS_H;
    const s = S.svg("svg", { viewBox: "0 0 " + width + " " + height, width: width, height: height, role: "img",
      "aria-label": "task stream" });
    for (const t of S.timeTicks(t0, t1, Math.max(2, Math.floor(plotW / 100)))) {
      s.append(S.svg("line", { class: "grid", x1: x(t), x2: x(t), y1: 0, y2: rowsH }));
      s.append(S.svg("text", { class: "axis", x: x(t), y: height - 5, "text-anchor": "middle" }, S.clock(t)));
    }
    s.append(...shapes);
    S.replace(box, s);
    S.replace(S.$("stream-legend"), S.legend(prefixes.map((p) => ({ label: p, color: S.color(p) }))
      .concat(S.stateLegend())));
  }

  function laneLabel(w, y) {
    const label = S.svg("text", { class: "lane-label", x: 0, y: y }, S.shorten(w, 26));
    return S.titled(label, w);
  }

  // drawRuns draws a bar per run, each in a lane of its worker where it
  // overlaps no other run.
  function drawRuns(tw, workers, x, t0, t1) {
    const lanes = new Map(); // worker -> the stop time of each lane's last run
    const placed = [];
    for (const r of tw.runs || []) {
      const stop = S.parseTime(r.stop);
      let start = S.parseTime(r.start);
      if (!isFinite(stop)) continue;
      if (!isFinite(start)) start = stop;
      let ls = lanes.get(r.worker);
      if (!ls) { ls = []; lanes.set(r.worker, ls); }
      let best = -1;
      for (let i = 0; i < ls.length; i++) if (ls[i] <= start && (best < 0 || ls[i] > ls[best])) best = i;
      if (best < 0) { best = ls.length; ls.push(stop); } else ls[best] = stop;
      placed.push({ r: r, start: start, stop: stop, lane: best });
    }
    const order = workers.map((w) => w.address);
    for (const w of lanes.keys()) if (!order.includes(w)) order.push(w);
    const rowY = new Map();
    const shapes = [];
    let y = 0;
    for (const w of order) {
      const n = Math.max(1, (lanes.get(w) || []).length);
      rowY.set(w, y);
      shapes.push(laneLabel(w, y + Math.min(n * LANE_H, 12) - 2));
      y += n * LANE_H + ROW_GAP;
    }
    for (const p of placed) {
      const r = p.r;
      const x0 = Math.max(LABEL_W, x(p.start));
      const x1 = Math.min(x(t1), x(p.stop));
      const rect = S.svg("rect", { class: "run " + r.state, x: x0.toFixed(1), y: rowY.get(r.worker) + p.lane * LANE_H,
        width: Math.max(1, x1 - x0).toFixed(1), height: LANE_H - 1, fill: S.runFill(r.prefix, r.state),
        "data-key": r.key, "data-prefix": r.prefix, "data-state": r.state });
      let title = r.key + "\n" + r.prefix + " on " + r.worker + "\n" + S.duration(p.stop - p.start) + ", " + r.state;
      if (r.error) title += "\n" + r.error;
      rect.setAttribute("data-tip", title);
      shapes.push(rect);
    }
    return { shapes: shapes, rowsH: Math.max(0, y - ROW_GAP) };
  }

  // drawBuckets draws, per worker, a column per bucket as high as the
  // share of its threads busy, stacked by prefix; the erred share of a
  // prefix's runs is hatched on top of its part. Each prefix of a worker
  // is one path.
  function drawBuckets(tw, workers, prefixes, x, plotW, t0, t1) {
    const bs = tw.bucket_seconds;
    const bw = plotW * bs * 1000 / (t1 - t0);
    let maxThreads = 1;
    for (const w of workers) maxThreads = Math.max(maxThreads, w.threads || 0);
    // cells: worker -> bucket -> [[prefix, busy, count, erred]]
    const cells = new Map();
    const totals = new Map(); // worker|prefix -> [busy, count, erred]
    for (const b of tw.buckets || []) {
      const [bi, wi, pi, busy, count, erred] = b;
      if (!cells.has(wi)) cells.set(wi, new Map());
      const row = cells.get(wi);
      if (!row.has(bi)) row.set(bi, []);
      row.get(bi).push([pi, busy, count, erred]);
      const k = wi + "|" + pi;
      const t = totals.get(k) || [0, 0, 0];
      t[0] += busy; t[1] += count; t[2] += erred;
      totals.set(k, t);
    }
    const shapes = [];
    let y = 0;
    workers.forEach((w, wi) => {
      shapes.push(laneLabel(w.address, y + 12));
      const threads = w.threads > 0 ? w.threads : maxThreads;
      const paths = new Map(); // prefix index -> path data
      let erredPath = "";
      const row = cells.get(wi) || new Map();
      for (const [bi, list] of row) {
        const bx = x(t0) + bi * bw;
        let base = y + AGG_H;
        list.sort((a, b) => a[0] - b[0]);
        for (const [pi, busy, count, erred] of list) {
          const h = AGG_H * Math.min(1, busy / (threads * bs));
          if (!(h > 0)) continue;
          const eh = count > 0 ? h * erred / count : 0;
          const ph = h - eh;
          const rect = (top, hh) => "M" + bx.toFixed(1) + "," + top.toFixed(2) + "h" + Math.max(0.6, bw - 0.3).toFixed(2) +
            "v" + hh.toFixed(2) + "h" + (-Math.max(0.6, bw - 0.3)).toFixed(2) + "z";
          if (ph > 0) paths.set(pi, (paths.get(pi) || "") + rect(base - ph, ph));
          if (eh > 0) erredPath += rect(base - ph - eh, eh);
          base -= h;
        }
      }
      for (const [pi, d] of paths) {
        const p = prefixes[pi];
        const t = totals.get(wi + "|" + pi) || [0, 0, 0];
        const e = S.svg("path", { class: "agg", d: d, fill: S.color(p), "data-prefix": p, "data-worker": w.address });
        shapes.push(S.titled(e, p + " on " + w.address + "\n" + S.seconds(t[0]) + " busy in " + t[1] + " runs" +
          (t[2] ? ", " + t[2] + " erred" : "")));
      }
      if (erredPath) {
        const e = S.svg("path", { class: "agg erred", d: erredPath, fill: S.FILL.erred, "data-state": "erred",
          "data-worker": w.address });
        shapes.push(S.titled(e, "erred runs on " + w.address));
      }
      shapes.push(S.svg("line", { class: "baseline", x1: x(t0), x2: x(t1), y1: y + AGG_H + 0.5, y2: y + AGG_H + 0.5 }));
      y += AGG_H + ROW_GAP;
    });
    return { shapes: shapes, rowsH: Math.max(0, y - ROW_GAP) };
  }
})(Shoal);
