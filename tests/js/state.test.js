// assets/js/state.js: one state object, each key written by exactly the module its table names;
// window.lab.state is a read-only view of it.
import test from "node:test";
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { readOnly, state } from "../../assets/js/state.js";

const DIR = join(import.meta.dirname ?? new URL(".", import.meta.url).pathname, "..", "..", "assets", "js");
const files = readdirSync(DIR).filter((f) => f.endsWith(".js"));
const source = (f) => readFileSync(join(DIR, f), "utf8");

// The table at the head of state.js: "// key  writer.js  readers  what".
function table() {
  const rows = {};
  for (const line of source("state.js").split("\n")) {
    const m = /^\/\/ (\w+)\s+([\w-]+\.js)\s/.exec(line);
    if (m && m[1] !== "key") rows[m[1]] = m[2];
  }
  return rows;
}

test("every key of state is in the table, and the table names no key state lacks", () => {
  assert.deepEqual(Object.keys(table()).sort(), Object.keys(state).sort());
});

test("each state key is assigned in exactly one module, the writer its table names", () => {
  const writers = {};
  for (const f of files) {
    for (const m of source(f).matchAll(/\bstate\.(\w+)\s*(?:[-+*]?=(?!=)|\+\+|--)/g)) {
      (writers[m[1]] ??= new Set()).add(f);
    }
  }
  const rows = table();
  for (const [key, writer] of Object.entries(rows)) {
    const seen = [...(writers[key] || [])];
    // a key no module assigns keeps its first value (none today)
    assert.ok(seen.length <= 1 && (seen.length === 0 || seen[0] === writer), `${key}: written in ${seen.join(", ")}, table says ${writer}`);
  }
  for (const key of Object.keys(writers)) assert.ok(key in rows, `state.${key} is written but not in the table`);
});

test("window.lab.state is a read-only view: assigning throws, wide reads as a plain object", () => {
  const view = readOnly({ live: false, wide: new Map([["State#1", 1.2]]) });
  assert.throws(() => { view.live = true; }, /read-only/);
  assert.equal(view.live, false);
  assert.deepEqual(view.wide, { "State#1": 1.2 });
});
