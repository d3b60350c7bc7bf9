// assets/js/tabs.js: which tab a key moves to (the arrows wrap round, Home and End go to the
// ends, other keys are not the tab set's), and the heatmap colours restyle.js swaps in per theme.
import test from "node:test";
import assert from "node:assert/strict";
import { headersFirst, tabKey } from "../../assets/js/tabs.js";
import { restyle } from "../../assets/js/restyle.js";
import { fakeDoc, loadConfig, model } from "./fixture.js";

const { contract } = loadConfig();

test("the arrows move to the next and previous tab and wrap round; Home and End to the ends", () => {
  assert.deepEqual(["ArrowRight", "ArrowDown", "ArrowLeft", "ArrowUp", "Home", "End"].map((k) => tabKey(k, 0, 3)), [1, 1, 2, 2, 0, 2]);
  assert.equal(tabKey("ArrowRight", 2, 3), 0);
  assert.equal(tabKey("Enter", 1, 3), null);
  assert.equal(tabKey("a", 1, 3), null);
});

test("a heatmap's scale, cell inks and cell lines follow the theme, and back exactly", () => {
  const { light, dark } = contract.heatmap;
  const mapper = model({ type: "LinearColorMapper", palette: [...light.palette], nan_color: light.masked });
  const other = model({ type: "LinearColorMapper", palette: ["#000000", "#ffffff"] });
  const ink = model({ type: "Text", text_color: { value: light.ink } });
  const strong = model({ type: "Text", text_color: { value: light.ink_strong } });
  const lines = model({ type: "Segment", line_color: { value: light.border } });
  const doc = fakeDoc([mapper, other, ink, strong, lines]);
  restyle(doc, "dark", false);
  assert.deepEqual(mapper.palette, dark.palette);
  assert.equal(mapper.palette[(mapper.palette.length - 1) / 2], dark.palette[5]);
  assert.notEqual(dark.palette[5], light.palette[5]);
  assert.deepEqual(other.palette, ["#000000", "#ffffff"]);  // not a heatmap's scale: left alone
  assert.equal(mapper.nan_color, dark.masked);
  assert.deepEqual([ink.text_color.value, strong.text_color.value, lines.line_color.value], [dark.ink, dark.ink_strong, dark.border]);
  restyle(doc, "light", false);
  assert.deepEqual([mapper.palette, mapper.nan_color], [light.palette, light.masked]);
  assert.deepEqual([ink.text_color.value, strong.text_color.value, lines.line_color.value], [light.ink, light.ink_strong, light.border]);
});

test("the tab list moves ahead of its panels (BokehJS appends it after them), once", () => {
  const root = { children: [] };
  const el = (name) => ({ name, parentNode: root });
  const [style, p1, p2, header] = ["style", "panel 1", "panel 2", "header"].map(el);
  root.children = [style, p1, p2, header];
  const at = (x) => root.children.indexOf(x);
  for (const x of root.children) x.compareDocumentPosition = (other) => (at(other) < at(x) ? 2 : 4);
  root.insertBefore = (x, before) => { root.children.splice(at(x), 1); root.children.splice(at(before), 0, x); };
  assert.equal(headersFirst(header, [p1, p2]), true);
  assert.deepEqual(root.children.map((x) => x.name), ["style", "header", "panel 1", "panel 2"]);
  assert.equal(headersFirst(header, [p1, p2]), false);
  assert.equal(headersFirst(header, [null]), false);
});
