// assets/tables-stub.js: stands in for BokehJS's tables bundle, which the site does not ship. Panel's
// bundle asks for "@bokehjs/models/widgets/tables" at load (TableColumn, for its Tabulator).
import test from "node:test";
import assert from "node:assert/strict";
import { createRequire } from "node:module";

test("the tables module is registered under the name Panel asks for, and a table said to be missing if made", () => {
  const plugins = [];
  globalThis.Bokeh = { "3.9.2": { register_plugin: (...args) => plugins.push(args) } };
  try {
    createRequire(import.meta.url)("../../assets/tables-stub.js");
  } finally {
    delete globalThis.Bokeh;
  }
  assert.equal(plugins.length, 1);
  const [modules, entry, aliases] = plugins[0];
  assert.deepEqual(aliases, { "models/widgets/tables/index": entry });
  const exports = {};
  let esModule = false;
  modules[entry](() => { throw new Error("it needs no other module"); }, {}, exports, () => { esModule = true; });
  assert.ok(esModule);
  assert.throws(() => new exports.TableColumn(), /BokehJS's tables are not part of this site/);
});
