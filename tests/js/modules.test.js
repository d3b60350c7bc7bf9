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
// The page's two entry points, the only modules that do something when loaded: main.js sets the
// start-up order; early.js starts Python's worker as soon as the head is parsed (not an embed's).
const ENTRIES = ["main.js", "early.js"];

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

test("main.js sets the start-up order and early.js only starts the worker (not an embed's): the two modules the page loads", () => {
  const shell = readFileSync(join(ASSETS, "shell.html"), "utf8");
  const scripts = [...shell.matchAll(/<script\b[^>]*\bsrc="([^"]+)"/g)].map((m) => m[1]);
  assert.deepEqual(scripts.filter((s) => s.startsWith("assets/")), ["assets/js/main.js", "assets/js/early.js", "assets/boot-early.js"]);
  assert.match(shell, /<script type="module" async src="assets\/js\/early.js"><\/script>/);
  assert.deepEqual(readFileSync(join(DIR, "early.js"), "utf8").split("\n").filter((l) => l && !l.startsWith("//")),
    ['import { embedAsked, savesData } from "./config.js";', 'import { startWorker } from "./worker-start.js";',
      "try { if (!embedAsked() && !savesData()) startWorker(); } catch (err) { /* python.js starts it again and says what failed */ }"]);
  // deferred with BokehJS and Panel, and after them: BokehJS is there when first paint runs
  const order = scripts.filter((s) => !s.startsWith("assets/boot-early"));
  assert.ok(order.indexOf("assets/js/main.js") > order.findIndex((s) => s.includes("panel.min.js")));
  assert.match(shell, /<script type="module" src="assets\/js\/main.js"><\/script>/);
});

test("early.js's imports are named in the page's head (modulepreload): the worker starts at once", () => {
  const shell = readFileSync(join(ASSETS, "shell.html"), "utf8");
  const preloaded = [...shell.matchAll(/<link rel="modulepreload" href="assets\/js\/([^"]+)">/g)].map((m) => m[1]);
  const graph = new Set();
  const visit = (f) => {
    for (const m of readFileSync(join(DIR, f), "utf8").matchAll(/^import .* from "\.\/([^"]+)";$/gm)) {
      if (!graph.has(m[1])) { graph.add(m[1]); visit(m[1]); }
    }
  };
  visit("early.js");
  assert.ok(graph.size >= 1);
  assert.deepEqual([...graph].sort(), [...preloaded].sort());
  // named before the shell's own module, whose forty imports would queue ahead of them
  assert.ok(shell.indexOf('rel="modulepreload"') < shell.indexOf('src="assets/js/main.js"'));
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
