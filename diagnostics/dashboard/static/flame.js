// A flame graph drawn as an icicle: the root (every sample) on top, each
// frame below the one that called it, as wide as the CPU time spent in
// it. Click a frame to zoom to it (its callers stay above, full width;
// click one to zoom back out), hover for its time.
"use strict";

(function (S) {
  const ROW = 18;

  // colour of a frame: warm for the program's own code, blue-grey for Go's
  // runtime and standard library, by package so that a package keeps its
  // colour.
  function frameColor(name) {
    if (name === "all") return "#c9ced4";
    let pkg = name;
    const slash = name.lastIndexOf("/");
    const dot = name.indexOf(".", slash + 1);
    if (dot > 0) pkg = name.slice(0, dot);
    let h = 2166136261;
    for (let i = 0; i < pkg.length; i++) { h ^= pkg.charCodeAt(i); h = Math.imul(h, 16777619); }
    h >>>= 0;
    const first = pkg.split("/")[0];
    const std = !first.includes(".") && first !== "main";
    if (std) return "hsl(" + (195 + h % 30) + ", 35%, " + (72 + (h >> 8) % 10) + "%)";
    return "hsl(" + (32 + h % 24) + ", 78%, " + (58 + (h >> 8) % 14) + "%)";
  }
  S.frameColor = frameColor;

  // Flame draws into box; info is the element that tells about the frame
  // under the mouse. draw(root) draws (again) a tree of FlameNode.
  S.Flame = function (box, info) {
    let zoom = []; // the names from the root to the frame zoomed to
    let root = null;

    function pathTo(n, names) {
      let node = n;
      const chain = [node];
      for (const name of names) {
        const c = (node.children || []).find((k) => k.name === name);
        if (!c) return null;
        node = c;
        chain.push(node);
      }
      return chain;
    }

    function describe(n) {
      const total = root.value || 1;
      return n.name + "\ntotal " + S.seconds(n.value / 1e9) + " (" + S.percent(100 * n.value / total) + ")" +
        " · self " + S.seconds((n.self || 0) / 1e9) + " (" + S.percent(100 * (n.self || 0) / total) + ")";
    }

    function draw(r) {
      root = r && r.value > 0 ? r : null;
      if (!root) {
        S.replace(box, S.empty("No CPU samples in this window."));
        if (info) info.textContent = "";
        return;
      }
      let chain = pathTo(root, zoom);
      if (!chain) { zoom = []; chain = [root]; }
      const focus = chain[chain.length - 1];
      const width = S.widthOf(box, 400);
      const rows = [];
      // Callers of the focus, full width.
      chain.forEach((n, d) => rows.push({ n: n, d: d, x: 0, w: width, path: zoom.slice(0, d), above: d < chain.length - 1 }));
      // The focus's callees, in proportion.
      let depth = chain.length - 1;
      function lay(n, d, x, w, path) {
        let cx = x;
        const kids = (n.children || []).slice().sort((a, b) => a.name < b.name ? -1 : a.name > b.name ? 1 : 0);
        for (const c of kids) {
          const cw = w * c.value / n.value;
          if (cw >= 0.5) {
            const p = path.concat([c.name]);
            rows.push({ n: c, d: d + 1, x: cx, w: cw, path: p });
            depth = Math.max(depth, d + 1);
            lay(c, d + 1, cx, cw, p);
          }
          cx += cw;
        }
      }
      lay(focus, chain.length - 1, 0, width, zoom.slice());
      const height = (depth + 1) * ROW;
      const s = S.svg("svg", { class: "flame", viewBox: "0 0 " + width + " " + height, width: width, height: height,
        role: "img", "aria-label": "flame graph" });
      for (const r of rows) {
        const g = S.svg("g", { class: "frame" + (r.above ? " caller" : ""), "data-name": r.n.name, "data-depth": r.d,
          transform: "translate(" + r.x.toFixed(2) + "," + r.d * ROW + ")" });
        g.append(S.svg("rect", { width: Math.max(0.5, r.w - 0.5).toFixed(2), height: ROW - 1, fill: frameColor(r.n.name), rx: 1 }));
        const chars = Math.floor((r.w - 6) / 6.6);
        if (chars >= 3) {
          g.append(S.svg("text", { x: 3, y: ROW - 5 }, S.shorten(r.n.name, chars)));
        }
        S.titled(g, describe(r.n));
        g.addEventListener("click", () => { zoom = r.path; draw(root); });
        g.addEventListener("mouseenter", () => { if (info) info.textContent = describe(r.n).replace("\n", " — "); });
        s.append(g);
      }
      S.replace(box, s);
      if (info && !info.textContent) info.textContent = "Hover a frame for its time; click to zoom.";
    }

    return {
      draw: draw,
      reset: function () { zoom = []; if (root) draw(root); },
      zoomed: function () { return zoom.slice(); },
    };
  };
})(Shoal);
