// The profile page: where the cluster's CPU time went, as a flame graph,
// for a window (the last minutes, or all kept) and the prefixes and
// workers chosen; below, which prefixes ran when; and the same profile to
// download for go tool pprof.
"use strict";

(function (S) {
  const WINDOWS = ["1m", "5m", "15m", ""];
  let flame = null;

  function params(url) {
    // The page's window: last=all in its URL is every sample kept (no
    // last for the topic); none is the last 5 minutes.
    let w = url.has("last") ? url.get("last") : "5m";
    if (w === "all") w = "";
    return { last: WINDOWS.includes(w) ? w : "5m", prefix: url.getAll("prefix"), worker: url.getAll("worker") };
  }

  S.page({
    params: params,
    topics: () => ["profile"],
    setup: (page) => {
      flame = S.Flame(S.$("flame"), S.$("flame-info"));
      const sel = S.$("profile-window");
      // A file has the profile of its period only.
      sel.parentElement.hidden = !!S.data.offline;
      sel.value = params(page.url).last;
      sel.addEventListener("change", () => page.set({ last: sel.value === "5m" ? null : sel.value === "" ? "all" : sel.value }));
      S.$("flame-reset").addEventListener("click", () => flame.reset());
      for (const [id, name] of [["profile-prefixes", "prefix"], ["profile-workers", "worker"]]) {
        S.$(id).addEventListener("change", () => {
          const chosen = [...S.$(id).querySelectorAll("input:checked")].map((i) => i.value);
          page.set({ [name]: chosen });
        });
      }
    },
    render: (page) => {
      const p = page.data.profile;
      const q = params(page.url);
      const link = S.data.link("api/profile.pb.gz", { last: q.last, prefix: q.prefix, worker: q.worker });
      const a = S.$("profile-download");
      a.hidden = !link;
      if (link) a.setAttribute("href", link);
      if (!p) {
        S.replace(S.$("flame"), S.empty("No profile: " + (page.errors.profile || "none yet")));
        S.replace(S.$("timeline"));
        return;
      }
      S.$("profile-info").textContent = S.num(p.samples) + " samples, " + S.seconds(p.seconds) + " of CPU, " +
        S.clock(S.parseTime(p.start)) + " to " + S.clock(S.parseTime(p.stop));
      options("profile-prefixes", "prefixes", p.prefixes || [], q.prefix);
      options("profile-workers", "workers", p.workers || [], q.worker);
      flame.draw(p.root);
      timeline(p.timeline || {});
    },
  });

  // options fills a multiple choice with names, keeping those chosen.
  function options(id, what, names, chosen) {
    const d = S.$(id);
    const all = names.slice();
    for (const c of chosen) if (!all.includes(c)) all.push(c);
    d.querySelector("summary").textContent = what + (chosen.length ? " (" + chosen.length + ")" : ": all");
    const box = d.querySelector(".options");
    if (all.length === 0) { S.replace(box, S.empty("none")); return; }
    S.replace(box, ...all.map((n) => S.el("label", {},
      S.el("input", { type: "checkbox", value: n, checked: chosen.includes(n) }), " " + n)));
  }

  function timeline(tl) {
    const box = S.$("timeline");
    const t0 = S.parseTime(tl.start), bs = tl.bucket_seconds;
    const busy = tl.busy || [];
    if (!isFinite(t0) || !(bs > 0) || busy.length === 0) { S.replace(box, S.empty("No task ran in this window.")); return; }
    const series = (tl.prefixes || []).map((p, i) => ({
      name: p, color: S.color(p),
      points: (busy[i] || []).map((v, b) => [t0 + (b + 0.5) * bs * 1000, v]),
    }));
    let n = 0;
    for (const row of busy) n = Math.max(n, row.length);
    S.replace(box, S.timeChart({ id: "timeline", width: S.widthOf(box, 500), height: 180, stacked: true, legend: true,
      series: series, t0: t0, t1: t0 + n * bs * 1000, format: (v) => S.num(v, 1) + " s" }));
  }
})(Shoal);
