// The errors page: the computations that failed and every erred task the
// scheduler keeps, newest first, with the stack of a panic to unfold.
"use strict";

(function (S) {
  const open = new Set(); // the stacks unfolded, by key and time

  S.page({
    topics: () => ["errors"],
    render: (page) => {
      const data = page.data.errors || {};
      const errors = data.errors || [];
      const failed = data.failed || [];
      S.$("errors-info").textContent = S.num(data.total || 0) + " since the scheduler started" +
        (data.total > errors.length ? ", the last " + S.num(errors.length) + " kept" : "");
      const fbox = S.$("failed");
      if (failed.length === 0) S.replace(fbox, S.empty("None."));
      else {
        S.replace(fbox, ...failed.map((c) => {
          const start = S.parseTime(c.started), end = S.parseTime(c.finished);
          return S.el("div", { class: "computation state-failed", "data-computation": c.id },
            S.el("div", { class: "comp-head" }, S.el("b", {}, "computation " + c.id), " ",
              S.el("span", { class: "state state-failed" }, c.state),
              S.el("span", { class: "muted" }, " · " + c.tasks + " tasks · started " + S.datetime(start) +
                (isFinite(end) ? " · failed after " + S.duration(end - start) : ""))),
            S.el("div", { class: "comp-error" }, c.error || "(no error given)"));
        }));
      }
      const body = S.$("error-table").tBodies[0];
      if (errors.length === 0) {
        S.replace(body, S.el("tr", {}, S.el("td", { colspan: 6, class: "empty" }, "No task erred.")));
        return;
      }
      S.replace(body, ...errors.map((e) => {
        const id = e.key + "@" + e.time;
        const cell = S.el("td", { class: "error" }, S.el("div", { class: "err" }, e.error));
        if (e.stack) {
          const d = S.el("details", { class: "stack", open: open.has(id) }, S.el("summary", {}, "stack"),
            S.el("pre", {}, e.stack));
          d.addEventListener("toggle", () => { if (d.open) open.add(id); else open.delete(id); });
          cell.append(d);
        }
        return S.el("tr", { class: "erred", "data-key": e.key },
          S.el("td", { class: "mono", title: S.datetime(S.parseTime(e.time)) }, S.clockMillis(S.parseTime(e.time))),
          S.el("td", { class: "mono" }, e.key), S.el("td", { class: "mono" }, e.op || e.prefix || ""),
          S.el("td", {}, e.worker ? S.workerLink(e.worker) : ""),
          S.el("td", { class: "num" }, e.computation || ""), cell);
      }));
    },
  });
})(Shoal);
