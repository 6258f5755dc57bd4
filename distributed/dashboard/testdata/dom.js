// dom.js runs the dashboard's script in Node with a small stand-in for a
// browser's DOM: node dom.js URL loads the page at URL and its script,
// lets the script poll the dashboard once, and prints what it drew: each
// element with an id as "#id: text", then the tree under it, one element
// a line with its data- attributes and the title of SVG shapes.
"use strict";

const vm = require("vm");

const pageURL = process.argv[2];
const realSetTimeout = setTimeout;

class Node {
  get textContent() { return this.children.map((c) => c.textContent).join(""); }
}

class Text extends Node {
  constructor(s) { super(); this.text = s; this.children = []; }
  get textContent() { return this.text; }
}

class Element extends Node {
  constructor(tag) {
    super();
    this.tagName = tag;
    this.children = [];
    this.attrs = {};
    this.dataset = {};
    this.className = "";
    this.value = "";
  }
  setAttribute(k, v) { this.attrs[k] = String(v); }
  getAttribute(k) { return this.attrs[k]; }
  append(...cs) {
    for (const c of cs) {
      if (!(c instanceof Node)) throw new Error("append of a non-node: " + c);
      this.children.push(c);
    }
  }
  replaceChildren(...cs) { this.children = []; this.append(...cs); }
  set textContent(v) { this.children = [new Text(String(v))]; }
  get textContent() { return super.textContent; }
  get tBodies() { return this.children.filter((c) => c.tagName === "tbody"); }
  get clientWidth() { return 900; }
  addEventListener() {}
}

function dump(e, depth, out) {
  if (e instanceof Text) return;
  let line = "  ".repeat(depth) + e.tagName;
  const title = e.children.find((c) => c.tagName === "title");
  if (title) line += " " + title.textContent.replace(/\n/g, " / ");
  for (const [k, v] of Object.entries(e.dataset)) line += " data-" + k + "=" + v;
  for (const [k, v] of Object.entries(e.attrs)) if (k.startsWith("data-")) line += " " + k + "=" + v;
  const own = e.children.filter((c) => c instanceof Text).map((c) => c.text).join("");
  if (own) line += " | " + own;
  out.push(line);
  for (const c of e.children) if (c.tagName !== "title") dump(c, depth + 1, out);
}

async function main() {
  const page = await (await fetch(pageURL)).text();
  const byId = new Map();
  for (const m of page.matchAll(/<(\w+)[^>]*\bid="([^"]+)"/g)) {
    const e = new Element(m[1]);
    if (m[1] === "table") e.append(new Element("tbody"));
    if (m[1] === "select") e.value = (page.match(/<option value="(\d+)" selected>/) || [])[1] || "60";
    byId.set(m[2], e);
  }
  const src = page.match(/<script src="([^"]+)"/);
  if (!src) throw new Error("no script in the page");
  const code = await (await fetch(new URL(src[1], pageURL))).text();

  const document = {
    title: "",
    getElementById: (id) => byId.get(id) || null,
    createElement: (tag) => new Element(tag),
    createElementNS: (_, tag) => new Element(tag),
    createTextNode: (s) => new Text(s),
  };
  const done = new Promise((resolve) => {
    const sandbox = {
      document, Node, console,
      window: { addEventListener() {} },
      fetch: (url, opts) => fetch(new URL(url, pageURL), opts),
      // The script's next poll: the first one is over.
      setTimeout: () => resolve(),
    };
    vm.runInNewContext(code, sandbox, { filename: "status.js" });
  });
  realSetTimeout(() => { console.error("dom.js: the script did not poll within 10s"); process.exit(1); }, 10000).unref();
  await done;
  const out = [];
  for (const [id, e] of byId) out.push("#" + id + ": " + e.textContent.replace(/\s+/g, " ").trim());
  for (const [id, e] of byId) { out.push("## " + id); dump(e, 0, out); }
  process.stdout.write(out.join("\n") + "\n", () => process.exit(0));
}

main().catch((err) => { console.error("dom.js:", err); process.exit(1); });
