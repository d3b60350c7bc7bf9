// assets/js/presenter.js, fit-measure.js, fit-memory.js: the presenter fit's search against a
// fake measure (a page whose reach grows with the scale, as BokehJS lays it out), the room
// beside and below the figures' rows, and a fit remembered per page, build, screen and settings.
import test from "node:test";
import assert from "node:assert/strict";
import { figureRows, MAX_WIDE, overflows, widths } from "../../assets/js/fit-measure.js";
import { recallFit, rememberFit } from "../../assets/js/fit-memory.js";
import { searchScale } from "../../assets/js/presenter.js";
import { readLink } from "../../assets/js/link.js";
import { fakeDocument, loadConfig, model } from "./fixture.js";

loadConfig();
fakeDocument();
globalThis.innerWidth = 1280;
globalThis.innerHeight = 800;

// A page 100 px down the screen whose figures reach 100 + 400 * scale px down and 700 * scale
// px across (and wrap to a second row above `wrapAt`, twice as tall): a fake measure.
function fakePage({ wrapAt = Infinity } = {}) {
  const tries = [];
  const room = { top: 100, width: 1280, height: 800 };
  const tryFit = async (scale) => {
    tries.push(scale);
    const bottom = 100 + 400 * scale * (scale > wrapAt ? 2 : 1), right = 700 * scale;
    return { fits: !overflows([bottom, right], room), reach: [bottom, right] };
  };
  return { tries, room, tryFit };
}

test("the search finds a scale that fits within 3 % of the largest, in a few layouts", async () => {
  const { tries, room, tryFit } = fakePage();
  // fits while 100 + 400 s <= 801 and 700 s <= 1281: s <= 1.7525 (it aims 1.5 % below the edge)
  const best = await searchScale(0.9, tryFit, room);
  assert.ok(best <= 1.7525 && best > 0.97 * 1.7525, `best ${best}`);
  assert.ok(tries.length <= 8, `${tries.length} layouts: ${tries}`);
  assert.ok(!tries.includes(0.9), `the lowest scale tried though a larger one fits: ${tries}`);
});

test("when only the lowest scales fit, lo is tried and the answer fits; when none does, null", async () => {
  // fits while 100 + 400 s <= 801 and 700 s <= 1281: in a room 480 px tall, s <= 0.95
  const low = fakePage();
  low.room.height = 480;
  const best = await searchScale(0.9, low.tryFit, low.room);
  assert.ok(best >= 0.9 && best <= 0.95, `best ${best}: ${low.tries}`);
  assert.equal((await low.tryFit(best)).fits, true);
  const none = fakePage();
  none.room.height = 400;  // s <= 0.7
  assert.equal(await searchScale(0.9, none.tryFit, none.room), null);
  assert.equal(none.tries.at(-1), 0.9, `${none.tries}`);
  assert.ok(none.tries.length <= 3, `${none.tries}`);
});

test("a page with parts that do not scale is found in a few layouts from the parts' reach", async () => {
  // 100 px down, a 150 px header that does not scale, figures 380 px a scale unit; the document
  // never reports less than the screen (its scroll size), the parts alone report their reach:
  // fits while 250 + 380 s <= 801, s <= 1.45
  const tries = [], room = { top: 100, width: 1280, height: 800 };
  const tryFit = async (scale) => {
    tries.push(scale);
    const parts = [Math.ceil(250 + 380 * scale), Math.ceil(600 * scale)];
    const reach = [Math.max(800, parts[0]), Math.max(1280, parts[1])];
    return { fits: !overflows(reach, room), reach, parts };
  };
  const best = await searchScale(0.9, tryFit, room);
  assert.ok(best <= 1.45 && best >= 0.98 * 1.45, `best ${best}: ${tries}`);
  assert.ok(tries.length <= 4, `${tries.length} layouts: ${tries}`);
});

test("a row that wraps above a scale is found by halving: the answer still fits", async () => {
  const { room, tryFit } = fakePage({ wrapAt: 1.2 });
  const best = await searchScale(0.9, tryFit, room);
  assert.ok(best <= 1.2 && best >= 0.9, `best ${best}`);
  assert.equal((await tryFit(best)).fits, true);
});

test("no scale is offered when even the lowest does not fit", async () => {
  const { tries, room, tryFit } = fakePage();
  assert.equal(await searchScale(2.5, tryFit, room), null);
  assert.deepEqual(tries, [2.5]);
});

const figure = (title) => model({ renderers: [], toolbar: {}, title: { text: title } });
const box = (top, left, width, height) => ({ top, left, width, height, bottom: top + height, right: left + width });

test("a row's figures grow into the room at its side, at most MAX_WIDE; a text beside them keeps its width", () => {
  const a = figure("A"), b = figure("B"), c = figure("C"), d = figure("D"), text = model({}), wideText = model({});
  const parts = [
    { m: a, r: box(0, 0, 300, 200), figure: true }, { m: b, r: box(0, 310, 300, 200), figure: true },
    { m: c, r: box(250, 0, 300, 200), figure: true }, { m: text, r: box(250, 320, 200, 200), figure: false },
    { m: d, r: box(500, 0, 300, 200), figure: true }, { m: wideText, r: box(500, 320, 660, 200), figure: false },
  ];
  const wide = widths(parts, 1000);
  // row 1: the figures' 600 px of the row's 610 grow into 0.98 * (1000 - 18) less the 10 px gap
  assert.equal(wide.get("A#1"), Math.floor((0.98 * 982 - 10) / 600 * 100) / 100);  // 1.58
  assert.equal(wide.get("B#1"), wide.get("A#1"));
  // row 2: a legend of 200 px at 320 keeps its width: (962.36 - 220) / 300 = 2.47, at most MAX_WIDE
  assert.equal(wide.get("C#1"), MAX_WIDE);
  // row 3: a text that reaches the screen's edge leaves the figure no room
  assert.equal(wide.get("D#1"), 1);
  assert.equal(widths(parts.slice(0, 1), 5000).get("A#1"), MAX_WIDE);
});

test("the figures' rows add up once per row, what overlaps counted once", () => {
  const parts = [
    { r: box(0, 0, 100, 200), figure: true }, { r: box(2, 110, 100, 200), figure: true },  // one row
    { r: box(300, 0, 100, 100), figure: true }, { r: box(350, 110, 100, 100), figure: true },  // overlapping
    { r: box(500, 0, 100, 50), figure: false },  // a text: only where the page ends
  ];
  // 0-200, then 2 px more of the second; 300-400, then 50 px more of the fourth
  assert.deepEqual(figureRows(parts), { rows: 200 + 2 + 100 + 50, bottom: 550 });
});

function storage() {
  const items = new Map();
  return {
    get length() { return items.size; }, key: (i) => [...items.keys()][i] ?? null,
    getItem: (k) => items.get(k) ?? null, setItem: (k, v) => items.set(k, String(v)), removeItem: (k) => items.delete(k), items,
  };
}

test("a fit is remembered for this page, build, screen and settings; an older build's are dropped", () => {
  const store = storage();
  store.setItem("lab-fit:running-sum:oldbuild:1x1::", "{}");
  store.setItem("other", "kept");
  readLink("");
  assert.equal(recallFit(store), null);
  rememberFit({ scale: 1.3, wide: new Map([["A#1", 1.2]]), tall: 1.1, drop: false }, store);
  assert.deepEqual(recallFit(store), { scale: 1.3, wide: [["A#1", 1.2]], tall: 1.1, drop: false, tooSmall: false });
  assert.deepEqual([...store.items.keys()].filter((k) => k.includes("oldbuild")), []);
  assert.equal(store.getItem("other"), "kept");
  globalThis.innerWidth = 1000;  // another screen: fitted anew
  assert.equal(recallFit(store), null);
  globalThis.innerWidth = 1280;
});

test("a broken remembered fit is ignored, and blocked storage remembers for this visit only", () => {
  const store = storage();
  readLink("");
  rememberFit({ scale: 1, wide: new Map(), tall: 1, drop: false }, store);
  const [key] = store.items.keys();
  store.setItem(key, '{"scale": "big"}');
  assert.equal(recallFit(store), null);
  store.setItem(key, "{not json");
  assert.equal(recallFit(store), null);
  const blocked = { get length() { throw new Error("blocked"); }, getItem() { throw new Error("blocked"); } };
  assert.equal(recallFit(blocked, "other"), null);
  assert.doesNotThrow(() => rememberFit({ scale: 0.8, wide: new Map(), tall: 1, drop: true }, blocked, "other"));
  assert.equal(recallFit(blocked, "other").scale, 0.8);  // this visit's
  assert.equal(recallFit(store, "other"), null);  // not written anywhere that lasts
});
