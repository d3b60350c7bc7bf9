// The presenter view's readable figures (restyle.js calls these): heatmaps side by side on one
// scale share one y axis and one colour bar, axis labels fit their figure, and the numbers in a
// heatmap's cells grow with its cells. Nothing runs on import.
import { allModels, isFigure, laidOut, viewOf, viewsIndexed } from "./bokeh-internals.js";
import { kids } from "./arrange.js";
import { base, set, textWidth } from "./figure-base.js";
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
// cut at both ends: "query: token t of the chunk"), and, in the presenter view, the numbers in
// a heatmap's cells as large as its cells allow, up to 30 px: they scale with the figure (at
// 11 px they could not be read from the back of a room). The cells' size is the one the
// figure gets now, less what its axes and colour bar took in the last layout.
const CELL_HEIGHT = 0.55, CELL_WIDTH = 0.86, CELL_MAX = 30;
export const fitTexts = (doc, f, present) => viewsIndexed(() => fitTextsNow(doc, f, present));
function fitTextsNow(doc, f, present) {
  const cells = [];  // [glyph, px] of every heatmap's numbers
  for (const fig of allModels(doc)) {
    if (!isFigure(fig) || typeof base(fig, "width") !== "number" || typeof base(fig, "height") !== "number") continue;
    const was = laidOut(fig);
    let w = base(fig, "width") * f.size * f.wide(fig), h = base(fig, "height") * f.size * f.tall;
    if (was && was.width < w - 2) w = was.width;  // a fluid figure, narrower than its own width
    for (const [side, room] of [["left", h], ["right", h], ["below", w], ["above", w]]) {
      for (const axis of fig[side] || []) {
        if (!axis || !("axis_label_text_font_size" in axis) || !axis.axis_label) continue;
        const want = Math.round(13 * f.font), fits = Math.floor(0.94 * room / textWidth(axis.axis_label, 1));
        set(axis, "axis_label_text_font_size", `${Math.max(9, Math.min(want, fits))}px`);
      }
    }
    if (!present) continue;
    const glyphs = (fig.renderers || []).map((r) => r.glyph).filter(Boolean);
    if (!glyphs.some((g) => g.type === "Image")) continue;
    const cols = Math.abs(fig.x_range.end - fig.x_range.start), rows = Math.abs(fig.y_range.end - fig.y_range.start);
    for (const r of fig.renderers || []) {
      const g = r.glyph;
      if (!g || g.type !== "Text" || !("text_font_size" in g)) continue;
      let px = baseSize(g, "text_font_size") * Math.max(1, f.size);
      if (was && cols > 0 && rows > 0) {
        const cellW = (w - (was.width - was.frameWidth)) / cols, cellH = (h - (was.height - was.frameHeight)) / rows;
        px = Math.min(CELL_MAX, CELL_HEIGHT * cellH, CELL_WIDTH * cellW / textWidth(longestLabel(r.data_source), 1));
      }
      cells.push([g, px, shown(fig)]);
    }
  }
  // one size for the numbers of every heatmap on screen (gates' four states had two sizes:
  // the first and last lose cell room to the shared axis and colour bar): the smallest fits all
  const onScreen = cells.filter(([, , on]) => on);
  const size = onScreen.length ? Math.min(...onScreen.map(([, px]) => px)) : null;
  for (const [g, px, on] of cells) {
    const value = `${Math.max(8, Math.floor(on && size !== null ? size : px))}px`;
    if (!g.text_font_size || g.text_font_size.value !== value) g.text_font_size = Object.assign({}, base(g, "text_font_size"), { value });
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
