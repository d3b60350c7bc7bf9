// What the node tests share: the page config as Python states it (ui/contract.py's contract,
// ui/urlstate.py's link contract, for the running-sum page), and stand-ins for BokehJS models
// and the few DOM parts the modules touch. test_player_js.py writes the config to a file
// (LAB_TEST_CONFIG); run alone, `node --test tests/js` asks Python for it.
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { useConfig } from "../../assets/js/config.js";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
export const CONFIG_SCRIPT = "import json; from tests.js.test_player_js import page_config; print(json.dumps(page_config()))";

export function loadConfig() {
  const file = process.env.LAB_TEST_CONFIG;
  let text;
  if (file) text = readFileSync(file, "utf8");
  else {
    const venv = join(ROOT, ".venv", "bin", "python");
    text = execFileSync(existsSync(venv) ? venv : "python3", ["-c", CONFIG_SCRIPT], { cwd: ROOT, encoding: "utf8" });
  }
  const config = JSON.parse(text);
  useConfig(config);
  return config;
}

// A BokehJS model stand-in: props, css_classes, and setv that counts its calls.
export function model(props) {
  return Object.assign({ visible: true, css_classes: [], setv(p) { Object.assign(this, p); this.calls = (this.calls || 0) + 1; } }, props);
}
// A data source whose every assignment of data is counted.
export function source(data) {
  const s = { sets: 0, set data(v) { this._d = v; this.sets += 1; }, get data() { return this._d; } };
  s.data = data;
  return s;
}
// A document of these models (roots: the first), found by name like BokehJS's.
export function fakeDoc(models, roots = models.slice(0, 1)) {
  return {
    all_models: new Set(models), roots: () => roots,
    get_model_by_name: (n) => models.find((m) => m.name === n) || null,
  };
}

// The DOM parts the shell's modules use: elements by id (made on first use), the root's
// classes and data set. Returns the elements by id.
export function fakeDocument() {
  const elements = {};
  const classes = new Set();
  const element = (id) => ({
    id, textContent: "", hidden: true, value: "", title: "", attrs: {},
    setAttribute(k, v) { this.attrs[k] = String(v); }, getAttribute(k) { return this.attrs[k] ?? null; },
    style: { setProperty() {} },
  });
  globalThis.document = {
    getElementById: (id) => (elements[id] ??= element(id)),
    documentElement: {
      dataset: {},
      classList: { contains: (c) => classes.has(c), add: (c) => classes.add(c), remove: (c) => classes.delete(c), toggle: (c, on) => (on ?? !classes.has(c)) ? classes.add(c) : classes.delete(c) },
    },
    body: { classList: { add() {}, remove() {} } },
  };
  return elements;
}
