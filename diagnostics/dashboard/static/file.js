// The pages of a file (a performance report): every page of the
// dashboard is a <template id="tpl-NAME"> of the document, and its
// script a function of Shoal.pageScripts. The fragment of the URL names
// the page shown and its parameters (#worker?name=...); links between
// pages (href="worker?name=...") change the fragment instead of leaving
// the file.
"use strict";

(function (S) {
  let name = "";

  function show() {
    const h = decodeURIComponent(window.location.hash.slice(1));
    const q = h.indexOf("?");
    let want = q < 0 ? h : h.slice(0, q);
    if (!document.getElementById("tpl-" + want) || !S.pageScripts[want]) {
      want = document.querySelector("template[id^='tpl-']").id.slice(4); // the first page
    }
    if (S.currentPage) S.currentPage.close();
    S.currentPage = null;
    name = want;
    S.pageQuery = q < 0 ? "" : h.slice(q + 1);
    const tpl = document.getElementById("tpl-" + name);
    const main = document.querySelector("main");
    main.className = "page-" + name;
    main.replaceChildren(tpl.content.cloneNode(true));
    document.body.dataset.page = name;
    delete document.body.dataset.rendered;
    document.title = tpl.dataset.title;
    const current = name === "worker" ? "workers" : name;
    for (const a of document.querySelectorAll("header nav a")) {
      a.classList.toggle("active", a.dataset.nav === current);
    }
    window.scrollTo(0, 0);
    S.pageScripts[name]();
  }

  S.setPageQuery = (query) => {
    window.history.replaceState(null, "", "#" + name + (query ? "?" + query : ""));
  };

  document.addEventListener("click", (e) => {
    const a = e.target.closest && e.target.closest("a[href]");
    if (!a) return;
    const href = a.getAttribute("href");
    if (href.startsWith("#") || /^[a-z][a-z0-9+.-]*:/i.test(href) || a.hasAttribute("download")) return;
    e.preventDefault();
    window.location.hash = "#" + href;
  });
  window.addEventListener("hashchange", show);
  show();
})(Shoal);
