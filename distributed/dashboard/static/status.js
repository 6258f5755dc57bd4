// The status page of a Shoal scheduler: it polls api/status and
// api/tasks and draws the cluster with plain DOM and SVG. Values from the
// scheduler only ever go into textContent and attributes, never into HTML.
"use strict";

(function () {
  const POLL_MS = 1000;
  const MAX_RUNS = 20000; // task runs kept for the task stream
  const MAX_BARS = 6000; // bars drawn at once
  const SVG = "http://www.w3.org/2000/svg";
  // The colours of status.css, for SVG attributes.
  const C = { managed: "#2f6fb4", unmanaged: "#9cc2e8", spilled: "#a0a4a8", erred: "#d43d3d",
    processing: "#b9bfc6", warn: "#d98a1c" };

  const runs = []; // task runs, in the order they arrived
  const lanes = new Map(); // worker address -> stop time (ms) of the last run of each lane
  let next = null; // since of the next api/tasks request; null before the first answer
  let status = null;
  let offset = 0; // scheduler clock minus ours, ms
  let failures = 0;

  // ---- helpers ----

  function $(id) { return document.getElementById(id); }

  function el(tag, attrs, ...children) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (k === "class") e.className = v; else e.setAttribute(k, v);
    }
    for (const c of children) e.append(c instanceof Node ? c : document.createTextNode(String(c)));
    return e;
  }

  function svg(tag, attrs) {
    const e = document.createElementNS(SVG, tag);
    for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
    return e;
  }

  function titled(e, text) {
    const t = svg("title");
    t.textContent = text;
    e.append(t);
    return e;
  }

  // parseTime reads a time of Go's JSON (RFC 3339, up to nanoseconds);
  // NaN for the zero time.
  function parseTime(s) {
    if (!s || s.startsWith("0001-")) return NaN;
    return Date.parse(s.replace(/(\.\d{3})\d+/, "$1"));
  }

  function bytes(n) {
    if (!n || n <= 0) return "0 B";
    const units = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"];
    let u = 0;
    while (n >= 1024 && u < units.length - 1) { n /= 1024; u++; }
    return u === 0 ? n + " B" : n.toFixed(n < 10 ? 2 : n < 100 ? 1 : 0) + " " + units[u];
  }

  function duration(ms) {
    if (!isFinite(ms) || ms < 0) return "–";
    if (ms < 1) return (ms * 1000).toFixed(0) + " µs";
    if (ms < 1000) return ms.toFixed(ms < 10 ? 2 : 0) + " ms";
    const s = ms / 1000;
    if (s < 60) return s.toFixed(s < 10 ? 2 : 1) + " s";
    const m = Math.floor(s / 60);
    if (m < 60) return m + " min " + Math.floor(s % 60) + " s";
    const h = Math.floor(m / 60);
    if (h < 48) return h + " h " + (m % 60) + " min";
    return Math.floor(h / 24) + " d " + (h % 24) + " h";
  }

  // color gives each prefix a stable hue.
  function color(prefix) {
    let h = 2166136261;
    for (let i = 0; i < prefix.length; i++) { h ^= prefix.charCodeAt(i); h = Math.imul(h, 16777619); }
    const hue = (h >>> 0) % 360;
    return "hsl(" + hue + ", 62%, 48%)";
  }

  function replace(parent, ...children) {
    parent.replaceChildren(...children);
  }

  // ---- polling ----

  async function getJSON(url) {
    const r = await fetch(url, { cache: "no-store" });
    if (!r.ok) throw new Error(url + ": " + r.status + " " + (await r.text()));
    return r.json();
  }

  async function poll() {
    try {
      const st = await getJSON("api/status");
      offset = parseTime(st.time) - Date.now();
      if (next === null || (status && status.scheduler.id !== st.scheduler.id)) {
        // First answer, or another scheduler: take the runs it keeps.
        runs.length = 0;
        lanes.clear();
        next = 0;
      }
      status = st;
      const ts = await getJSON("api/tasks?since=" + next);
      addRuns(ts.tasks || []);
      next = ts.next;
      failures = 0;
      setConnection("live", "live");
      render();
    } catch (err) {
      failures++;
      setConnection("lost", "disconnected");
      console.warn("dashboard:", err);
    }
    setTimeout(poll, failures ? Math.min(POLL_MS * 2 ** failures, 15000) : POLL_MS);
  }

  function setConnection(cls, text) {
    const c = $("connection");
    c.className = "connection " + cls;
    c.textContent = text;
  }

  // addRuns keeps the new runs, each in a lane of its worker where it
  // overlaps no other run.
  function addRuns(list) {
    for (const t of list) {
      const stop = parseTime(t.stop);
      let start = parseTime(t.start);
      if (!isFinite(stop)) continue;
      if (!isFinite(start)) start = stop;
      let ls = lanes.get(t.worker);
      if (!ls) { ls = []; lanes.set(t.worker, ls); }
      let best = -1;
      for (let i = 0; i < ls.length; i++) {
        if (ls[i] <= start && (best < 0 || ls[i] > ls[best])) best = i;
      }
      if (best < 0) { best = ls.length; ls.push(stop); } else ls[best] = stop;
      runs.push({ worker: t.worker, key: t.key, prefix: t.prefix, state: t.state, error: t.error,
        start: start, stop: stop, lane: best });
    }
    if (runs.length > MAX_RUNS) runs.splice(0, runs.length - MAX_RUNS);
  }

  // ---- drawing ----

  function render() {
    const st = status;
    $("scheduler-address").textContent = st.scheduler.address;
    document.title = "Shoal dashboard · " + st.scheduler.address;
    const workers = st.workers || [];
    let threads = 0, limit = 0, used = 0;
    for (const w of workers) { threads += w.threads; limit += w.memory_limit; used += w.managed + w.unmanaged; }
    $("summary-workers").textContent = workers.length;
    $("summary-threads").textContent = threads;
    $("summary-memory").textContent = bytes(used) + (limit > 0 ? " / " + bytes(limit) : "");
    $("summary-clients").textContent = st.scheduler.clients;
    $("summary-uptime").textContent = duration(parseTime(st.time) - parseTime(st.scheduler.started));
    renderCounts(st.tasks || {});
    renderProgress(st.progress || []);
    renderMemory(workers);
    renderWorkers(workers);
    renderLogs(st.logs || []);
    renderStream();
  }

  const STATES = ["waiting", "queued", "processing", "memory", "erred", "released", "cancelled"];

  function renderCounts(tasks) {
    const chips = [];
    let total = 0;
    for (const s of STATES) {
      const n = tasks[s] || 0;
      total += n;
      if (n > 0 || s === "processing" || s === "memory" || s === "erred") {
        chips.push(el("span", { class: "chip " + s, "data-state": s }, el("b", {}, n), " " + s));
      }
    }
    chips.unshift(el("span", { class: "chip total" }, el("b", {}, total), " held"));
    replace($("task-counts"), ...chips);
  }

  // barRow is a row of a bar chart: a name, a bar of segments
  // [{value, fill, opacity, title}] out of total, and a count.
  function barRow(name, segments, total, count, title) {
    const s = svg("svg", { viewBox: "0 0 1000 14", preserveAspectRatio: "none", role: "img" });
    s.append(svg("rect", { class: "bar-bg", x: 0, y: 0, width: 1000, height: 14, rx: 2 }));
    let x = 0;
    for (const seg of segments) {
      if (!(seg.value > 0) || !(total > 0)) continue;
      const w = Math.min(1000 - x, 1000 * seg.value / total);
      if (w <= 0) continue;
      const r = svg("rect", { x: x, y: 0, width: w, height: 14, fill: seg.fill });
      if (seg.opacity !== undefined) r.setAttribute("fill-opacity", seg.opacity);
      titled(r, seg.title);
      s.append(r);
      x += w;
    }
    const label = el("span", { class: "name", title: title || name }, name);
    return el("div", { class: "bar-row" }, label, s, el("span", { class: "count" }, count));
  }

  function renderProgress(progress) {
    const box = $("progress");
    if (progress.length === 0) {
      replace(box, el("p", { class: "empty" }, "No computation yet."));
      return;
    }
    const rows = progress.map((p) => {
      const c = color(p.prefix);
      const released = p.done - p.memory;
      let count = p.done + " / " + p.total;
      if (p.erred > 0) count += " · " + p.erred + " erred";
      const row = barRow(p.prefix, [
        { value: p.memory, fill: c, title: p.memory + " in memory" },
        { value: released, fill: c, opacity: 0.45, title: released + " done and released" },
        { value: p.erred, fill: C.erred, title: p.erred + " erred" },
        { value: p.processing, fill: C.processing, title: p.processing + " processing" },
      ], p.total, count);
      row.dataset.prefix = p.prefix;
      return row;
    });
    replace(box, ...rows);
  }

  function renderMemory(workers) {
    const box = $("memory");
    if (workers.length === 0) {
      replace(box, el("p", { class: "empty" }, "No worker."));
      return;
    }
    let scale = 0;
    for (const w of workers) scale = Math.max(scale, w.memory_limit || 0, w.managed + w.unmanaged + w.spilled);
    const rows = workers.map((w) => {
      const total = w.memory_limit > 0 ? Math.max(w.memory_limit, w.managed + w.unmanaged + w.spilled) : scale;
      const used = w.managed + w.unmanaged;
      let count = bytes(used);
      if (w.memory_limit > 0) count += " / " + bytes(w.memory_limit);
      if (w.spilled > 0) count += " + " + bytes(w.spilled) + " spilled";
      const managedFill = w.memory_limit > 0 && used > 0.8 * w.memory_limit ? C.warn : C.managed;
      const row = barRow(w.name || w.address, [
        { value: w.managed, fill: managedFill, title: bytes(w.managed) + " managed (results in memory)" },
        { value: w.unmanaged, fill: C.unmanaged, title: bytes(w.unmanaged) + " unmanaged (rest of the process)" },
        { value: w.spilled, fill: C.spilled, title: bytes(w.spilled) + " spilled to disk" },
      ], total, count, w.address);
      row.dataset.worker = w.address;
      return row;
    });
    replace(box, ...rows);
  }

  function renderWorkers(workers) {
    const now = parseTime(status.time);
    const rows = workers.map((w) => {
      const seen = parseTime(w.last_seen);
      return el("tr", { "data-worker": w.address },
        el("td", { class: "mono" }, w.address),
        el("td", {}, w.name || ""),
        el("td", { class: "state-" + w.state }, w.state),
        el("td", { class: "num" }, w.threads),
        el("td", { class: "num" }, w.processing),
        el("td", { class: "num" }, w.in_memory),
        el("td", { class: "num" }, bytes(w.managed)),
        el("td", { class: "num" }, bytes(w.unmanaged)),
        el("td", { class: "num" }, bytes(w.spilled)),
        el("td", { class: "num" }, w.memory_limit > 0 ? bytes(w.memory_limit) : "none"),
        el("td", { class: "num" }, isFinite(seen) ? duration(Math.max(0, now - seen)) + " ago" : "–"));
    });
    replace($("workers").tBodies[0], ...rows);
  }

  function renderLogs(logs) {
    const rows = [];
    for (let i = logs.length - 1; i >= 0 && rows.length < 200; i--) {
      const r = logs[i];
      const t = new Date(parseTime(r.time));
      const attrs = Object.entries(r.attrs || {}).map(([k, v]) => k + "=" + v).join(" ");
      rows.push(el("tr", { class: "level-" + r.level },
        el("td", { class: "mono" }, isNaN(t) ? "" : t.toLocaleTimeString()),
        el("td", {}, r.level), el("td", {}, r.message), el("td", {}, attrs)));
    }
    replace($("logs").tBodies[0], ...rows);
  }

  function renderStream() {
    const box = $("task-stream");
    const windowMs = Number($("stream-window").value) * 1000;
    const now = Date.now() + offset;
    const from = now - windowMs;
    const shown = [];
    for (let i = runs.length - 1; i >= 0 && shown.length < MAX_BARS; i--) {
      if (runs[i].stop >= from) shown.push(runs[i]);
    }
    if (shown.length === 0) {
      replace(box, el("p", { class: "empty" }, runs.length ? "No task ran in this time." : "No task has run yet."));
      return;
    }
    // Rows: every lane used in the window, grouped by worker.
    const used = new Map();
    for (const r of shown) used.set(r.worker, Math.max(used.get(r.worker) || 0, r.lane + 1));
    const workers = [...used.keys()].sort();
    const laneH = 10, gap = 6, labelW = 170, axisH = 16;
    const width = Math.max(400, box.clientWidth || 800);
    const plotW = width - labelW - 8;
    const rowY = new Map();
    let y = 0;
    for (const w of workers) { rowY.set(w, y); y += used.get(w) * laneH + gap; }
    const height = y + axisH;
    const s = svg("svg", { viewBox: "0 0 " + width + " " + height, height: height, role: "img",
      "aria-label": "task stream" });
    const x = (t) => labelW + plotW * (t - from) / windowMs;
    // Time axis: a tick every step seconds.
    const step = [1, 2, 5, 10, 15, 30, 60, 120, 300, 600].find((st) => windowMs / 1000 / st <= 8) || 600;
    for (let k = 0; k * step * 1000 <= windowMs; k++) {
      const tx = x(now - k * step * 1000);
      s.append(svg("line", { class: "grid", x1: tx, x2: tx, y1: 0, y2: y - gap }));
      const label = svg("text", { class: "axis", x: tx, y: height - 4, "text-anchor": k === 0 ? "end" : "middle" });
      label.textContent = k === 0 ? "now" : "-" + (step < 60 ? k * step + " s" : k * step / 60 + " min");
      s.append(label);
    }
    for (const w of workers) {
      const label = svg("text", { class: "lane-label", x: 0, y: rowY.get(w) + Math.min(used.get(w) * laneH, 12) - 2 });
      label.textContent = w.length > 26 ? "…" + w.slice(-25) : w;
      titled(label, w);
      s.append(label);
    }
    for (const r of shown) {
      const x0 = Math.max(labelW, x(r.start));
      const x1 = Math.min(width, x(r.stop));
      const rect = svg("rect", { x: x0, y: rowY.get(r.worker) + r.lane * laneH, width: Math.max(1, x1 - x0),
        height: laneH - 1, fill: r.state === "erred" ? C.erred : r.state === "cancelled" ? C.spilled : color(r.prefix) });
      let title = r.key + "\n" + r.prefix + " on " + r.worker + "\n" + duration(r.stop - r.start) + ", " + r.state;
      if (r.error) title += "\n" + r.error;
      titled(rect, title);
      s.append(rect);
    }
    replace(box, s);
  }

  $("stream-window").addEventListener("change", () => { if (status) renderStream(); });
  window.addEventListener("resize", () => { if (status) renderStream(); });
  poll();
})();
