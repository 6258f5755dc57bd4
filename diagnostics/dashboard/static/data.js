// The data of the dashboard's pages: every page reads what it shows
// through Shoal.data, and through nothing else, so that the same pages
// can show a live scheduler or a file.
//
//   get(topic, params)                   a promise of the topic's JSON
//   subscribe(topics, params, onData, onError)
//                                        calls onData(topic, value) with
//                                        each topic now and whenever it
//                                        changes, onError(topic, message)
//                                        when the source could not make
//                                        it (topic null: none of them);
//                                        returns {close()}
//   link(path, params)                   the URL of a download, or null
//                                        when the source has none
//   onState(fn)                          calls fn(state, text) when the
//                                        connection changes: "connecting",
//                                        "live", "reconnecting", "failed",
//                                        "paused" (the tab is hidden) or,
//                                        for a file, "offline"
//
// Topics are the names of the endpoints (status, task-window, workers,
// ...); params are an object of their query parameters, an array for a
// repeated one. The live source below reads the scheduler: get with
// fetch, subscribe with one EventSource for all the topics of a page. A
// report defines Shoal.data before this script, from JSON it carries.
"use strict";

(function (S) {
  // query writes params as a query string: arrays repeat the parameter,
  // empty values are left out.
  S.query = function (params) {
    const q = new URLSearchParams();
    for (const [k, v] of Object.entries(params || {})) {
      if (Array.isArray(v)) {
        for (const x of v) if (x !== "" && x !== null && x !== undefined) q.append(k, x);
      } else if (v !== "" && v !== null && v !== undefined) {
        q.append(k, v);
      }
    }
    return q.toString();
  };

  function live() {
    const watchers = [];
    let state = "connecting";
    function setState(s, text) {
      if (s === state && !text) return;
      state = s;
      for (const fn of watchers) fn(s, text || s);
    }

    function url(path, params) {
      const q = S.query(params);
      return q ? path + "?" + q : path;
    }

    async function get(topic, params) {
      const r = await fetch(url("api/" + topic, params), { cache: "no-store" });
      if (!r.ok) throw new Error("api/" + topic + ": " + r.status + " " + (await r.text()).trim());
      return r.json();
    }

    function subscribe(topics, params, onData, onError) {
      const target = url("api/events", Object.assign({ topics: topics.join(",") }, params));
      let es = null;
      let closed = false;
      let timer = null;
      let failures = 0;

      function open() {
        timer = null;
        if (closed) return;
        es = new EventSource(target);
        es.onopen = () => { failures = 0; setState("live"); };
        for (const t of topics) {
          es.addEventListener(t, (e) => {
            let v;
            try { v = JSON.parse(e.data); } catch (err) { onError(t, "bad JSON: " + err.message); return; }
            onData(t, v);
          });
        }
        es.addEventListener("topic-error", (e) => {
          try {
            const v = JSON.parse(e.data);
            onError(v.topic, v.error);
          } catch (err) { onError(null, "bad JSON: " + err.message); }
        });
        es.onerror = () => {
          if (closed) return;
          if (es.readyState === EventSource.CONNECTING) {
            setState("reconnecting"); // the browser retries by itself
            return;
          }
          // The server answered, but not with a stream: say why when it
          // is the page's fault, else try again later.
          es.close();
          failures++;
          setState("reconnecting");
          fetch(target, { cache: "no-store" }).then(async (r) => {
            if (r.status === 400) {
              const text = (await r.text()).trim();
              setState("failed", "bad request");
              onError(null, text);
              return;
            }
            if (r.body) r.body.cancel();
            retry();
          }, retry);
        };
      }
      function retry() {
        if (closed || timer) return;
        timer = setTimeout(open, Math.min(500 * 2 ** Math.min(failures, 5), 15000));
      }

      // A browser keeps at most six connections to a server over
      // HTTP/1.1, and each open page holds one stream: a page in a
      // hidden tab lets its stream go, and takes it up again, with
      // everything it shows, when it is seen again.
      function visibility() {
        if (closed) return;
        if (document.hidden) {
          if (timer) { clearTimeout(timer); timer = null; }
          if (es) { es.close(); es = null; }
          setState("paused", "paused while hidden");
        } else if (!es && !timer) {
          setState("connecting");
          open();
        }
      }
      document.addEventListener("visibilitychange", visibility);

      if (!document.hidden) open();
      else setState("paused", "paused while hidden");
      return {
        close() {
          closed = true;
          document.removeEventListener("visibilitychange", visibility);
          if (timer) clearTimeout(timer);
          if (es) es.close();
        },
      };
    }

    return {
      get: get,
      subscribe: subscribe,
      link: function (path, params) { return url(path, params); },
      onState: function (fn) { watchers.push(fn); fn(state, state); },
    };
  }

  S.liveData = live;
  if (!S.data) S.data = live();
})(Shoal);
