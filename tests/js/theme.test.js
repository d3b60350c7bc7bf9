// assets/js/theme.js, share.js, formulas.js: the figures follow the theme and the view (print
// is light whatever the theme), the settings fold on a named view, the embed code is the link
// with embed=1, and the formulas are typeset once KaTeX's three files have loaded in order.
import test from "node:test";
import assert from "node:assert/strict";
import { THEMES } from "../../assets/js/restyle.js";
import { folded, styleDoc } from "../../assets/js/theme.js";
import { readLink } from "../../assets/js/link.js";
import { embedCode } from "../../assets/js/share.js";
import { DELIMITERS, typeset } from "../../assets/js/formulas.js";
import { fakeDoc, fakeDocument, loadConfig, model } from "./fixture.js";

const { contract, link } = loadConfig();
fakeDocument();
const figure = () => model({ background_fill_color: "#fff", border_fill_color: "#fff", outline_line_color: "#eee", renderers: [], toolbar: {}, width: 300, height: 200 });

test("a document is styled for the theme on show, the presenter view scaled", () => {
  readLink("");
  const fig = figure();
  document.documentElement.dataset.theme = "dark";
  styleDoc(fakeDoc([fig]));
  assert.equal(fig.background_fill_color, THEMES.dark.background);
  document.documentElement.classList.add("present");
  styleDoc(fakeDoc([fig]));
  assert.ok(fig.width > 300, String(fig.width));
  document.documentElement.classList.remove("present");
  styleDoc(fakeDoc([fig]));
  assert.deepEqual([fig.width, fig.height], [300, 200]);
});

test("the settings fold in the presenter view and a named view, not on a wide screen's page", () => {
  readLink("");
  assert.equal(folded(), false);
  document.documentElement.classList.add("present");
  assert.equal(folded(), true);
  document.documentElement.classList.remove("present");
  readLink(`?view=${link.views[0]}`);
  assert.equal(folded(), true);
  const controls = model({ css_classes: [contract.roles.controls] });
  styleDoc(fakeDoc([model({ children: [controls] }), controls]));
  assert.equal(controls.visible, false);
});

test("the embed code frames the link with embed=1, without the presenter view, its values escaped", () => {
  globalThis.document.createElement = () => {
    const attrs = [];
    return { setAttribute: (k, v) => attrs.push([k, v]),
      get outerHTML() { return `<iframe ${attrs.map(([k, v]) => `${k}="${String(v).replace(/&/g, "&amp;").replace(/"/g, "&quot;")}"`).join(" ")}></iframe>`; } };
  };
  const code = embedCode("https://lab.example/gates.html?d=4&present=1&t=2", 'Gates "1"', 700);
  assert.match(code, /src="https:\/\/lab\.example\/gates\.html\?d=4&amp;t=2&amp;embed=1"/);
  assert.match(code, /title="Gates &quot;1&quot;"/);
  assert.match(code, /height="700"/);
});

test("KaTeX's two scripts (in order) and its style sheet load, then the lesson's formulas are typeset", async () => {
  const appended = [], rendered = [];
  globalThis.document.createElement = (tag) => ({ tag });
  globalThis.document.head = { append: (el) => { appended.push(el); queueMicrotask(() => el.onload()); } };
  globalThis.document.querySelectorAll = (css) => css.split(", ").map((name) => ({ childNodes: [{ nodeType: 1, name: `${name} p` }] }));
  globalThis.window = { renderMathInElement: (el, opts) => rendered.push([el.name, opts.delimiters, opts.throwOnError]) };
  await typeset();
  assert.deepEqual(appended.map((e) => e.href || e.src), ["static/katex/katex.min.js", "static/katex/contrib/auto-render.min.js", "static/katex/katex.min.css"]);
  assert.deepEqual(appended.filter((e) => e.tag === "script").map((e) => e.async), [false, false]);  // run in order
  assert.deepEqual(rendered, [[".lab-text p", DELIMITERS, false], [".lab-intro p", DELIMITERS, false]]);  // block by block
  delete globalThis.window;
});

test("a KaTeX file that does not load leaves the text as it is, with a warning, no error", async () => {
  const warned = [];
  const warn = console.warn;
  console.warn = (...a) => warned.push(a.join(" "));
  globalThis.document.head = { append: (el) => queueMicrotask(() => (el.src && el.src.endsWith("auto-render.min.js") ? el.onerror() : el.onload())) };
  try { await typeset(); } finally { console.warn = warn; }
  assert.match(warned.join("\n"), /auto-render\.min\.js did not load/);
});
