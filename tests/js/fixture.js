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
  globalThis.innerWidth ??= 1280;  // a laptop's window (config.js onAPhone)
  globalThis.innerHeight ??= 800;
  const elements = {};
  const classes = new Set();
  const element = (id) => ({
    id, textContent: "", hidden: true, value: "", title: "", attrs: {}, dataset: {},
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

// A stand-in for the DOM's nodes, enough for morph.js: elements and text nodes, children moved
// (not copied) as in the DOM, attributes by namespace, and a template whose innerHTML parses a
// plain subset of HTML (tags with quoted attributes, void tags, text). Every change is counted
// in `changes` of the document, so a test sees what a morph touched.
const VOID = new Set(["br", "img", "hr", "input"]);
const HTML_NS = "http://www.w3.org/1999/xhtml";

export class FakeNode {
  constructor(doc, type, name, value = null) {
    Object.assign(this, { ownerDocument: doc, nodeType: type, nodeName: name, _value: value,
      namespaceURI: type === 1 ? HTML_NS : null, childNodes: [], attrs: [], parentNode: null });
  }
  get attributes() { return this.attrs.slice(); }
  get firstChild() { return this.childNodes[0] || null; }
  get nextSibling() { return this.parentNode ? this.parentNode.childNodes[this.parentNode.childNodes.indexOf(this) + 1] || null : null; }
  isEqualNode(other) { return other.nodeType === this.nodeType && other.outerHTML === this.outerHTML; }
  get nodeValue() { return this._value; }
  set nodeValue(v) { this._value = v; this.ownerDocument.changes.push(["text", v]); }
  _detach(n) { if (n.parentNode) n.parentNode.childNodes.splice(n.parentNode.childNodes.indexOf(n), 1); }
  appendChild(n) { this._detach(n); n.parentNode = this; this.childNodes.push(n); this.ownerDocument.changes.push(["add", n.nodeName]); return n; }
  replaceChild(n, old) {
    this._detach(n);
    this.childNodes[this.childNodes.indexOf(old)] = n; n.parentNode = this; old.parentNode = null;
    this.ownerDocument.changes.push(["replace", old.nodeName, n.nodeName]); return old;
  }
  removeChild(n) { this._detach(n); n.parentNode = null; this.ownerDocument.changes.push(["remove", n.nodeName]); return n; }
  _attr(ns, local) { return this.attrs.find((a) => a.namespaceURI === ns && a.localName === local); }
  hasAttributeNS(ns, local) { return Boolean(this._attr(ns, local)); }
  getAttributeNS(ns, local) { const a = this._attr(ns, local); return a ? a.value : null; }
  setAttributeNS(ns, name, value) {
    const local = name.includes(":") ? name.split(":")[1] : name;
    const a = this._attr(ns, local);
    if (a) a.value = value; else this.attrs.push({ namespaceURI: ns, name, localName: local, value });
    this.ownerDocument.changes.push(["attr", name, value]);
  }
  removeAttributeNS(ns, local) { this.attrs = this.attrs.filter((a) => a !== this._attr(ns, local)); this.ownerDocument.changes.push(["unattr", local]); }
  get outerHTML() {
    if (this.nodeType === 3) return this.nodeValue;
    const tag = this.nodeName.toLowerCase();
    const attrs = this.attrs.map((a) => ` ${a.name}="${a.value}"`).join("");
    return VOID.has(tag) ? `<${tag}${attrs}>` : `<${tag}${attrs}>${this.innerHTML}</${tag}>`;
  }
  get innerHTML() { return this.childNodes.map((n) => n.outerHTML).join(""); }
}

export function nodeDocument() {
  const doc = { changes: [] };
  doc.createElement = (tag) => {
    const el = new FakeNode(doc, 1, tag.toUpperCase());
    if (tag === "template") {
      el.content = new FakeNode(doc, 11, "#document-fragment");
      Object.defineProperty(el, "innerHTML", { set(html) { parseInto(doc, el.content, html); } });
    }
    return el;
  };
  doc.createTextNode = (text) => new FakeNode(doc, 3, "#text", text);
  return doc;
}

function parseInto(doc, root, html) {
  const stack = [root];
  const push = (n) => { const p = stack[stack.length - 1]; n.parentNode = p; p.childNodes.push(n); };
  for (const [, close, tag, attrs, text] of html.matchAll(/<(\/?)([a-z0-9]+)((?:\s+[a-z:-]+="[^"]*")*)\s*>|([^<]+)/g)) {
    if (text !== undefined) push(doc.createTextNode(text));
    else if (close) stack.pop();
    else {
      const el = new FakeNode(doc, 1, tag.toUpperCase());
      for (const [, name, value] of attrs.matchAll(/([a-z:-]+)="([^"]*)"/g)) el.attrs.push({ namespaceURI: null, name, localName: name, value });
      push(el);
      if (!VOID.has(tag)) stack.push(el);
    }
  }
}
