// The player: steps through the frames of a page's run in the browser, with no Python.
//
// A page's Bokeh document holds a ColumnDataSource of frames: one column per thing that
// changes with t (t_max + 1 values each), and in its tags the bindings [model, attribute,
// column] saying where frame t of each column goes (the names: ui/contract.py's FRAMES, read
// through config.js's frameBindings()). Step, Back, Play, Reset, the timeline, the keys and the
// link's t all end in show(t), which puts frame t into every bound model; BokehJS repaints.
// Python (ui/page.py) sends new frames when a setting changes and calls refresh().
// Its theme and presenter styling: restyle.js; what reaches Python: guard.js.
import { setMarkup, viewOf, viewsIndexed } from "./bokeh-internals.js";
import { frameBindings } from "./config.js";
import { duration, ease, plan } from "./ease.js";
import { guard as guardDoc } from "./guard.js";

// ---- frames -----------------------------------------------------------------------------
// The bindings grouped by model: [[model, [[attr, column], ...]], ...].
export function group(bindings) {
  const byModel = new Map();
  for (const [model, attr, column] of bindings) {
    if (!byModel.has(model)) byModel.set(model, []);
    byModel.get(model).push([attr, column]);
  }
  return [...byModel.entries()];
}

// Put frame t of every column into its model: one assignment per model, so BokehJS sees
// one change (and a ColumnDataSource keeps its columns the same length throughout).
// An alt attribute is a figure's text alternative: set on its element (role img), not on the model.
// A Div's text goes straight into its view's element (markup: bokeh-internals' setMarkup):
// BokehJS re-renders a Div and lays out the whole page on every change of its text (20-60 ms
// a readout, measured); the readouts keep their size, so the page needs no new layout.
export function apply(groups, columns, t, describe, markup) {
  const { alt, data_prefix: prefix, text } = frameBindings();
  for (const [model, attrs] of groups) {
    const props = {};
    let data = null;
    for (const [attr, column] of attrs) {
      const value = columns[column][t];
      if (attr === alt) { if (describe) describe(model, value); }
      else if (attr.startsWith(prefix)) (data = data || Object.assign({}, model.data))[attr.slice(prefix.length)] = value;
      else if (attr === text && markup && markup(model, value)) continue;
      else props[attr] = value;
    }
    if (data) model.data = data;
    if (Object.keys(props).length) model.setv ? model.setv(props) : Object.assign(model, props);
  }
}

export function clamp(t, tMax) {
  const n = Math.round(Number(t));
  return Number.isFinite(n) ? Math.max(0, Math.min(n, tMax)) : 0;
}

// A figure's text alternative on its element (once the document is on screen).
export function describe(model, text) {
  const view = viewOf(model);
  if (view && view.el && view.el.getAttribute("aria-label") !== String(text)) {  // unchanged: untouched
    view.el.setAttribute("role", "img");
    view.el.setAttribute("aria-label", String(text));
  }
}

const env = () => (typeof window !== "undefined" ? window : globalThis);
const reduced = () => { const g = env(); return !!(g.matchMedia && g.matchMedia("(prefers-reduced-motion: reduce)").matches); };

// ---- the player -------------------------------------------------------------------------
// One per page. applying: the player's (or the view's) own changes are being made; the guard
// keeps them from Python.
export const player = {
  t: 0, tMax: 0, playing: false, speed: 8, groups: [], stops: [], frames: null, doc: null,
  bound: new Set(), listeners: [], applying: false, easing: null, phases: [],

  // Find the run in a rendered document; show frame t (kept where it is, within range). Those
  // who listen for new frames (onRefresh: the texts fitted to the layout, the labels) hear of
  // these first ones when the caller says (notifyRefresh): first-paint.js, once the plots are on
  // screen (heard at once, their refit had cost the first plot 20-30 ms, and changed nothing
  // there: restyle fits the texts before the first render).
  attach(doc) {
    this.doc = doc;
    this.frames = doc.get_model_by_name(frameBindings().source);
    this.refresh({ quiet: true });
  },
  // A new run is about to arrive: a filter's indices point into data it may shorten, so
  // they are emptied first (BokehJS refilters at once; an index past its row broke the
  // page); refresh() puts frame t's back.
  prepare() {
    this.settle();
    this.applying = true;
    try {
      for (const [model, attrs] of this.groups) {
        if (attrs.some(([a]) => a === frameBindings().indices)) model.indices = [];
      }
    } finally { this.applying = false; }
  },
  // The frames changed (a new setting): read them again and show the same t, if it exists.
  refresh({ quiet = false } = {}) {
    const names = frameBindings(), info = (this.frames.tags && this.frames.tags[0]) || {};
    this.groups = group(info[names.bindings] || []);
    this.stops = info[names.stops] || [];
    this.phases = info[names.phases] || [];
    this.bound = new Set(this.groups.map(([m]) => m));
    this.tMax = Math.max(0, (this.frames.data[names.t] || [0]).length - 1);
    this.show(this.t);
    if (!quiet) this.notifyRefresh();
  },
  notifyRefresh() { for (const fn of this.refreshed || []) fn(); },
  show(t) {
    this.halt();
    this.t = clamp(t, this.tMax);
    if (this.frames) {
      this.applying = true;
      // Text alternatives wait while playing (setting long aria-labels on every frame halved
      // the frame rate, measured; nobody reads them at 60 a second): set when play stops.
      try { apply(this.groups, this.frames.data, this.t, this.playing ? null : describe, setMarkup); } finally { this.applying = false; }
    }
    this.changed();
  },
  changed() { for (const fn of this.listeners) fn(this.t, this.tMax); },
  step() {
    if (this.t < this.tMax) this.advance();
    else this.pause();
  },
  // One step forward, eased (ease.js): t is t + 1 at once (the transport, the link, the
  // announcement); the figures move there over the easing and end on frame t + 1 exactly.
  // Every jump (Back, Reset, the timeline, a stop, new frames) ends an easing where it is.
  advance() {
    this.settle();
    const from = this.t, to = from + 1, g = env(), names = frameBindings();
    const motion = { reduce: reduced(), playing: this.playing, speed: this.speed, frames: typeof g.requestAnimationFrame === "function" };
    // (no easing at all: no plan either, so a step with animation off costs what it did)
    const planned = this.frames && duration(1, motion) ? plan(this.groups, this.frames.data, from, to,
      { phases: this.phases, sep: names.phase_sep, discrete: new Set([names.alt, names.indices, names.text]) }) : null;
    const ms = planned ? duration(planned.segments, motion) : 0;
    if (!ms || !planned.moves.length) { this.show(to); return; }
    this.t = to;
    const put = (groups, columns, i) => {
      this.applying = true;
      try { apply(groups, columns, i, null, setMarkup); } finally { this.applying = false; }
    };
    this.easing = ease(planned, ms, { put, phases: this.phases, now: () => g.performance.now(),
      frame: (fn) => g.requestAnimationFrame(fn), done: () => { this.easing = null; this.show(to); } });
    this.changed();
  },
  // An easing in progress ends on its frame now (a new step starts from there).
  settle() { if (this.easing) this.easing.finish(); },
  // ... or is dropped where it is (a jump puts its own frame in).
  halt() { if (this.easing) { const e = this.easing; this.easing = null; e.stop(); } },
  // The phase of the step on screen ("read back", …), "" at rest or in a step not taken apart.
  phase() { return this.easing ? this.easing.phase() : ""; },
  back() { this.pause(); this.show(this.t - 1); },
  reset() { this.pause(); this.show(0); },
  seek(t) { this.show(t); },
  // The next / previous named stop (t = 0, t = d, …) after or before t.
  jump(direction) {
    const ts = [...new Set([0, ...this.stops.map((s) => s[1]), this.tMax])].sort((a, b) => a - b);
    const next = direction > 0 ? ts.find((s) => s > this.t) : ts.reverse().find((s) => s < this.t);
    if (next !== undefined) { this.pause(); this.show(next); }
  },
  toggle() { this.playing ? this.pause() : this.play(); },
  play() {
    if (this.t >= this.tMax) this.show(0);
    this.playing = true;
    let last = -Infinity;
    const g = env();
    const reduce = reduced();
    const tick = (now) => {
      if (!this.playing) return;
      const rate = reduce ? Math.min(this.speed, 2) : this.speed;  // calm motion when asked
      if (now - last >= 1000 / rate - 4) {  // within 4 ms of due: this frame
        last = now;
        this.step();
      }
      if (this.playing) g.requestAnimationFrame(tick);
    };
    g.requestAnimationFrame(tick);
    this.changed();
  },
  pause() {
    if (!this.playing) return;
    this.playing = false;
    this.describe();
    this.changed();
  },
  // Give every figure frame t's text alternative (it goes on the figure's element, so only
  // once the document is on screen).
  describe() {
    const name = frameBindings().alt;
    const alt = this.groups.map(([m, attrs]) => [m, attrs.filter(([a]) => a === name)]).filter(([, a]) => a.length);
    if (this.frames) viewsIndexed(() => apply(alt, this.frames.data, this.t, describe));
  },
  onChange(fn) { this.listeners.push(fn); },
  // Called after every refresh (new frames: new settings, widgets may have re-rendered).
  onRefresh(fn) { (this.refreshed = this.refreshed || []).push(fn); },
  ids(doc) { return [...doc.all_models].map((m) => m.id); },
  guard(jsdoc) { guardDoc(this, jsdoc); },  // Python calls it before linking the document

  // The live page (rendered out of sight) replaces the page built ahead of time in one
  // frame, at the same t, theme and view.
  takeover(jsdoc, restyleNow) {
    this.pause();
    const t = this.t;
    this.attach(jsdoc);
    this.show(t);
    if (restyleNow) restyleNow(jsdoc);
  },
};
