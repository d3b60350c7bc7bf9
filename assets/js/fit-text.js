// Readable figures (restyle.js calls these): heatmaps side by side on one scale share one y
// axis and one colour bar in the presenter view, axis labels fit their figure, and the numbers
// in a heatmap's cells are shown only where its cells fit them (in the presenter view they grow
// with the cells). Nothing runs on import.
import { allModels, isFigure, laidOut, viewOf, viewsIndexed } from "./bokeh-internals.js";
import { kids } from "./arrange.js";
import { contract } from "./config.js";
import { base, set, textWidth, widthGot } from "./figure-base.js";
import { player } from "./player.js";

// Heatmaps side by side on one colour scale (gates' states: one scale for every rule), in the
// presenter view: one y axis (the first's) and one colour bar (the last's) for the row, so their
// cells have the room for numbers read from afar (four in a row had cells 44 px wide).
const barOf = (fig) => (fig.right || []).find((r) => r && "color_mapper" in r && "major_label_text_color" in r);
const isHeatmap = (m) => isFigure(m) && (m.renderers || []).some((r) => r.glyph && r.glyph.type === "Image");
export function shareScales(doc, present) {
  for (const row of allModels(doc)) {
    if (!("children" in row)) continue;
    const maps = kids(row).filter((k) => isHeatmap(k) && k.visible && barOf(k));
    const same = (k) => { const a = barOf(k).color_mapper, b = barOf(maps[0]).color_mapper, y = (m) => m.y_range.start - m.y_range.end;
      return a.low === b.low && a.high === b.high && y(k) === y(maps[0]) && k.yaxis?.[0]?.axis_label === maps[0].yaxis?.[0]?.axis_label; };
    const shared = present && maps.length >= 3 && maps.every(same);
    maps.forEach((k, i) => {
      const bar = barOf(k), axis = (k.left || [])[0];
      const hideBar = shared && i < maps.length - 1, hideAxis = shared && i > 0;
      base(bar, "visible"), base(k, "min_border_right");
      set(bar, "visible", hideBar ? false : base(bar, "visible"));
      if (typeof base(k, "min_border_right") === "number") set(k, "min_border_right", hideBar ? 8 : base(k, "min_border_right"));
      if (axis) set(axis, "visible", hideAxis ? false : base(axis, "visible"));
    });
  }
}

const baseSize = (m, prop) => { const b = base(m, prop); return parseFloat(b && typeof b === "object" ? b.value : b) || 11; };
// Every figure's axis labels no longer than the figure (a long y label on a short figure was
// cut at both ends: "query: token t of the chunk"), and the numbers in a heatmap's cells only
// where they fit (cellNumberPx): in the presenter view as large as its cells allow, up to 30 px
// (at 11 px they could not be read from the back of a room); on the page at their own size, or
// a little smaller. The cells' size is the one the figure gets now, less what its axes and
// colour bar took in the last layout.
const CELL_HEIGHT = 0.55, CELL_WIDTH = 0.86, CELL_MAX = 30;
export const CELL_MIN = 9;  // px: below it a cell's number is not read, and hover gives it

// The size of the numbers in cells of cellW × cellH px whose longest number is textW px wide at
// 1 px: in the presenter view as large as the cells allow (up to CELL_MAX), else at most basePx;
// 0 (no numbers) when that is under CELL_MIN. At d = 16 running-sum's output had 17 px cells
// for numbers 30 px wide at 11 px: they ran together into one band ("1.1.850.2075…").
export function cellNumberPx(cellW, cellH, textW, basePx, present) {
  const fits = Math.min(CELL_HEIGHT * cellH, textW > 0 ? CELL_WIDTH * cellW / textW : Infinity);
  const px = Math.min(present ? CELL_MAX : basePx, fits);
  return px >= CELL_MIN ? px : 0;
}

// The text glyphs this module hid (a heatmap Python shows no numbers in is hidden by Python,
// with no numbers sent: shown again here it draws nothing).
const hiddenHere = new WeakSet();
function showNumbers(renderer, on) {
  if (!on && renderer.visible) { renderer.visible = false; hiddenHere.add(renderer); }
  else if (on && hiddenHere.has(renderer)) { hiddenHere.delete(renderer); if (!renderer.visible) renderer.visible = true; }
}

// skip: figures the view leaves out (restyle.js), fitted when shown again.
export const fitTexts = (doc, f, present, skip = null) => viewsIndexed(() => fitTextsNow(doc, f, present, skip));
function fitTextsNow(doc, f, present, skip) {
  const cells = [];  // [glyph, px, on screen] of every heatmap's numbers
  for (const fig of allModels(doc)) {
    if (!isFigure(fig) || (skip && skip.has(fig)) || typeof base(fig, "width") !== "number" || typeof base(fig, "height") !== "number") continue;
    const was = laidOut(fig);
    // (as restyle sized it: in the presenter view scaled, and never under its least plot area)
    const own = (prop, by) => (typeof fig[prop] === "number" ? fig[prop] : base(fig, prop) * by);
    const w = widthGot(fig, own("width", f.size * f.wide(fig)), was), h = own("height", f.size * f.tall);
    // (before its first layout: what its title, axes, colour bar and legend take is guessed)
    const aside = was ? [was.width - was.frameWidth, was.height - was.frameHeight] : [90, 70];
    // an axis label is centred on the plot area, not the figure: its room is the area's (the
    // error plot's y label, beside a legend below, was cut: "mean |ŵⱼ − wⱼ| (key")
    const frameH = Math.max(1, h - aside[1]), frameW = Math.max(1, w - aside[0]);
    for (const [side, room] of [["left", frameH], ["right", frameH], ["below", frameW], ["above", frameW]]) {
      for (const axis of fig[side] || []) {
        if (!axis || !("axis_label_text_font_size" in axis) || !axis.axis_label) continue;
        const want = Math.round(13 * f.font), fits = Math.floor(0.94 * room / textWidth(axis.axis_label, 1));
        set(axis, "axis_label_text_font_size", `${Math.max(9, Math.min(want, fits))}px`);
      }
    }
    const glyphs = (fig.renderers || []).map((r) => r.glyph).filter(Boolean);
    fitCellTexts(fig, frameW, f, present);
    if (!glyphs.some((g) => g.type === "Image")) continue;
    const cols = Math.abs(fig.x_range.end - fig.x_range.start), rows = Math.abs(fig.y_range.end - fig.y_range.start);
    for (const r of fig.renderers || []) {
      const g = r.glyph;
      if (!g || g.type !== "Text" || !("text_font_size" in g)) continue;
      let px = baseSize(g, "text_font_size") * Math.max(1, f.size);
      if (cols > 0 && rows > 0) {
        px = cellNumberPx(frameW / cols, frameH / rows, textWidth(longestLabel(r.data_source), 1), px, present);
      }
      showNumbers(r, px > 0);
      // (on screen: not in a part the view leaves out; read from the page, a forced layout
      // in the middle of a restyle, only where restyle did not say)
      if (px > 0) cells.push([g, px, skip ? fig.visible : shown(fig)]);
    }
  }
  // in the presenter view one size for the numbers of every heatmap on screen (gates' four
  // states had two sizes: the first and last lose cell room to the shared axis and colour
  // bar): the smallest fits all
  const onScreen = cells.filter(([, , on]) => on);
  const size = present && onScreen.length ? Math.min(...onScreen.map(([, px]) => px)) : null;
  for (const [g, px, on] of cells) {
    const value = `${Math.floor(on && size !== null ? size : px)}px`;
    if (!g.text_font_size || g.text_font_size.value !== value) g.text_font_size = Object.assign({}, base(g, "text_font_size"), { value });
  }
}
// Labels along x (contract().cell_text: chunkwise's tokens and chunk names), each fitted into
// the room between it and its neighbours: at their own size scaled (the presenter's type in the
// presenter view), smaller where that room is narrower, none below CELL_MIN (the axis below
// numbers them too): "10 11 12" had run together on a phone, "chunk 16" into "chunk 15" at T = 64.
const column = (data, key) => (key && (data instanceof Map ? data.get(key) : data[key])) || [];
function fitCellTexts(fig, frameW, f, present) {
  for (const r of fig.renderers || []) {
    const g = r.glyph;
    if (!r.name || !g || g.type !== "Text" || r.name !== contract().cell_text) continue;
    const perUnit = frameW / Math.abs(fig.x_range.end - fig.x_range.start);
    if (!(perUnit > 0)) continue;
    const xs = [...column(r.data_source.data, g.x && g.x.field)], texts = column(r.data_source.data, g.text && g.text.field);
    const order = xs.map((x, i) => i).sort((i, j) => xs[i] - xs[j]);
    let px = baseSize(g, "text_font_size") * (present ? Math.max(f.size, f.font) : Math.max(1, f.size));
    order.forEach((i, k) => {
      const gap = Math.min(k > 0 ? xs[i] - xs[order[k - 1]] : Infinity, k < order.length - 1 ? xs[order[k + 1]] - xs[i] : Infinity);
      if (texts[i]) px = cellNumberPx(gap * perUnit, Infinity, textWidth(texts[i], 1), px, false) || 0;
    });
    showNumbers(r, px > 0);
    const value = `${Math.floor(px)}px`;
    if (px > 0 && g.text_font_size.value !== value) g.text_font_size = Object.assign({}, base(g, "text_font_size"), { value });
  }
}
// A figure on screen now (a scene leaves the others out: a hidden layout's figures keep their
// own visible flag).
function shown(fig) {
  const v = viewOf(fig), r = v && v.el && v.el.isConnected ? v.el.getBoundingClientRect() : null;
  return fig.visible && !!r && r.width > 0;
}
// The longest text a text glyph's source shows at any t (its frames), so the numbers keep one
// size while stepping.
function longestLabel(source) {
  let longest = "0.00";
  const consider = (v) => { if (typeof v === "string" && v.length > longest.length) longest = v; };
  const data = player.frames && player.frames.data;
  for (const [model, attrs] of player.groups || []) {
    if (model !== source || !data) continue;
    for (const [, column] of attrs) for (const frame of data[column] || []) if (Array.isArray(frame)) frame.forEach(consider);
  }
  return longest;
}
