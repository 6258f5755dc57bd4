// The data of the pages from a file: a snapshot of every topic (the JSON
// of a dashboard.Snapshot), which a performance report carries in the
// document (<script type="application/json" id="shoal-snapshot">) and
// a dump's pages fetch from beside them (the data-snapshot of this
// script's tag). The source answers Shoal.data's calls from it as the
// live one answers them from the scheduler (see data.js), once: a file
// does not change.
//
// Topics with parameters answer what the file holds: task-window the
// stream of the snapshot's period, whatever window is asked; logs are
// filtered here, as the scheduler filters them; worker is one of the
// pages kept; profile is the period's, or that of one prefix or one
// worker (a file has no profile of several at once).
"use strict";

(function (S) {
  const LEVELS = { DEBUG: -4, INFO: 0, WARN: 4, ERROR: 8 };

  function list(v) {
    return [].concat(v === undefined || v === null ? [] : v).filter((x) => x !== "");
  }

  function worker(snap, name) {
    const p = (snap.worker_pages || []).find((p) => p.worker.address === name || p.worker.name === name);
    if (!p) throw new Error("no worker " + JSON.stringify(name) + " in this file");
    return p;
  }

  // address is the address of the worker of that name, or name.
  function address(snap, name) {
    const p = (snap.worker_pages || []).find((p) => p.worker.name === name);
    return p ? p.worker.address : name;
  }

  // logs filters the records of the file as GET /api/logs does.
  function logs(snap, params) {
    const all = snap.logs || { records: [], sources: [] };
    const least = params.level ? LEVELS[String(params.level).toUpperCase().replace("WARNING", "WARN")] : undefined;
    const text = (params.text || "").toLowerCase();
    const source = params.source || "";
    const from = address(snap, source);
    const matched = (all.records || []).filter((r) => {
      if (least !== undefined && !(LEVELS[r.level] >= least)) return false;
      if (source && r.source !== from) return false;
      const attrs = r.attrs || {};
      if (params.key && attrs.key !== params.key) return false;
      if (!text) return true;
      if (r.message.toLowerCase().includes(text)) return true;
      return Object.entries(attrs).some(([k, v]) => (k + "=" + v).toLowerCase().includes(text));
    });
    const limit = Math.max(1, Math.min(Number(params.limit) || 500, 10000));
    return { records: matched.slice(-limit), matched: matched.length, sources: all.sources || [] };
  }

  function profile(snap, params) {
    if (!snap.profile) throw new Error(snap.profile_error || "no profile in this file");
    const prefixes = list(params.prefix), workers = list(params.worker);
    if (prefixes.length === 0 && workers.length === 0) return snap.profile;
    let p;
    if (prefixes.length === 1 && workers.length === 0) p = (snap.prefix_profiles || {})[prefixes[0]];
    if (workers.length === 1 && prefixes.length === 0) p = (snap.worker_profiles || {})[address(snap, workers[0])];
    if (!p) {
      throw new Error("this file has the profile of everything, and of one prefix or one worker alone " +
        "(the busiest ones), not of this choice");
    }
    return p;
  }

  function answer(snap, topic, params) {
    switch (topic) {
      case "status": return snap.status;
      case "task-window": return snap.task_window;
      case "workers": return snap.workers;
      case "worker": return worker(snap, params.name || "");
      case "system": return snap.system;
      case "groups": return snap.groups;
      case "logs": return logs(snap, params);
      case "errors": return snap.errors;
      case "profile": return profile(snap, params);
      case "fine-metrics": return snap.fine_metrics;
      case "bandwidth": return snap.bandwidth;
      case "shuffles": return snap.shuffles;
      case "report":
        if (!snap.report) throw new Error("this file is no performance report");
        return { summary: snap.report, computations: snap.status.computations || [],
          workers: (snap.worker_pages || []).map((p) => p.worker) };
    }
    throw new Error("no topic " + JSON.stringify(topic) + " in this file");
  }

  // offlineData is a Shoal.data that answers from the snapshot load (a
  // promise of its JSON).
  S.offlineData = function (load) {
    let taken = "";
    load.then((s) => { taken = s.time; }, () => {});
    return {
      offline: true,
      get: (topic, params) => load.then((s) => answer(s, topic, params || {})),
      subscribe: (topics, params, onData, onError) => {
        let closed = false;
        load.then((s) => {
          for (const t of topics) {
            if (closed) return;
            let v;
            try { v = answer(s, t, params || {}); } catch (err) { onError(t, err.message); continue; }
            onData(t, v);
          }
        }, (err) => { if (!closed) onError(null, "the file's data: " + err.message); });
        return { close() { closed = true; } };
      },
      link: () => null,
      onState: (fn) => {
        fn("offline", "from a file");
        load.then(() => fn("offline", "from a file of " + S.datetime(S.parseTime(taken))), () => fn("failed", "no data"));
      },
    };
  };

  const inline = document.getElementById("shoal-snapshot");
  const script = document.currentScript;
  if (inline) {
    S.data = S.offlineData(Promise.resolve(JSON.parse(inline.textContent)));
  } else if (script && script.dataset.snapshot) {
    S.data = S.offlineData(fetch(script.dataset.snapshot).then((r) => {
      if (!r.ok) throw new Error(script.dataset.snapshot + ": " + r.status);
      return r.json();
    }));
  }
})(Shoal);
