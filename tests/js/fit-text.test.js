// assets/js/fit-text.js: the numbers in a heatmap's cells only where the cells fit them, at the
// page's size or larger in the presenter view, never under CELL_MIN px.
import test from "node:test";
import assert from "node:assert/strict";
import { CELL_MIN, cellNumberPx } from "../../assets/js/fit-text.js";

// "-0.12" in the site's font is about 2.6 px wide at 1 px
const NUMBER = 2.6;

test("running-sum's output at d = 4 keeps its 11 px numbers; at d = 16 and d = 32 it has none", () => {
  const frame = 230;  // px: the output figure's frame at 330 px
  assert.equal(cellNumberPx(frame / 4, 50, NUMBER, 11, false), 11);
  assert.equal(cellNumberPx(frame / 16, 50, NUMBER, 11, false), 0);  // 14 px cells, 29 px numbers
  assert.equal(cellNumberPx(frame / 32, 50, NUMBER, 11, false), 0);
});

test("a cell a little narrow takes its numbers a little smaller, down to CELL_MIN, then none", () => {
  const px = cellNumberPx(30, 40, NUMBER, 11, false);
  assert.ok(px >= CELL_MIN && px < 11 && NUMBER * px <= 0.86 * 30, px);
  assert.equal(cellNumberPx(CELL_MIN * NUMBER / 0.86 - 1, 40, NUMBER, 11, false), 0);
  assert.equal(cellNumberPx(60, 12, NUMBER, 11, false), 0);  // too short a cell, however wide
});

test("in the presenter view the numbers grow with the cells, up to 30 px, and still go when they cannot fit", () => {
  assert.equal(cellNumberPx(200, 200, NUMBER, 11, true), 30);
  const px = cellNumberPx(60, 60, NUMBER, 11, true);
  assert.ok(px > 11 && NUMBER * px <= 0.86 * 60 + 1e-9, px);
  assert.equal(cellNumberPx(20, 60, NUMBER, 11, true), 0);
});

// Labels along x (contract().cell_text: chunkwise's tokens 1-16 and chunk names), on a fake
// figure never laid out (its axes guessed at 90 px): each fitted into the room to its neighbours.
test("labels along x keep their scaled size where the room to their neighbours holds them, shrink to fit, and go where they cannot", async () => {
  const { loadConfig, model } = await import("./fixture.js");
  const { fitTexts } = await import("../../assets/js/fit-text.js");
  const config = loadConfig();
  const tokens = Array.from({ length: 16 }, (_, i) => i + 1);
  const labels = (x, text, name = config.contract.cell_text) => model({ name, data_source: { data: { x, text } },
    glyph: { type: "Text", x: { field: "x" }, text: { field: "text" }, text_font_size: { value: "11px" } } });
  const strip = (width, present = false) => {
    const numbers = labels(tokens, tokens.map(String)), names = labels([2.5, 6.5, 10.5, 14.5], ["chunk 1", "chunk 2", "chunk 3", "chunk 4"]);
    const other = labels([2.5], ["chunk 1"], null);
    const fig = model({ renderers: [numbers, names, other], toolbar: {}, background_fill_color: "#fff",
      width, height: 150, x_range: { start: 0.5, end: 16.5 }, y_range: { start: 0, end: 1 } });
    const fit = () => fitTexts({ all_models: new Set([fig, numbers, names, other]) }, { size: 1.5, font: 1.6, wide: () => 1, tall: 1 }, present);
    fit();
    return { fig, numbers, names, other, fit };
  };
  const size = (r) => r.glyph.text_font_size.value;
  const roomy = strip(900);  // cells of 50 px: 11 px scaled 1.5
  assert.deepEqual([size(roomy.numbers), roomy.numbers.visible, size(roomy.names)], ["16px", true, "16px"]);
  assert.equal(size(roomy.other), "11px");  // not named: left to restyle
  assert.deepEqual([size(strip(900, true).numbers)], ["17px"]);  // the presenter's type (11 x 1.6)
  const tight = strip(430);  // cells of 21 px: "16" smaller than 16 px; chunk names 84 px apart
  const px = parseFloat(size(tight.numbers));
  assert.ok(px >= CELL_MIN && px < 16 && 2 * 0.62 * px <= 0.86 * 340 / 16, px);
  assert.equal(size(tight.names), "16px");
  const narrow = strip(280);  // cells of 12 px: no number reads; names 48 px apart, "chunk 1" smaller
  assert.equal(narrow.numbers.visible, false);
  assert.ok(parseFloat(size(narrow.names)) < 16 && narrow.names.visible, size(narrow.names));
  narrow.fig.width = 900;  // wider again: shown again
  narrow.fit();
  assert.deepEqual([narrow.numbers.visible, size(narrow.numbers)], [true, "16px"]);
});

test("a figure's width: its own, or less as laid out; a fluid one's as laid out, up to its max_width as now sized", async () => {
  const { widthGot } = await import("../../assets/js/figure-base.js");
  const fixed = { sizing_mode: "fixed" }, fluidTo = (max) => ({ sizing_mode: "stretch_width", max_width: max });
  assert.equal(widthGot(fixed, 400, null), 400);  // never laid out
  assert.equal(widthGot(fixed, 400, { width: 300 }), 300);  // squeezed
  assert.equal(widthGot(fixed, 400, { width: 500 }), 400);
  assert.equal(widthGot(fluidTo(1167), 553, { width: 1167 }), 1167);  // hybrid's memory plot
  // chunkwise's cost figures (max_width = their width) laid out at a larger scale before
  assert.equal(widthGot(fluidTo(551), 551, { width: 880 }), 551);
  assert.equal(widthGot({ sizing_mode: "stretch_width" }, 551, { width: 880 }), 880);  // no cap
});
