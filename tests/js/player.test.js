// The browser player (assets/js/player.js, guard.js, restyle.js) in node: frames applied per
// model, clamping, stops, the guard that keeps the player's own changes from Python, and the
// theme restyle.
import test from "node:test";
import assert from "node:assert/strict";
import { apply, clamp, group, player } from "../../assets/js/player.js";
import { restyle } from "../../assets/js/restyle.js";
import { fakeDoc as docOf, loadConfig, model, source } from "./fixture.js";

const config = loadConfig();
const F = config.contract.frames;  // the frame bindings' names (ui/contract.py)

globalThis.innerWidth ??= 1280;  // a laptop's window (config.js onAPhone)

test("apply puts frame t of each column into its model, one assignment per model", () => {
  const cells = source({ x: [0, 1], label: ["a", "b"], ink: ["k", "k"] });
  cells.sets = 0;
  const span = model({ location: 0 });
  const columns = { "0:label": [["a", "b"], ["c", "d"]], "0:ink": [["k", "k"], ["w", "k"]], "1:m": [0, 7] };
  const groups = group([[cells, `${F.data_prefix}label`, "0:label"], [cells, `${F.data_prefix}ink`, "0:ink"], [span, "location", "1:m"]]);
  apply(groups, columns, 1);
  assert.deepEqual(cells.data, { x: [0, 1], label: ["c", "d"], ink: ["w", "k"] });
  assert.equal(cells.sets, 1);
  assert.equal(span.location, 7);
  assert.equal(span.calls, 1);
});

test("text alternatives go to the describe callback, not to the model", () => {
  const fig = model({});
  const seen = [];
  apply(group([[fig, F.alt, "a"]]), { a: ["zero", "one"] }, 1, (m, text) => seen.push([m, text]));
  assert.deepEqual(seen, [[fig, "one"]]);
  assert.equal(fig.calls, undefined);
});

test("clamp keeps t within the run and reads nonsense as 0", () => {
  assert.deepEqual([clamp(-3, 5), clamp(9, 5), clamp("2", 5), clamp("x", 5), clamp(2.6, 5)], [0, 5, 2, 0, 3]);
});

// A document whose frames source is found by name, as player.attach looks for it.
const fakeDoc = (frames) => docOf([Object.assign(frames, { name: config.contract.frames.source })]);

test("the player steps, stops at the end, goes back, resets and jumps between named stops", () => {
  const span = model({ location: -1 });
  const frames = source({ t: [0, 1, 2, 3, 4], "0:m": [10, 11, 12, 13, 14] });
  frames.tags = [{ bindings: [[span, "location", "0:m"]], stops: [["t = d", 2]] }];
  const seen = [];
  player.listeners = [];
  player.onChange((t, tMax) => seen.push(`${t}/${tMax}`));
  player.t = 0;
  player.attach(fakeDoc(frames));
  assert.equal(span.location, 10);
  player.step(); player.step();
  assert.equal(span.location, 12);
  player.seek(99);
  assert.equal(player.t, 4);
  player.step();  // at the end: stays
  assert.equal(player.t, 4);
  player.back();
  assert.equal(span.location, 13);
  player.jump(-1);
  assert.equal(player.t, 2);
  player.jump(-1);
  assert.equal(player.t, 0);
  player.jump(1);
  assert.equal(player.t, 2);
  player.reset();
  assert.equal(player.t, 0);
  assert.deepEqual(seen.slice(0, 3), ["0/4", "1/4", "2/4"]);
  // new frames (a new setting) with a shorter run: t is kept where it still exists
  player.seek(4);
  frames.data = { t: [0, 1, 2], "0:m": [20, 21, 22] };
  player.refresh();
  assert.equal(player.t, 2);
  assert.equal(span.location, 22);
});

test("new frames are told to those who listen; a first attach only when its caller says", () => {
  const span = model({ location: 0 });
  const frames = source({ t: [0, 1], "0:m": [5, 6] });
  frames.tags = [{ bindings: [[span, "location", "0:m"]] }];
  const heard = [];
  const was = player.refreshed;
  player.refreshed = [];
  player.onRefresh(() => heard.push(player.tMax));
  player.t = 0;
  try {
    player.attach(fakeDoc(frames));  // the page built ahead of time: shown, nobody told yet
    assert.equal(span.location, 5);
    assert.deepEqual(heard, []);
    player.notifyRefresh();  // first-paint.js, once its plots are on screen
    assert.deepEqual(heard, [1]);
    frames.data = { t: [0, 1, 2], "0:m": [7, 8, 9] };
    player.refresh();  // new frames from Python: told at once
    assert.deepEqual(heard, [1, 2]);
  } finally { player.refreshed = was; }
});

test("the guard keeps the player's own changes from Python's link", () => {
  const span = model({ location: 0 });
  const frames = source({ t: [0, 1], "0:m": [5, 6] });
  frames.tags = [{ bindings: [[span, "location", "0:m"]] }];
  const sent = [];
  const jsdoc = { on_change(cb) { this.cb = cb; } };
  player.guard(jsdoc);
  jsdoc.on_change((e) => sent.push(e));
  player.attach(fakeDoc(frames));
  jsdoc.cb({ model: span, attr: "location" });  // a bound model: the browser's own
  const widget = {};
  jsdoc.cb({ model: widget, attr: "value" });  // a setting: goes to Python
  assert.deepEqual(sent, [{ model: widget, attr: "value" }]);
});

test("restyle follows the theme and scales for the presenter view, and back exactly", () => {
  const fig = model({ background_fill_color: "#fff", border_fill_color: "#fff", outline_line_color: "#eee",
    renderers: [], toolbar: {}, width: 300, height: 290 });
  const axis = model({ axis_label_text_color: "#000", major_label_text_color: "#000", axis_line_color: "#000",
    major_tick_line_color: "#000", minor_tick_line_color: "#000", axis_label_text_font_size: "13px",
    major_label_text_font_size: "11px", axis_label_text_font_style: "italic" });
  const span = model({ dimension: "height", location: 1, line_color: "#6e7781", line_width: 1.5 });
  const doc = { all_models: new Set([fig, axis, span]) };
  restyle(doc, "dark", true);
  assert.equal(fig.background_fill_color, "#161b22");
  assert.deepEqual([fig.width, fig.height], [435, 421]);  // whole pixels (Python checks Int)
  assert.equal(axis.major_label_text_font_size, "18px");
  assert.equal(span.line_color, "#9da7b3");
  assert.equal(span.line_width, 2.7);
  restyle(doc, "light", false);
  assert.deepEqual([fig.width, fig.height, span.line_width, span.line_color], [300, 290, 1.5, "#6e7781"]);
  assert.equal(fig.background_fill_color, "#ffffff");
});

test("a legend moves for the presenter view: beside a wide figure, under one on a phone; it joins a side before leaving the other", () => {
  const changes = [];
  // a figure whose sides record each change, and whether a legend was on neither side then
  const figure = (props) => {
    const fig = model({ background_fill_color: "#fff", renderers: [], toolbar: {}, ...props });
    for (const side of ["below", "right"]) {
      let v = fig[side];
      Object.defineProperty(fig, side, { get: () => v, set: (x) => {
        v = x;
        const lost = fig.legends.filter((l) => !fig.below.includes(l) && !fig.right.includes(l));
        changes.push([side, lost.length]);
      } });
    }
    return fig;
  };
  const items = [{}, {}, {}];
  const two = model({ type: "Legend", items, orientation: "horizontal", ncols: 2, label_text_color: "#000" });
  const wide = figure({ width: 400, height: 200, below: [two], right: [], legends: [two] });
  const side = model({ type: "Legend", items, orientation: "vertical", label_text_color: "#000" });
  const tall = figure({ width: 300, height: 290, below: [], right: [side], legends: [side] });
  const doc = { all_models: new Set([wide, two, tall, side]) };
  const was = globalThis.innerWidth;
  globalThis.innerWidth = 1280;
  try {
    restyle(doc, "light", true);  // a laptop: the legend of two rows beside its wide figure, one column
    assert.deepEqual([wide.below, wide.right, two.orientation, two.ncols], [[], [two], "vertical", 1]);
    assert.deepEqual([tall.below, tall.right], [[], [side]]);
    restyle(doc, "light", false);
    assert.deepEqual([wide.below, wide.right, two.orientation, two.ncols], [[two], [], "horizontal", 2]);
    globalThis.innerWidth = 390;  // a phone: the legend at the right goes under its figure
    restyle(doc, "light", true);
    assert.deepEqual([tall.below, tall.right, wide.below, wide.right], [[side], [], [two], []]);
    assert.deepEqual([two.orientation, two.ncols, side.orientation], ["vertical", 1, "vertical"]);  // one column
    restyle(doc, "light", false);
    assert.deepEqual([tall.below, tall.right], [[], [side]]);
  } finally {
    globalThis.innerWidth = was;
  }
  assert.ok(changes.length >= 6, changes);
  assert.deepEqual(changes.filter(([, lost]) => lost), [], "a legend was on neither side");
});

test("a click right after a value change reaches Python after it, not before", () => {
  const sent = [];
  const jsdoc = { on_change(cb) { this.cb = cb; } };
  player.bound = new Set();
  player.guard(jsdoc);
  jsdoc.on_change((e) => sent.push(e.kind));
  jsdoc.cb({ kind: "ModelChanged", model: {} });
  jsdoc.cb({ kind: "MessageSent", model: {} });  // the click: in order, at once (the worker's link keeps it)
  assert.deepEqual(sent, ["ModelChanged", "MessageSent"]);
});

test("restyle puts every text in the site's UI font: titles, axes, legends, cell numbers", () => {
  const title = model({ text: "State", text_font: "helvetica", text_font_size: "14px", text_color: "#000" });
  const axis = model({ axis_label_text_color: "#000", major_label_text_color: "#000", axis_line_color: "#000",
    major_tick_line_color: "#000", minor_tick_line_color: "#000", axis_label_text_font_size: "13px",
    major_label_text_font_size: "11px", axis_label_text_font: "helvetica", major_label_text_font: "helvetica" });
  const cells = model({ type: "Text", text_font: { value: "helvetica" }, text_font_size: { value: "11px" } });
  const legend = model({ label_text_color: "#000", items: [], label_text_font: "helvetica", title_text_font: "helvetica" });
  restyle({ all_models: new Set([title, axis, cells, legend]) }, "light", false);
  // node has no style sheet: the fallback family (in a browser, lab.css's --font)
  for (const [m, p] of [[title, "text_font"], [axis, "axis_label_text_font"], [axis, "major_label_text_font"],
    [legend, "label_text_font"], [legend, "title_text_font"]]) assert.equal(m[p], "sans-serif", p);
  assert.deepEqual(cells.text_font, { value: "sans-serif" });
});
