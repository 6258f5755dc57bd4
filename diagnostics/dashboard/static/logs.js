// The logs page: the log records of the scheduler and of every worker,
// newest on top, filtered by the scheduler (the parameters of the logs
// topic: least level, source, task key, text) so that only what is asked
// for comes over.
"use strict";

(function (S) {
  const FIELDS = ["level", "source", "key", "text", "limit"];

  S.page({
    params: (url) => {
      const p = {};
      for (const f of FIELDS) if (url.get(f)) p[f] = url.get(f);
      return p;
    },
    topics: () => ["logs"],
    setup: (page) => {
      const form = S.$("log-filters");
      for (const f of FIELDS) {
        const v = page.url.get(f);
        const input = S.$("log-" + f);
        if (v === null) continue;
        if (input.tagName === "SELECT" && ![...input.options].some((o) => o.value === v)) {
          input.append(S.el("option", { value: v }, v));
        }
        input.value = v;
      }
      let timer = null;
      const apply = () => {
        clearTimeout(timer);
        const patch = {};
        for (const f of FIELDS) patch[f] = S.$("log-" + f).value.trim();
        if (patch.limit === "500") patch.limit = "";
        const same = FIELDS.every((f) => (page.url.get(f) || "") === patch[f]);
        if (!same) page.set(patch);
      };
      form.addEventListener("change", apply);
      form.addEventListener("submit", (e) => { e.preventDefault(); apply(); });
      form.addEventListener("input", (e) => {
        if (e.target.tagName !== "INPUT") return;
        clearTimeout(timer);
        timer = setTimeout(apply, 400);
      });
    },
    render: (page) => {
      const logs = page.data.logs || {};
      const records = logs.records || [];
      // The sources, keeping the one chosen.
      const sel = S.$("log-source");
      const want = sel.value;
      const sources = (logs.sources || []).slice();
      if (want && !sources.includes(want)) sources.push(want);
      S.replace(sel, S.el("option", { value: "" }, "all"), ...sources.map((s) =>
        S.el("option", { value: s, selected: s === want }, s)));
      sel.value = want;
      const n = logs.matched || 0;
      S.$("logs-info").textContent = S.num(n) + (n === 1 ? " record matches" : " records match") +
        (logs.matched > records.length ? ", the newest " + S.num(records.length) + " shown" : "");
      const body = S.$("log-table").tBodies[0];
      if (records.length === 0) {
        S.replace(body, S.el("tr", {}, S.el("td", { colspan: 5, class: "empty" }, "No record matches.")));
        return;
      }
      S.replace(body, ...S.logRows(records, { source: true }));
    },
  });
})(Shoal);
