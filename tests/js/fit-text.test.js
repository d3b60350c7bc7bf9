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
