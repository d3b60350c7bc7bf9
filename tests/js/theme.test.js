// assets/js/theme.js, share.js: the figures follow the theme and the view (print is light
// whatever the theme), the settings fold on a named view, the embed code is the link with
// embed=1. (The formulas come typeset from the build: sitebuild/formulas.py.)
import test from "node:test";
import assert from "node:assert/strict";
import { THEMES } from "../../assets/js/restyle.js";
import { folded, styleDoc } from "../../assets/js/theme.js";
import { readLink } from "../../assets/js/link.js";
import { embedCode } from "../../assets/js/share.js";
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
