// What the presenter fit measures on screen: the page's shown parts (figures and texts, not
// their layouts) and their boxes, how far they reach, when BokehJS has stopped moving them,
// the room at the side of each figure's row and the height of the figures' rows.
import { allModels, isFigure, viewOf } from "./bokeh-internals.js";

// Figures may grow wider than their own proportions by at most this factor (a heatmap's cells
// a little wider than tall read as well; much more and the figure looks stretched).
export const MAX_WIDE = 1.6;

export function shownParts(doc) {
  const parts = [];
  if (!doc) return parts;
  for (const m of allModels(doc)) {
    if (!m.visible || !("sizing_mode" in m) || "children" in m) continue;
    const v = viewOf(m);
    const r = v && v.el && v.el.isConnected ? v.el.getBoundingClientRect() : null;
    if (r && r.width > 0) parts.push({ m, r, figure: isFigure(m) });
  }
  return parts;
}
// [bottom, right] of the shown parts alone: how far the figures and texts reach, even where
// that is short of the screen (the search's guess: fit-search.js).
export function partsExtent(doc) {
  let bottom = 0, right = 0;
  for (const { r } of shownParts(doc)) { bottom = Math.max(bottom, r.bottom + scrollY); right = Math.max(right, r.right + scrollX); }
  return [Math.ceil(bottom), Math.ceil(right)];
}
// [bottom, right] of every shown part, and the document's own scroll size (in a room narrower
// or shorter than the screen, the lesson text beside or below it: only where it scrolls).
export function extent(doc, room = { width: innerWidth, height: innerHeight }) {
  const el = document.documentElement, [bottom, right] = partsExtent(doc);
  return [Math.max(bottom, room.height < innerHeight && el.scrollHeight <= innerHeight ? 0 : el.scrollHeight),
    Math.max(right, room.width < innerWidth && el.scrollWidth <= innerWidth ? 0 : el.scrollWidth)];
}
// BokehJS lays out asynchronously: the extent once it stops moving (two frames the same).
export async function settled(doc, room) {
  let last = "", same = 0;
  for (let i = 0; i < 24 && same < 2; i++) {
    await new Promise((r) => requestAnimationFrame(r));
    const now = extent(doc, room).join();
    same = now === last ? same + 1 : 0;
    last = now;
  }
  return extent(doc, room);
}
export const overflows = ([bottom, right], box = { width: innerWidth, height: innerHeight }) =>
  bottom > box.height || right > box.width;  // whole pixels (fitMeasure rounds up): a scrolled pixel scrolls

// A figure's name that is the same in the page built ahead of time and the live one (their
// models differ when Python could not adopt the document on screen): title and rank.
const figureRank = new WeakMap();
export function figureKey(m) {
  if (!figureRank.has(m)) {
    const seen = new Map();
    for (const x of m.document ? allModels(m.document) : [m]) {
      if (!isFigure(x)) continue;
      const title = (x.title && x.title.text) || "";
      seen.set(title, (seen.get(title) || 0) + 1);
      figureRank.set(x, `${title}#${seen.get(title)}`);
    }
  }
  return figureRank.get(m);
}

// The room at the side of each figure's row, for its figures: every shown part (figure or text)
// level with the figure is in its row.
// parts: [{m, r: {top, bottom, left, right, height}, figure}]; returns figureKey -> factor.
export function widths(parts, screenWidth = innerWidth) {
  const shown = parts.filter((p) => p.r.height > 0), wide = new Map();
  for (const { m, r, figure } of shown) {
    if (!figure) continue;
    const row = shown.filter((p) => p.r.top < r.bottom - 4 && p.r.bottom > r.top + 4);
    const left = Math.min(...row.map((p) => p.r.left)), right = Math.max(...row.map((p) => p.r.right));
    // the room at the row's right goes to its figures (a text beside them keeps its width: a
    // legend; a text that stretches to the screen's edge leaves none)
    const figures = row.filter((p) => p.figure).reduce((sum, p) => sum + p.r.width, 0);
    const room = (0.98 * (screenWidth - 18 - left) - (right - left - figures)) / Math.max(1, figures);
    wide.set(figureKey(m), Math.max(1, Math.min(MAX_WIDE, Math.floor(room * 100) / 100)));
  }
  return wide;
}
// The height of the figures' rows added up (the figures level with each other are one row),
// and where the lowest shown part ends.
export function figureRows(parts) {
  const rects = [];
  let bottom = 0;
  for (const { r, figure } of parts) {
    if (r.height <= 0) continue;
    bottom = Math.max(bottom, r.bottom);
    if (figure) rects.push(r);
  }
  rects.sort((a, b) => a.top - b.top);
  let total = 0, rowBottom = -Infinity;
  for (const r of rects) {
    if (r.top >= rowBottom - 4) { total += r.height; rowBottom = r.bottom; }
    else if (r.bottom > rowBottom) { total += r.bottom - rowBottom; rowBottom = r.bottom; }
  }
  return { rows: total, bottom };
}
