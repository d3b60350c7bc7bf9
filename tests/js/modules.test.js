// The shell's modules as a whole: each at most 250 lines (so every JS file of assets/), and
// importing any of them but main.js does nothing (only declarations): no global, no DOM use,
// no timer.
import test from "node:test";
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";

const ASSETS = join(new URL(".", import.meta.url).pathname, "..", "..", "assets");
const DIR = join(ASSETS, "js");
const modules = readdirSync(DIR).filter((f) => f.endsWith(".js"));
// The page's one entry point, the only module that does something when loaded: main.js sets the
// start-up order (the build bundles it with every module it imports: sitebuild/bundle.py).
const ENTRIES = ["main.js"];

test("no JavaScript file in assets/ is over 250 lines", () => {
  const all = [...readdirSync(ASSETS).filter((f) => f.endsWith(".js")).map((f) => join(ASSETS, f)), ...modules.map((f) => join(DIR, f))];
  assert.ok(all.length >= 20, all.join(" "));
  for (const f of all) {
    const lines = readFileSync(f, "utf8").split("\n").length - 1;
    assert.ok(lines <= 250, `${f}: ${lines} lines`);
  }
});

test("importing a module does nothing: no global set, no document read, no timer started", async () => {
  const before = new Set(Object.keys(globalThis));
  const touched = [];
  globalThis.document = new Proxy({}, { get: (_, k) => { touched.push(`document.${String(k)}`); return undefined; } });
  const realTimeout = globalThis.setTimeout;
  globalThis.setTimeout = (...a) => { touched.push("setTimeout"); return realTimeout(...a); };
  try {
    for (const f of modules) if (!ENTRIES.includes(f)) await import(join(DIR, f));
  } finally {
    globalThis.setTimeout = realTimeout;
    delete globalThis.document;
  }
  assert.deepEqual(touched, []);
  assert.deepEqual(Object.keys(globalThis).filter((k) => !before.has(k)), []);
});

test("the page loads one shell module, the bundle of main.js, deferred after BokehJS and Panel; nothing else of assets/js", () => {
  const shell = readFileSync(join(ASSETS, "shell.html"), "utf8");
  const scripts = [...shell.matchAll(/<script\b[^>]*\bsrc="([^"]+)"/g)].map((m) => m[1]);
  // (and the stand-in for BokehJS's tables, between BokehJS and Panel: tables-stub.test.js)
  assert.deepEqual(scripts.filter((s) => s.startsWith("assets/")), ["assets/tables-stub.js", "assets/shell.js", "assets/boot-early.js"]);
  const stub = scripts.indexOf("assets/tables-stub.js");
  assert.ok(scripts[stub - 1].endsWith("bokeh-widgets.min.js") && scripts[stub + 1].endsWith("panel.min.js"), scripts);
  assert.match(shell, /<script type="module" src="assets\/shell.js"><\/script>/);  // deferred, as modules are
  assert.doesNotMatch(shell, /modulepreload|(?:src|href)="assets\/js\//);
  // deferred with BokehJS and Panel, and after them: BokehJS is there when first paint runs
  const order = scripts.filter((s) => !s.startsWith("assets/boot-early"));
  assert.ok(order.indexOf("assets/shell.js") > order.findIndex((s) => s.includes("panel.min.js")));
  // every module of assets/js is in main.js's graph but the zoo's own (the zoo page imports it)
  const graph = new Set(["main.js"]);
  const visit = (f) => {
    for (const m of readFileSync(join(DIR, f), "utf8").matchAll(/^import .* from "\.\/([^"]+)";$/gm)) {
      if (!graph.has(m[1])) { graph.add(m[1]); visit(m[1]); }
    }
  };
  visit("main.js");
  assert.deepEqual(modules.filter((f) => !graph.has(f)), ["zoo-table.js"]);
});

test("no module imports itself through others: the shell's imports form no circle", () => {
  const graph = Object.fromEntries(modules.map((f) => [f,
    [...readFileSync(join(DIR, f), "utf8").matchAll(/^import .* from "\.\/([^"]+)";$/gm)].map((m) => m[1])]));
  const circles = [];
  const walk = (f, path) => {
    for (const g of graph[f] || []) {
      if (path.includes(g)) circles.push([...path.slice(path.indexOf(g)), g].join(" -> "));
      else if (path.length < modules.length) walk(g, [...path, g]);
    }
  };
  const done = new Set();
  for (const f of modules) {
    if (!done.has(f)) walk(f, [f]);
    done.add(f);
  }
  assert.deepEqual([...new Set(circles)], []);
});
