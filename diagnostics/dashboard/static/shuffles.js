// The shuffles page: for each shuffle of the current and recent
// computations, how far its splits and collects got, and on each worker
// the bytes its splits wrote and its collects read, and the shuffle's
// files on disk next to the space left.
"use strict";

(function (S) {
  S.page({
    topics: () => ["shuffles"],
    render: (page) => {
      const list = (page.data.shuffles && page.data.shuffles.shuffles) || [];
      const box = S.$("shuffles");
      if (list.length === 0) { S.replace(box, S.empty("No shuffle yet.")); return; }
      S.replace(box, ...list.map(shuffle));
    },
  });

  function hbar(cls, f, title) {
    const b = S.el("span", { class: "hbar " + cls, title: title }, S.el("i"));
    b.firstChild.style.width = (100 * Math.max(0, Math.min(1, f || 0))).toFixed(1) + "%";
    return b;
  }

  function shuffle(sh) {
    const progress = (name, done, total) => S.barRow(name, [
      { value: done, fill: S.C.managed, title: done + " done", state: "done" },
    ], total, done + " / " + total);
    let maxBytes = 1;
    for (const w of sh.workers || []) maxBytes = Math.max(maxBytes, w.bytes_written, w.bytes_read);
    const rows = (sh.workers || []).map((w) => {
      const room = w.disk + w.free;
      return S.el("tr", { "data-worker": w.address, "data-written": w.bytes_written, "data-read": w.bytes_read },
        S.el("td", {}, S.workerLink(w.address)),
        S.el("td", {}, hbar("written", w.bytes_written / maxBytes, S.bytes(w.bytes_written) + " written")),
        S.el("td", { class: "num" }, S.bytes(w.bytes_written)),
        S.el("td", {}, hbar("read", w.bytes_read / maxBytes, S.bytes(w.bytes_read) + " read")),
        S.el("td", { class: "num" }, S.bytes(w.bytes_read)),
        S.el("td", {}, hbar("disk", room > 0 ? w.disk / room : 0, S.bytes(w.disk) + " on disk, " + S.bytes(w.free) + " free")),
        S.el("td", { class: "num" + (room > 0 && w.free / room < 0.1 ? " erred" : "") },
          S.bytes(w.disk) + " / " + S.bytes(w.free) + " free"));
    });
    return S.el("div", { class: "shuffle state-" + sh.state, "data-shuffle": sh.id },
      S.el("div", { class: "shuffle-head" }, S.el("b", { class: "mono" }, sh.id), " ",
        S.el("span", { class: "state state-" + sh.state }, sh.state),
        S.el("span", { class: "muted" }, (sh.computation ? " · computation " + sh.computation : "") + " · started " +
          S.clock(S.parseTime(sh.started)) + (sh.erred ? " · " + sh.erred + " tasks erred" : ""))),
      progress("splits", sh.splits_done, sh.splits),
      progress("collects", sh.collects_done, sh.collects),
      S.el("table", { class: "shuffle-workers" },
        S.el("thead", {}, S.el("tr", {}, S.el("th", {}, "worker"), S.el("th", {}, "written"), S.el("th", { class: "num" }, ""),
          S.el("th", {}, "read"), S.el("th", { class: "num" }, ""), S.el("th", {}, "disk used of room"),
          S.el("th", { class: "num" }, "on disk / free"))),
        S.el("tbody", {}, ...rows)));
  }
})(Shoal);
