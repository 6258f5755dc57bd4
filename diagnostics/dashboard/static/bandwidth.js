// The bandwidth page: what the workers fetched from each other (and what
// clients fetched) since the scheduler started, as a matrix of bytes from
// worker (rows) to worker (columns), and what moved of each task prefix.
"use strict";

(function (S) {
  const CELL = 46, LABEL = 180, HEAD = 120;

  // heat is the colour of a cell, from light to dark blue.
  function heat(f) {
    const a = [238, 243, 250], b = [23, 58, 97];
    return "rgb(" + a.map((v, i) => Math.round(v + (b[i] - v) * f)).join(",") + ")";
  }

  S.page({
    topics: () => ["bandwidth"],
    render: (page) => {
      const bw = page.data.bandwidth || {};
      const pairs = bw.pairs || [];
      renderMatrix(bw.workers || [], pairs);
      renderPrefixes(bw.prefixes || []);
    },
  });

  function renderMatrix(workers, pairs) {
    const box = S.$("bw-matrix");
    let total = 0;
    for (const p of pairs) total += p.bytes;
    S.$("bw-info").textContent = S.bytes(total) + " in " + S.num(pairs.reduce((n, p) => n + p.count, 0)) +
      " transfers · rows served, columns fetched";
    if (pairs.length === 0) { S.replace(box, S.empty("Nothing moved yet.")); return; }
    const rows = workers.filter((w) => w !== "client");
    for (const p of pairs) if (!rows.includes(p.from)) rows.push(p.from);
    const cols = rows.slice();
    for (const p of pairs) if (!cols.includes(p.to)) cols.push(p.to);
    if (cols.includes("client")) { cols.splice(cols.indexOf("client"), 1); cols.push("client"); }
    const cell = new Map(pairs.map((p) => [p.from + "\n" + p.to, p]));
    let max = 1;
    for (const p of pairs) max = Math.max(max, p.bytes);
    const width = LABEL + cols.length * CELL + 10, height = HEAD + rows.length * CELL + 10;
    const s = S.svg("svg", { width: width, height: height, viewBox: "0 0 " + width + " " + height, role: "img",
      "aria-label": "bytes from worker to worker" });
    cols.forEach((c, j) => {
      const x = LABEL + j * CELL + CELL / 2;
      const t = S.svg("text", { class: "matrix-label", x: x, y: HEAD - 6, transform: "rotate(-40 " + x + " " + (HEAD - 6) + ")" },
        S.shorten(c, 22));
      s.append(S.titled(t, c));
    });
    rows.forEach((r, i) => {
      const y = HEAD + i * CELL;
      s.append(S.titled(S.svg("text", { class: "matrix-label", x: LABEL - 6, y: y + CELL / 2 + 4, "text-anchor": "end" },
        S.shorten(r, 26)), r));
      cols.forEach((c, j) => {
        const p = cell.get(r + "\n" + c);
        const f = p && p.bytes > 0 ? Math.log1p(p.bytes) / Math.log1p(max) : 0;
        const rect = S.svg("rect", { class: "cell", x: LABEL + j * CELL, y: y, width: CELL - 2, height: CELL - 2,
          fill: p ? heat(0.08 + 0.92 * f) : "#f6f7f9", "data-from": r, "data-to": c, "data-bytes": p ? p.bytes : 0 });
        s.append(S.titled(rect, r + " → " + c + "\n" + (p ? S.bytes(p.bytes) + " in " + S.num(p.count) + " transfers, " +
          S.seconds(p.seconds) + (p.seconds > 0 ? ", " + S.rate(p.bytes / p.seconds) : "") : "nothing")));
        if (p) {
          s.append(S.svg("text", { class: "cell-label", x: LABEL + j * CELL + (CELL - 2) / 2, y: y + CELL / 2 + 3,
            "text-anchor": "middle", fill: f > 0.55 ? "#fff" : "#1d232b" }, S.bytes(p.bytes).replace(" ", "")));
        }
      });
    });
    S.replace(box, s);
  }

  function renderPrefixes(list) {
    const sorted = list.slice().sort((a, b) => b.bytes - a.bytes);
    let total = 0;
    for (const p of sorted) total += p.bytes;
    const body = S.$("bw-prefixes").tBodies[0];
    if (sorted.length === 0) { S.replace(body, S.el("tr", {}, S.el("td", { colspan: 6, class: "empty" }, "Nothing moved yet."))); return; }
    S.replace(body, ...sorted.map((p) => {
      const bar = S.el("span", { class: "use" }, S.el("i"));
      bar.firstChild.style.width = (total > 0 ? 100 * p.bytes / total : 0).toFixed(1) + "%";
      return S.el("tr", { "data-prefix": p.prefix },
        S.el("td", { class: "mono" }, S.swatch(S.color(p.prefix)), p.prefix), S.el("td", { class: "num" }, S.bytes(p.bytes)),
        S.el("td", { class: "num" }, S.num(p.count)), S.el("td", { class: "num" }, S.seconds(p.seconds)),
        S.el("td", { class: "num" }, p.seconds > 0 ? S.rate(p.bytes / p.seconds) : "–"),
        S.el("td", {}, bar, " " + S.percent(total > 0 ? 100 * p.bytes / total : 0)));
    }));
  }
})(Shoal);
