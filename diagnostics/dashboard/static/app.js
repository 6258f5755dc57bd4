// The frame of every page: it keeps the page's parameters in the query
// string of its URL, subscribes to the page's topics through Shoal.data,
// draws the page when they change, shows the state of the connection,
// and counts the renders on <body data-rendered> (tests wait on it; and
// data-render-ms says how long the last took).
//
// A page script calls Shoal.page with
//
//   topics(params)    the topics to subscribe to, for the page's params
//   params(url)       the topics' query parameters from the page's URL
//                     parameters (a URLSearchParams): an object
//   setup(page)       once, before the first data: bind the controls
//   render(page)      draw page.data (the last value of each topic) and
//                     page.errors (the last error of each, or null);
//                     page.changed are the topics that came since the
//                     last render
//
// and a page changes its parameters with page.set({name: value}), which
// updates the URL and subscribes again. Every page also subscribes to the
// alerts, which the frame shows in a banner above the page. page.close()
// stops it: a file that holds every page (a report, file.js) shows one at
// a time.
//
// A page's parameters are the query string of its URL; in a file of
// pages, S.pageQuery and S.setPageQuery read and write them instead.
"use strict";

(function (S) {
  const HIDDEN_MS = 60000;

  S.page = function (spec) {
    const page = {
      url: new URLSearchParams(S.pageQuery !== undefined ? S.pageQuery : window.location.search),
      data: {},
      errors: {},
      changed: new Set(), // the topics that came since the last render

      now: Date.now(),
      set: set,
      redraw: schedule,
      close: close,
    };
    let sub = null;
    let topics = [];
    let scheduled = false;
    let renders = 0;

    function set(patch) {
      for (const [k, v] of Object.entries(patch)) {
        page.url.delete(k);
        if (Array.isArray(v)) { for (const x of v) page.url.append(k, x); } else if (v !== "" && v !== null && v !== undefined) page.url.set(k, v);
      }
      const q = page.url.toString();
      if (S.setPageQuery) S.setPageQuery(q);
      else window.history.replaceState(null, "", q ? "?" + q : window.location.pathname);
      connect();
    }

    let closed = false;
    function close() {
      closed = true;
      if (sub) sub.close();
      sub = null;
      clearTimeout(hiddenTimer);
      window.removeEventListener("resize", resized);
      document.removeEventListener("visibilitychange", visibility);
    }

    function connect() {
      if (sub) sub.close();
      const params = spec.params ? spec.params(page.url) : {};
      topics = spec.topics(params);
      if (!topics.includes("alerts")) topics = topics.concat("alerts");
      page.data = {};
      page.errors = {};
      sub = null;
      if (topics.length === 0) { schedule(); return; }
      sub = S.data.subscribe(topics, params, (topic, value) => {
        page.data[topic] = value;
        page.errors[topic] = null;
        page.changed.add(topic);
        schedule();
      }, (topic, message) => {
        if (topic === null) { for (const t of topics) page.errors[t] = message; } else page.errors[topic] = message;
        for (const t of topic === null ? topics : [topic]) page.changed.add(t);
        schedule();
      });
    }

    // A render waits until every topic came (or failed), and draws the
    // events that arrive together once.
    function schedule() {
      if (scheduled) return;
      scheduled = true;
      setTimeout(draw, 0);
    }

    function draw() {
      scheduled = false;
      if (closed) return;
      for (const t of topics) if (!(t in page.data) && !page.errors[t]) return;
      page.now = Date.now();
      showErrors();
      if (page.changed.has("alerts")) showAlerts(page.data.alerts);
      const t0 = performance.now();
      try {
        spec.render(page);
      } catch (err) {
        console.error("dashboard: drawing the page failed:", err);
        return;
      }
      page.changed.clear();
      renders++;
      document.body.dataset.rendered = renders;
      document.body.dataset.renderMs = Math.round(performance.now() - t0);
    }

    // showAlerts shows the alerts raised, newest first: what is wrong,
    // on which worker, and what to do.
    function showAlerts(alerts) {
      const box = S.$("alerts-banner");
      if (!box) return;
      const active = (alerts && alerts.active) || [];
      box.hidden = active.length === 0;
      box.classList.toggle("critical", active.some((a) => a.severity === "critical"));
      if (box.hidden) { S.replace(box); return; }
      const items = active.slice().reverse().map((a) =>
        S.el("li", { "data-alert": a.name, "data-worker": a.worker, class: "severity-" + a.severity },
          S.el("b", { class: "alert-name" }, a.name), " ", a.worker ? S.workerLink(a.worker) : "", ": ",
          S.el("span", { class: "alert-message" }, a.message),
          S.el("span", { class: "muted" }, " · since " + S.clock(S.parseTime(a.start))),
          S.el("div", { class: "alert-action" }, a.action)));
      S.replace(box, S.el("strong", { id: "alerts-count" }, active.length + (active.length === 1 ? " alert" : " alerts")),
        S.el("ul", {}, ...items));
    }

    function showErrors() {
      const box = S.$("page-errors");
      if (!box) return;
      const list = topics.filter((t) => page.errors[t]).map((t) => S.el("li", {}, t + ": " + page.errors[t]));
      box.hidden = list.length === 0;
      S.replace(box, ...list);
    }

    S.data.onState((state, text) => {
      const c = S.$("connection");
      if (!c) return;
      c.className = "connection " + state;
      c.dataset.state = state;
      c.textContent = text;
    });
    function resized() {
      if (renders === 0) return;
      for (const t of topics) page.changed.add(t);
      schedule();
    }
    window.addEventListener("resize", resized);
    // A page hidden for a while stops its stream, which costs the
    // scheduler, and takes it up again when it is shown.
    let hiddenTimer = null;
    function visibility() {
      clearTimeout(hiddenTimer);
      if (document.hidden) {
        hiddenTimer = setTimeout(() => { if (sub) { sub.close(); sub = null; } }, HIDDEN_MS);
      } else if (!sub && topics.length > 0) {
        connect();
      }
    }
    document.addEventListener("visibilitychange", visibility);
    if (spec.setup) spec.setup(page);
    connect();
    if (!topics.includes("status")) {
      S.data.get("status").then(showScheduler, () => {});
    }
    S.currentPage = page;
    return page;
  };

  // showScheduler writes the scheduler's address in the header.
  function showScheduler(st) {
    const a = S.$("scheduler-address");
    if (a && st && st.scheduler) a.textContent = st.scheduler.address;
  }
  S.showScheduler = showScheduler;

  // ---- parts of several pages ----

  // hoverTips shows the data-tip of the element under the mouse in box:
  // for charts of thousands of shapes, one listener and one tooltip
  // rather than a <title> each.
  S.hoverTips = function (box) {
    let tip = S.$("tip");
    if (!tip) {
      tip = S.el("div", { id: "tip", class: "tip", hidden: true });
      document.body.append(tip);
    }
    box.addEventListener("mousemove", (e) => {
      const t = e.target.closest && e.target.closest("[data-tip]");
      if (!t) { tip.hidden = true; return; }
      tip.textContent = t.dataset.tip;
      tip.hidden = false;
      const x = Math.min(e.clientX + 14, window.innerWidth - tip.offsetWidth - 8);
      tip.style.left = Math.max(4, x) + "px";
      tip.style.top = (e.clientY + 16) + "px";
    });
    box.addEventListener("mouseleave", () => { tip.hidden = true; });
  };

  // barRow is a row of a bar chart: a name, a bar of segments
  // [{value, fill, opacity, title, cls}] out of total, and a count.
  S.barRow = function (name, segments, total, count, opts) {
    opts = opts || {};
    const s = S.svg("svg", { viewBox: "0 0 1000 14", preserveAspectRatio: "none", role: "img", class: "bar" });
    s.append(S.svg("rect", { class: "bar-bg", x: 0, y: 0, width: 1000, height: 14, rx: 2 }));
    let x = 0;
    for (const seg of segments) {
      if (!(seg.value > 0) || !(total > 0)) continue;
      const w = Math.min(1000 - x, 1000 * seg.value / total);
      if (w <= 0) continue;
      const r = S.svg("rect", { x: x, y: 0, width: w, height: 14, fill: seg.fill, class: seg.cls || "seg",
        "fill-opacity": seg.opacity, "data-state": seg.state });
      S.titled(r, seg.title);
      s.append(r);
      x += w;
    }
    const label = opts.href ? S.el("a", { href: opts.href, class: "name", title: opts.title || name }, name)
      : S.el("span", { class: "name", title: opts.title || name }, name);
    return S.el("div", { class: "bar-row" + (opts.cls ? " " + opts.cls : "") }, label, s,
      S.el("span", { class: "count" }, count));
  };

  // progressSegments are the segments of a progress bar of a Progress.
  S.progressSegments = function (p) {
    const c = S.color(p.prefix);
    const released = p.done - p.memory;
    return [
      { value: p.memory, fill: c, title: p.memory + " in memory", state: "memory" },
      { value: released, fill: c, opacity: 0.45, title: released + " done and released", state: "released" },
      { value: p.erred, fill: S.FILL.erred, title: p.erred + " erred", state: "erred" },
      { value: p.processing, fill: S.C.processing, title: p.processing + " processing", state: "processing" },
    ];
  };

  S.progressCount = function (p) {
    let count = p.done + " / " + p.total;
    if (p.erred > 0) count += " · " + p.erred + " erred";
    return count;
  };

  // logRows are the rows of a table of log records, newest first.
  S.logRows = function (records, opts) {
    opts = opts || {};
    const rows = [];
    for (let i = records.length - 1; i >= 0 && rows.length < (opts.max || 1e9); i--) {
      const r = records[i];
      const t = S.parseTime(r.time);
      const attrs = Object.entries(r.attrs || {}).sort((a, b) => a[0] < b[0] ? -1 : 1).map(([k, v]) =>
        S.el("span", { class: "attr" }, S.el("b", {}, k), "=" + v));
      const cells = [S.el("td", { class: "mono", title: S.datetime(t) }, S.clockMillis(t))];
      if (opts.source) cells.push(S.el("td", { class: "mono" }, r.source || ""));
      cells.push(S.el("td", { class: "level" }, r.level), S.el("td", { class: "message" }, r.message),
        S.el("td", { class: "attrs" }, ...attrs));
      rows.push(S.el("tr", { class: "level-" + r.level, "data-level": r.level }, ...cells));
    }
    return rows;
  };

  // card is a number of the summary of a page; opts.raw is the number
  // unformatted, in its data-value.
  S.card = function (label, value, opts) {
    opts = opts || {};
    return S.el("div", { class: "card" + (opts.cls ? " " + opts.cls : ""), "data-card": opts.id || label,
      "data-value": opts.raw },
      S.el("div", { class: "label" }, label), S.el("div", { class: "value" }, value),
      opts.sub ? S.el("div", { class: "sub" }, opts.sub) : null);
  };

  // diskCell is a table cell of the directories of a worker.
  S.diskCell = function (disks) {
    return S.el("td", { class: "disk" }, ...(disks || []).map((d) => {
      const use = d.size > 0 ? (d.size - d.free) / d.size : 0;
      const bar = S.el("span", { class: "use" + (use > 0.95 ? " full" : use > 0.85 ? " high" : ""),
        title: S.percent(100 * use) + " of the file system used" }, S.el("i"));
      bar.firstChild.style.width = (100 * Math.min(1, use)).toFixed(1) + "%";
      return S.el("div", { "data-disk": d.name, title: d.path + ": " + S.bytes(d.used) + " in it, " + S.bytes(d.free) + " free of " + S.bytes(d.size) },
        bar, " " + d.name + " " + S.bytes(d.used) + " · " + S.bytes(d.free) + " free");
    }));
  };

  // taskChips count the tasks of a worker by its own states.
  S.taskChips = function (tasks) {
    return ["executing", "ready", "waiting", "fetching", "memory"].filter((s) => (tasks || {})[s] > 0).map((s) =>
      S.el("span", { class: "chip", "data-state": s }, S.el("b", {}, tasks[s]), " " + s));
  };
})(Shoal);
