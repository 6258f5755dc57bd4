// Charts of the dashboard, in SVG: sparklines, charts of values over time
// (lines or stacked areas) and their axes.
"use strict";

(function (S) {
  // niceStep is a round step for about n ticks over span.
  function niceStep(span, n) {
    const raw = span / Math.max(1, n);
    const mag = Math.pow(10, Math.floor(Math.log10(raw)));
    for (const m of [1, 2, 2.5, 5, 10]) if (m * mag >= raw) return m * mag;
    return 10 * mag;
  }
  S.niceStep = niceStep;

  // timeTicks are round times between t0 and t1 (ms), about n of them.
  function timeTicks(t0, t1, n) {
    const span = (t1 - t0) / 1000;
    const steps = [1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 21600, 43200, 86400];
    const step = (steps.find((s) => span / s <= n) || 86400) * 1000;
    const out = [];
    for (let t = Math.ceil(t0 / step) * step; t <= t1; t += step) out.push(t);
    return out;
  }
  S.timeTicks = timeTicks;

  // sparkline draws values (numbers) as a line in a small SVG; max is the
  // top of the scale (the values' largest by default).
  S.sparkline = function (values, opts) {
    opts = opts || {};
    const w = opts.width || 90, h = opts.height || 20;
    const s = S.svg("svg", { class: "spark " + (opts.cls || ""), width: w, height: h, viewBox: "0 0 " + w + " " + h,
      role: "img", "aria-label": opts.label || "" });
    const vs = values.filter((v) => isFinite(v));
    if (vs.length < 2) return s;
    const max = Math.max(opts.max || 0, ...vs) || 1;
    const pts = values.map((v, i) => (i * (w - 2) / (values.length - 1) + 1).toFixed(1) + "," +
      (h - 1 - (h - 2) * Math.max(0, v || 0) / max).toFixed(1));
    s.append(S.svg("polyline", { points: pts.join(" "), fill: "none", stroke: opts.color || S.C.managed,
      "stroke-width": 1.5 }));
    if (opts.title) S.titled(s, opts.title);
    return s;
  };

  // timeChart draws series over time:
  //   series   [{name, color, points: [[t ms, value], ...], dash, fill}]
  //   format   the labels of the value axis: a function of a value
  //   stacked  stack the series as areas (points of every series at the
  //            same times)
  //   width, height, min (0 by default), max (the data's)
  //   t0, t1   the time axis (the data's by default)
  // and returns a figure with the chart and its legend.
  S.timeChart = function (opts) {
    // A series with no known value (NaN: unknown) is not drawn.
    const series = opts.series.filter((s) => s.points && s.points.some(([, v]) => isFinite(v)));
    const width = Math.max(300, opts.width || 600), height = opts.height || 160;
    const left = 62, right = 10, top = 8, bottom = 20;
    const pw = width - left - right, ph = height - top - bottom;
    const fig = S.el("figure", { class: "chart", "data-chart": opts.id || "" });
    if (opts.title) fig.append(S.el("figcaption", {}, opts.title));
    const s = S.svg("svg", { viewBox: "0 0 " + width + " " + height, width: width, height: height, role: "img",
      "aria-label": opts.title || "" });
    fig.append(s);
    if (series.length === 0) {
      s.append(S.svg("text", { x: left + pw / 2, y: top + ph / 2, class: "axis", "text-anchor": "middle" }, "no data yet"));
      return fig;
    }
    let t0 = opts.t0, t1 = opts.t1;
    if (t0 === undefined || t1 === undefined) {
      t0 = Infinity; t1 = -Infinity;
      for (const se of series) for (const [t] of se.points) { t0 = Math.min(t0, t); t1 = Math.max(t1, t); }
    }
    if (!(t1 > t0)) t1 = t0 + 1000;
    // Stacked: the tops of each series.
    let tops = null;
    if (opts.stacked) {
      tops = [];
      let below = null;
      for (const se of series) {
        const top = se.points.map(([t, v], i) => [t, (below ? below[i][1] : 0) + (v || 0)]);
        tops.push(top);
        below = top;
      }
    }
    let vmax = opts.max;
    if (vmax === undefined) {
      vmax = 0;
      for (const pts of tops || series.map((se) => se.points)) for (const [, v] of pts) if (isFinite(v)) vmax = Math.max(vmax, v);
    }
    const vmin = opts.min || 0;
    if (!(vmax > vmin)) vmax = vmin + 1;
    const step = niceStep(vmax - vmin, 3);
    vmax = Math.ceil(vmax / step) * step;
    const x = (t) => left + pw * (t - t0) / (t1 - t0);
    const y = (v) => top + ph - ph * (Math.max(vmin, Math.min(vmax, v)) - vmin) / (vmax - vmin);
    const fmt = opts.format || ((v) => S.num(v));
    for (let v = vmin; v <= vmax + step / 2; v += step) {
      s.append(S.svg("line", { class: "grid", x1: left, x2: left + pw, y1: y(v), y2: y(v) }));
      s.append(S.svg("text", { class: "axis", x: left - 4, y: y(v) + 3, "text-anchor": "end" }, fmt(v)));
    }
    for (const t of timeTicks(t0, t1, Math.max(2, Math.floor(pw / 90)))) {
      s.append(S.svg("line", { class: "grid", x1: x(t), x2: x(t), y1: top, y2: top + ph }));
      s.append(S.svg("text", { class: "axis", x: x(t), y: height - 5, "text-anchor": "middle" }, S.clock(t)));
    }
    series.forEach((se, k) => {
      const color = se.color || S.PALETTE[k % S.PALETTE.length];
      let e;
      if (tops) {
        const upper = tops[k], lower = k > 0 ? tops[k - 1] : upper.map(([t]) => [t, 0]);
        let d = "M" + upper.map(([t, v]) => x(t).toFixed(1) + "," + y(v).toFixed(1)).join("L");
        d += "L" + lower.slice().reverse().map(([t, v]) => x(t).toFixed(1) + "," + y(v).toFixed(1)).join("L") + "Z";
        e = S.svg("path", { d: d, fill: color, "fill-opacity": 0.85, stroke: "none", class: "area",
          "data-series": se.name });
      } else {
        const d = "M" + se.points.filter(([, v]) => isFinite(v)).map(([t, v]) => x(t).toFixed(1) + "," + y(v).toFixed(1)).join("L");
        e = S.svg("path", { d: d, fill: "none", stroke: color, "stroke-width": 1.6, "stroke-dasharray": se.dash,
          class: "line", "data-series": se.name });
      }
      const last = se.points[se.points.length - 1];
      S.titled(e, se.name + (last ? ": " + fmt(last[1]) + " at " + S.clock(last[0]) : ""));
      s.append(e);
    });
    if (series.length > 1 || opts.legend) {
      fig.append(S.legend(series.map((se, k) => ({ label: se.name, color: se.color || S.PALETTE[k % S.PALETTE.length] }))));
    }
    return fig;
  };

  // chartWidth is the width of each chart of a box of charts: two side by
  // side when there is room.
  S.chartWidth = function (box) {
    const w = S.widthOf(box, 320);
    return w >= 860 ? Math.floor((w - 24) / 2) : w;
  };

  // widthOf is the width to draw a chart in a box.
  S.widthOf = function (box, min) {
    return Math.max(min || 300, Math.floor((box && box.clientWidth) || 600));
  };
})(Shoal);
