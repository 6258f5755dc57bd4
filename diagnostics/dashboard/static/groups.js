// The task groups page: the groups of the current graphs as boxes, each a
// progress bar of its tasks by state, and arrows from the groups a group
// depends on. Groups are laid out in columns by the longest path from the
// groups that depend on none, and ordered in their column to keep the
// arrows short; the graph scrolls.
"use strict";

(function (S) {
  const BOX_W = 210, BOX_H = 46, COL_GAP = 70, ROW_GAP = 12, PAD = 12;
  // The order of the states in a group's bar.
  const BAR = [
    ["memory", (c) => c, 1],
    ["released", (c) => c, 0.45],
    ["forgotten", (c) => c, 0.45],
    ["erred", () => S.FILL.erred, 1],
    ["processing", () => S.C.processing, 1],
    ["queued", () => S.C.queued, 1],
    ["waiting", () => S.C.waiting, 1],
  ];

  let layoutKey = "";
  let layout = null;

  S.page({
    topics: () => ["groups"],
    setup: (page) => {
      S.$("groups-computation").addEventListener("change", () => { layoutKey = ""; page.redraw(); });
    },
    render: (page) => {
      const data = page.data.groups || {};
      const sel = S.$("groups-computation");
      const comps = [...new Set((data.groups || []).map((g) => g.computation))].sort((a, b) => b - a);
      const want = sel.value;
      S.replace(sel, S.el("option", { value: "" }, "all"), ...comps.map((c) =>
        S.el("option", { value: String(c), selected: String(c) === want }, String(c))));
      sel.value = comps.map(String).includes(want) ? want : "";
      let groups = data.groups || [];
      if (sel.value) groups = groups.filter((g) => String(g.computation) === sel.value);
      const names = new Set(groups.map((g) => g.name));
      const edges = (data.edges || []).filter((e) => names.has(e.from) && names.has(e.to));
      const box = S.$("groups-graph");
      let tasks = 0;
      for (const g of groups) tasks += g.total;
      S.$("groups-info").textContent = groups.length + " groups of " + S.num(tasks) + " tasks";
      if (groups.length === 0) { S.replace(box, S.empty("No task group yet.")); return; }
      const key = groups.map((g) => g.name).join("\n") + "\n\n" + edges.map((e) => e.from + "\t" + e.to).join("\n");
      if (key !== layoutKey) { layout = place(groups, edges); layoutKey = key; }
      draw(box, groups, edges, layout);
    },
  });

  // place gives each group a column (the longest path to it from a group
  // with no dependencies) and a row, ordered in each column by the mean
  // row of its neighbours, sweeping a few times both ways.
  function place(groups, edges) {
    const idx = new Map(groups.map((g, i) => [g.name, i]));
    const ins = groups.map(() => []), outs = groups.map(() => []);
    for (const e of edges) {
      const a = idx.get(e.from), b = idx.get(e.to);
      if (a === b) continue;
      outs[a].push(b);
      ins[b].push(a);
    }
    // Longest path, by Kahn's algorithm; the groups of a cycle (there
    // should be none) go in the last column.
    const col = groups.map(() => 0);
    const pending = ins.map((l) => l.length);
    const queue = [];
    pending.forEach((n, i) => { if (n === 0) queue.push(i); });
    let seen = 0;
    while (queue.length) {
      const a = queue.shift();
      seen++;
      for (const b of outs[a]) {
        col[b] = Math.max(col[b], col[a] + 1);
        if (--pending[b] === 0) queue.push(b);
      }
    }
    let ncols = Math.max(...col) + 1;
    if (seen < groups.length) {
      pending.forEach((n, i) => { if (n > 0) col[i] = ncols; });
      ncols++;
    }
    const columns = Array.from({ length: ncols }, () => []);
    groups.forEach((g, i) => columns[col[i]].push(i));
    const row = groups.map(() => 0);
    const number = () => columns.forEach((c) => c.forEach((i, r) => { row[i] = r; }));
    number();
    const mean = (list, i) => list.length ? list.reduce((s, j) => s + row[j], 0) / list.length : row[i];
    for (let sweep = 0; sweep < 4; sweep++) {
      const forward = sweep % 2 === 0;
      const order = forward ? columns : columns.slice().reverse();
      for (const c of order) {
        const keyed = c.map((i) => [mean(forward ? ins[i] : outs[i], i), row[i], i]);
        keyed.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
        c.splice(0, c.length, ...keyed.map((k) => k[2]));
        c.forEach((i, r) => { row[i] = r; });
      }
    }
    // Each box as level as it can with the boxes it depends on, below the
    // one above it in its column.
    const y = groups.map(() => 0);
    let bottom = 0;
    const pos = new Map();
    columns.forEach((c, ci) => {
      let next = PAD;
      for (const i of c) {
        const want = ins[i].length ? ins[i].reduce((s, j) => s + y[j], 0) / ins[i].length : PAD;
        y[i] = Math.max(next, want);
        next = y[i] + BOX_H + ROW_GAP;
        pos.set(groups[i].name, { x: PAD + ci * (BOX_W + COL_GAP), y: y[i] });
      }
      bottom = Math.max(bottom, next - ROW_GAP);
    });
    return { pos: pos, width: PAD * 2 + ncols * BOX_W + (ncols - 1) * COL_GAP, height: bottom + PAD };
  }

  function draw(box, groups, edges, lay) {
    const s = S.svg("svg", { width: lay.width, height: lay.height, viewBox: "0 0 " + lay.width + " " + lay.height,
      role: "img", "aria-label": "task groups" });
    let maxCount = 1;
    for (const e of edges) maxCount = Math.max(maxCount, e.count);
    for (const e of edges) {
      const a = lay.pos.get(e.from), b = lay.pos.get(e.to);
      const x1 = a.x + BOX_W, y1 = a.y + BOX_H / 2, x2 = b.x - 2, y2 = b.y + BOX_H / 2;
      const mx = (x1 + x2) / 2;
      const path = S.svg("path", { class: "edge", d: "M" + x1 + "," + y1 + "C" + mx + "," + y1 + " " + mx + "," + y2 +
        " " + x2 + "," + y2, "stroke-width": (1 + 2 * Math.log(1 + e.count) / Math.log(1 + maxCount)).toFixed(2),
        "marker-end": "url(#arrow)", "data-from": e.from, "data-to": e.to });
      s.append(S.titled(path, e.to + " depends on " + S.num(e.count) + " tasks of " + e.from));
    }
    for (const g of groups) {
      const p = lay.pos.get(g.name);
      const st = g.states || {};
      const color = S.color(g.prefix);
      const done = (st.memory || 0) + (st.released || 0) + (st.forgotten || 0);
      const el = S.svg("g", { class: "group" + (st.erred ? " erred" : ""), transform: "translate(" + p.x + "," + p.y + ")",
        "data-group": g.name, "data-prefix": g.prefix });
      el.append(S.svg("rect", { class: "box", width: BOX_W, height: BOX_H, rx: 4 }));
      el.append(S.svg("rect", { x: 0, y: 0, width: 4, height: BOX_H, fill: color, rx: 2 }));
      el.append(S.svg("text", { x: 10, y: 15 }, S.shorten(g.name, 28)));
      el.append(S.svg("text", { x: 10, y: 41, class: "count" },
        done + " / " + g.total + (st.erred ? " · " + st.erred + " erred" : "") + (g.bytes ? " · " + S.bytes(g.bytes) : "")));
      // The bar.
      const bx = 10, bw = BOX_W - 20, by = 21, bh = 9;
      el.append(S.svg("rect", { class: "bar-bg", x: bx, y: by, width: bw, height: bh, rx: 2 }));
      let x = bx;
      for (const [state, fill, opacity] of BAR) {
        const n = st[state] || 0;
        if (!(n > 0) || !(g.total > 0)) continue;
        const w = Math.min(bx + bw - x, bw * n / g.total);
        el.append(S.svg("rect", { x: x.toFixed(2), y: by, width: w.toFixed(2), height: bh, fill: fill(color),
          "fill-opacity": opacity < 1 ? opacity : null, "data-state": state }));
        x += w;
      }
      const lines = [g.name, "prefix " + g.prefix + " · computation " + g.computation, g.total + " tasks"];
      for (const [state] of BAR) if (st[state]) lines.push("  " + state + ": " + st[state]);
      lines.push(S.bytes(g.bytes) + " of results, " + S.seconds(g.seconds) + " computing");
      s.append(S.titled(el, lines.join("\n")));
    }
    S.replace(box, s);
  }
})(Shoal);
