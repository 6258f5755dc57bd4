// Helpers of every page of the Shoal dashboard: building DOM and SVG,
// formatting numbers and times, and the colours of task prefixes and
// states. Values from the scheduler only ever go into textContent and
// attributes, never into HTML: el and svg are the only ways pages build
// elements.
"use strict";

var Shoal = window.Shoal || {};
window.Shoal = Shoal;

(function (S) {
  const SVGNS = "http://www.w3.org/2000/svg";

  S.$ = function (id) { return document.getElementById(id); };

  // el builds an element: attrs are set as attributes ("class" as the
  // class name), children are nodes or text (null and false are skipped).
  function build(e, attrs, children) {
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v === null || v === undefined || v === false) continue;
      if (k === "class") e.setAttribute("class", v);
      else e.setAttribute(k, v === true ? "" : String(v));
    }
    for (const c of children) {
      if (c === null || c === undefined || c === false) continue;
      e.append(c instanceof Node ? c : document.createTextNode(String(c)));
    }
    return e;
  }
  S.el = function (tag, attrs, ...children) { return build(document.createElement(tag), attrs, children); };
  S.svg = function (tag, attrs, ...children) { return build(document.createElementNS(SVGNS, tag), attrs, children); };

  // titled gives an SVG element a tooltip.
  S.titled = function (e, text) {
    const t = document.createElementNS(SVGNS, "title");
    t.textContent = text;
    e.append(t);
    return e;
  };

  S.replace = function (parent, ...children) {
    parent.replaceChildren(...children.filter((c) => c !== null && c !== undefined && c !== false));
  };

  S.empty = function (text) { return S.el("p", { class: "empty" }, text); };

  // ---- numbers and times ----

  // parseTime reads a time of Go's JSON (RFC 3339, up to nanoseconds) as
  // milliseconds since the epoch; NaN for the zero time or none.
  S.parseTime = function (s) {
    if (!s || s.startsWith("0001-")) return NaN;
    return Date.parse(s.replace(/(\.\d{3})\d+/, "$1"));
  };

  S.bytes = function (n) {
    if (!isFinite(n) || n <= 0) return "0 B";
    const units = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"];
    let u = 0;
    while (n >= 1024 && u < units.length - 1) { n /= 1024; u++; }
    return u === 0 ? Math.round(n) + " B" : n.toFixed(n < 10 ? 2 : n < 100 ? 1 : 0) + " " + units[u];
  };

  S.rate = function (n) { return S.bytes(n) + "/s"; };

  // duration formats milliseconds.
  S.duration = function (ms) {
    if (!isFinite(ms) || ms < 0) return "–";
    if (ms === 0) return "0 s";
    if (ms < 1) return (ms * 1000).toFixed(0) + " µs";
    if (ms < 1000) return ms.toFixed(ms < 10 ? 2 : 0) + " ms";
    const s = ms / 1000;
    if (s < 60) return s.toFixed(s < 10 ? 2 : 1) + " s";
    const m = Math.floor(s / 60);
    if (m < 60) return m + " min " + Math.floor(s % 60) + " s";
    const h = Math.floor(m / 60);
    if (h < 48) return h + " h " + (m % 60) + " min";
    return Math.floor(h / 24) + " d " + (h % 24) + " h";
  };

  S.seconds = function (s) { return S.duration(s * 1000); };

  S.num = function (n, digits) {
    if (n === null || n === undefined || !isFinite(n)) return "–";
    if (digits === undefined) digits = Math.abs(n) >= 100 || Number.isInteger(n) ? 0 : 1;
    return n.toLocaleString("en-US", { maximumFractionDigits: digits, minimumFractionDigits: digits });
  };

  // A negative percentage is unknown (a worker that shares its process
  // with others cannot tell its own CPU).
  S.percent = function (x) { return isFinite(x) && x >= 0 ? S.num(x, x < 10 ? 1 : 0) + " %" : "–"; };

  // clock formats a time (ms since the epoch) as the time of day.
  S.clock = function (t) {
    if (!isFinite(t)) return "–";
    const d = new Date(t);
    const pad = (n, w) => String(n).padStart(w || 2, "0");
    return pad(d.getHours()) + ":" + pad(d.getMinutes()) + ":" + pad(d.getSeconds());
  };

  S.clockMillis = function (t) {
    if (!isFinite(t)) return "–";
    return S.clock(t) + "." + String(new Date(t).getMilliseconds()).padStart(3, "0");
  };

  S.datetime = function (t) {
    if (!isFinite(t)) return "–";
    const d = new Date(t);
    const pad = (n) => String(n).padStart(2, "0");
    return d.getFullYear() + "-" + pad(d.getMonth() + 1) + "-" + pad(d.getDate()) + " " + S.clock(t);
  };

  // ago says how long before now (ms) the time t (ms) was.
  S.ago = function (t, now) {
    if (!isFinite(t)) return "–";
    return S.duration(Math.max(0, (now === undefined ? Date.now() : now) - t)) + " ago";
  };

  S.shorten = function (s, n) {
    s = String(s);
    return s.length > n ? s.slice(0, Math.max(1, n - 1)) + "…" : s;
  };

  // callerLabel shows where the program submitted a computation
  // ("file:line"): the file's name, with its path in the tooltip.
  S.callerLabel = function (caller) {
    return S.el("span", { class: "mono caller", title: caller }, caller.slice(caller.lastIndexOf("/") + 1));
  };

  // workerLink is a link to the page of a worker.
  S.workerLink = function (address, text) {
    return S.el("a", { href: "worker?" + new URLSearchParams({ name: address }), class: "mono" }, text || address);
  };

  // ---- colours ----

  // The colours of the states; erred and cancelled runs are drawn with
  // the hatches of the page's <svg class="defs">.
  S.C = {
    erred: "#d43d3d", cancelled: "#8d949c", processing: "#b9bfc6", queued: "#d5dae0", waiting: "#e6e9ed",
    managed: "#2f6fb4", unmanaged: "#9cc2e8", spilled: "#a0a4a8", warn: "#c07f12", line: "#e2e6ea",
  };
  S.FILL = { erred: "url(#hatch-erred)", cancelled: "url(#hatch-cancelled)" };

  // PALETTE are the colours of task prefixes: blues, teals, greens,
  // ambers and violets, saturated enough to stand apart from the greys of
  // the task states; no red, orange-red or pink, which could pass for
  // erred.
  S.PALETTE = [
    "#2f6fb4", "#2a9d8f", "#7b61c4", "#5c9e2f", "#d4a017", "#1f9bcf", "#4a4fb0", "#3a7d44",
    "#9a6fd1", "#8c9a1f", "#0f7c8a", "#6b8fd6", "#b58b00", "#52b788", "#5a3d99", "#1b6ca8",
  ];

  // The colour of each prefix, kept in the browser's storage so that a
  // prefix has the same colour on every page and after a reload. A new
  // prefix takes the colour used by the fewest prefixes known.
  const KEY = "shoal.prefix-colours";
  let assigned = null; // prefix -> index into PALETTE, in the order assigned
  function load() {
    if (assigned) return;
    assigned = new Map();
    try {
      const saved = JSON.parse(window.localStorage.getItem(KEY) || "[]");
      if (Array.isArray(saved)) {
        for (const [p, i] of saved) if (typeof p === "string" && Number.isInteger(i)) assigned.set(p, i % S.PALETTE.length);
      }
    } catch (e) { /* no storage (a file, or private mode): colours last the page */ }
  }
  function save() {
    try {
      window.localStorage.setItem(KEY, JSON.stringify([...assigned.entries()]));
    } catch (e) { /* as above */ }
  }
  S.color = function (prefix) {
    load();
    let i = assigned.get(prefix);
    if (i !== undefined) return S.PALETTE[i];
    const uses = new Array(S.PALETTE.length).fill(0);
    for (const j of assigned.values()) uses[j]++;
    i = uses.indexOf(Math.min(...uses));
    assigned.set(prefix, i);
    while (assigned.size > 400) assigned.delete(assigned.keys().next().value);
    save();
    return S.PALETTE[i];
  };

  // runFill is the fill of a task run of prefix that ended in state.
  S.runFill = function (prefix, state) {
    return S.FILL[state] || S.color(prefix);
  };

  // swatch is a small square of a legend.
  S.swatch = function (color, cls) {
    const i = S.el("i", { class: "sw" + (cls ? " " + cls : "") });
    if (color) i.style.background = color;
    return i;
  };

  // legend is a row of swatches: items are {label, color, cls}.
  S.legend = function (items) {
    return S.el("div", { class: "legend" }, ...items.map((it) =>
      S.el("span", { class: "legend-item", "data-label": it.label }, S.swatch(it.color, it.cls), it.label)));
  };

  // stateLegend is the legend of the hatched states.
  S.stateLegend = function () {
    return [{ label: "erred", cls: "hatch-erred" }, { label: "cancelled", cls: "hatch-cancelled" }];
  };
})(Shoal);
