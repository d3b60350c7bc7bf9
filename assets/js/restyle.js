// The figures' theme and presenter styling, which must work before Python has started: every
// figure's colours for the theme, its size for the presenter view (scaled by the fit), the
// site's UI font in every text, and the parts of the page this view shows (arrange.js).
// Called by the shell's theme module (theme.js) with the view's options; works in node.
import { allModels, deferLayout, isFigure, laidOut } from "./bokeh-internals.js";
import { arrange, kids, layoutWanted } from "./arrange.js";
import { contract, hasRole } from "./config.js";
import { player } from "./player.js";

export const THEMES = {
  light: { background: "#ffffff", text: "#1f2328", grid: "#e6e8eb", axis: "#57606a", muted: "#6e7781" },
  dark: { background: "#161b22", text: "#e6edf3", grid: "#30363d", axis: "#b1bac4", muted: "#9da7b3" },
};
const NEUTRAL = new Set(["#57606a", "#6e7781", "#8c959f", "#444444", "#1f2328", "grey", "gray", "black"]);
const PRESENT = { size: 1.45, font: 1.6, line: 1.8 };
const bases = new WeakMap();  // model -> {prop: value as the page built it}

function base(model, prop) {
  let b = bases.get(model);
  if (!b) bases.set(model, (b = {}));
  if (!(prop in b)) b[prop] = model[prop];
  return b[prop];
}
const WHOLE = new Set(["width", "height", "min_width", "min_height", "glyph_width", "glyph_height", "spacing", "label_height"]);
function scaled(model, prop, factor) {
  if (!(prop in model)) return;
  const b = base(model, prop);
  if (typeof b === "number") set(model, prop, WHOLE.has(prop) ? Math.round(b * factor) : Math.round(b * factor * 100) / 100);
  else if (typeof b === "string" && b.endsWith("px")) set(model, prop, `${Math.round(parseFloat(b) * factor)}px`);
  else if (b && typeof b === "object" && typeof b.value === "string" && b.value.endsWith("px")) {  // a glyph's value spec
    const value = `${Math.round(parseFloat(b.value) * factor)}px`;
    if (!model[prop] || model[prop].value !== value) model[prop] = Object.assign({}, b, { value });
  }
}
function set(model, prop, value) {
  if (model[prop] !== value) model[prop] = value;
}
function ink(model, prop, theme, colour) {
  const b = base(model, prop);
  if (typeof b === "string" && NEUTRAL.has(b.toLowerCase())) set(model, prop, theme === "light" ? b : colour);
}

// Restyle every figure of a BokehJS document for a theme and the presenter view, and show
// the parts of the page this view wants (arrange). ``opts``: scale (figures' size factor in
// the presenter view, fitted to the screen by the shell), wide (figure -> a further factor
// on its width alone, so a row with room at its side fills it too), view (a page's named
// view), tall (a factor on every figure's height alone, for a screen taller than the
// figures' rows), fold (the settings folded away), print.
export function restyle(doc, theme, present, opts) {
  opts = opts || {};
  const c = THEMES[theme] || THEMES.light;
  const f = present ? Object.assign({}, PRESENT, opts.scale ? { size: opts.scale } : {}) : { size: 1, font: 1, line: 1 };
  f.wide = (m) => (present && opts.wide && opts.wide(m)) || 1;
  f.tall = present && opts.tall > 0 ? opts.tall : 1;
  const wasApplying = player.applying;
  player.applying = true;  // the view's own changes: not sent to Python
  const layoutOnce = deferLayout(doc);
  try {
    arrange(doc, layoutWanted(doc, present, opts));
    paint(doc, theme, c, f);
    shareScales(doc, present);
    fitTexts(doc, f, present);
  } finally {
    player.applying = wasApplying;
    layoutOnce();
  }
}

// Every text of every figure in the site's UI font (the --font of lab.css, which ships it),
// so a figure measures the same on every machine: titles, axes, legends, colour bars, labels
// and the numbers in heatmap cells (a glyph's text_font is a value spec).
const FONT_PROPS = ["text_font", "axis_label_text_font", "major_label_text_font", "label_text_font", "title_text_font"];
let font = null;
function fontFamily() {
  if (font === null) {
    const css = typeof document !== "undefined" && typeof getComputedStyle === "function"
      ? getComputedStyle(document.documentElement).getPropertyValue("--font") : "";
    font = css.trim() || "sans-serif";
  }
  return font;
}
function setFont(m) {
  for (const p of FONT_PROPS) {
    if (!(p in m)) continue;
    const v = m[p];
    if (typeof v === "string") set(m, p, fontFamily());
    else if (v && typeof v === "object" && "value" in v && v.value !== fontFamily()) m[p] = { value: fontFamily() };
  }
}

// A signed heatmap in the theme's colours (ui/theme.py HEATMAP, in the contract): its scale
// (zero the theme's neutral, not white on a dark page), the numbers' inks and the lines
// between cells. The page is built in the light ones; a model is matched by them.
const HEATMAP_GLYPHS = { Text: [["text_color", "ink"], ["text_color", "ink_strong"]],
  Segment: [["line_color", "border"]], Rect: [["line_color", "border"]], Quad: [["line_color", "border"]] };
function swapSpec(m, prop, from, to) {  // a glyph's value spec built as ``from``: ``to`` now
  const b = base(m, prop);
  if (!b || typeof b !== "object" || String(b.value).toLowerCase() !== from) return false;
  if (!m[prop] || m[prop].value !== to) m[prop] = Object.assign({}, b, { value: to });
  return true;
}
function heatmapColours(m, theme) {
  const all = contract().heatmap;
  if (!all || !all.light) return false;
  const light = all.light, want = all[theme] || light;
  if (m.type === "LinearColorMapper") {
    const b = base(m, "palette");
    if (Array.isArray(b) && b.join() === light.palette.join() && m.palette.join() !== want.palette.join()) m.palette = [...want.palette];
    if (base(m, "nan_color") === light.masked) set(m, "nan_color", want.masked);  // a masked cell
    return true;
  }
  return (HEATMAP_GLYPHS[m.type] || []).some(([prop, key]) => swapSpec(m, prop, light[key], want[key]));
}

function paint(doc, theme, c, f) {
  for (const m of allModels(doc)) {
    setFont(m);
    // other text drawn in a figure in a neutral grey, and outlines: light on a dark page
    if (!heatmapColours(m, theme) && m.type === "Text") {
      const b = base(m, "text_color");
      if (b && typeof b === "object" && NEUTRAL.has(String(b.value).toLowerCase())) swapSpec(m, "text_color", String(b.value).toLowerCase(), theme === "light" ? b.value : c.muted);
    }
    if (m.type === "BoxAnnotation") ink(m, "line_color", theme, c.text);
    if ("background_fill_color" in m && "renderers" in m && "toolbar" in m) {  // a figure
      for (const p of ["width", "min_width", "max_width"]) if (typeof base(m, p) === "number") scaled(m, p, f.size * f.wide(m));
      for (const p of ["height", "min_height", "max_height"]) if (typeof base(m, p) === "number") scaled(m, p, f.size * f.tall);
      // its title as large as the presenter's type, but never wider than the figure (a long
      // title on a narrow figure was cut off: "Masked scores of this chu")
      const title = m.title && typeof m.title === "object" && "text_font_size" in m.title ? m.title : null;
      const was = laidOut(m), planned = typeof base(m, "width") === "number" ? base(m, "width") * f.size * f.wide(m) : null;
      const w = planned && was && was.width < planned - 2 ? was.width : planned;  // a fluid figure may get less
      if (title && title.text) {
        let px = 14 * Math.min(f.font, 0.45 + f.size);
        // (it starts where the frame does, after the y axis)
        if (w && f.size !== 1) px = Math.max(12, Math.min(px, (w - 8 - (was ? was.frameLeft : 40)) / textWidth(title.text, 1, true)));
        set(title, "text_font_size", `${Math.round(px)}px`);
      }
      set(m, "background_fill_color", c.background);
      set(m, "border_fill_color", c.background);
      set(m, "outline_line_color", c.grid);
    } else if ("axis_label_text_color" in m) {  // an axis
      set(m, "axis_label_text_color", c.text);
      set(m, "major_label_text_color", c.axis);
      for (const p of ["axis_line_color", "major_tick_line_color", "minor_tick_line_color"]) set(m, p, c.axis);
      set(m, "axis_label_text_font_size", `${Math.round(13 * f.font)}px`);
      set(m, "major_label_text_font_size", `${Math.round(11 * f.font)}px`);
      set(m, "axis_label_text_font_style", "normal");
    } else if ("grid_line_color" in m && "dimension" in m) {
      set(m, "grid_line_color", c.grid);
    } else if ("label_text_color" in m && "items" in m) {  // a legend
      set(m, "background_fill_color", c.background);
      set(m, "background_fill_alpha", 0.85);
      set(m, "label_text_color", c.text);
      set(m, "border_line_color", c.grid);
      set(m, "inactive_fill_color", c.background);
      scaled(m, "label_text_font_size", f.font);
      for (const p of ["glyph_width", "glyph_height", "spacing", "label_height"]) scaled(m, p, f.size);
    } else if ("color_mapper" in m && "major_label_text_color" in m) {  // a colour bar
      set(m, "background_fill_color", c.background);
      set(m, "major_label_text_color", c.axis);
      set(m, "major_tick_line_color", c.axis);
      set(m, "major_label_text_font_size", `${Math.round(11 * f.font)}px`);
      scaled(m, "width", f.size);
    } else if ("text_color" in m && "x_units" in m && "text" in m) {  // a label
      scaled(m, "text_font_size", f.font);
      if (m.background_fill_color == null) ink(m, "text_color", theme, c.muted);
      else { set(m, "text_color", c.text); set(m, "background_fill_color", c.background); }
    } else if ("dimension" in m && "location" in m && "line_color" in m) {  // a span
      scaled(m, "line_width", f.line);
      ink(m, "line_color", theme, c.muted);
    } else if ("fill_color" in m && "left" in m && "right" in m && m.name === contract().veil) {
      set(m, "fill_color", c.background);  // a veil over what is still to come
    } else if (m.type === "Text" && "text_font_size" in m) {  // numbers in cells (fitTexts: a heatmap's)
      scaled(m, "text_font_size", Math.max(1, f.size));
    } else if ("children" in m && typeof base(m, "width") === "number" && !hasRole(m, "controls")) {
      // a column of a figure and its readout: as wide as its figure (else it cut the figure off)
      const wide = Math.max(1, ...kids(m).filter(isFigure).map((k) => f.wide(k)));
      scaled(m, "width", f.size * wide);
    } else if (m.type === "Line" || m.type === "MultiLine") {
      scaled(m, "line_width", f.line);
    } else if (m.type === "Title") {
      set(m, "text_color", c.text);  // its size: with its figure's, above
    } else if (m.type === "Div" && m.styles && !(m.styles instanceof Map) && typeof base(m, "styles") === "object") {
      // a readout with its own type size (a caption): larger in the presenter view
      const b = base(m, "styles"), px = b && parseFloat(b["font-size"]);
      if (px && String(b["font-size"]).endsWith("px")) {
        const want = `${Math.round(px * (f.font > 1 ? f.font * 0.8 : 1))}px`;
        if (m.styles["font-size"] !== want) m.styles = Object.assign({}, m.styles, { "font-size": want });
      }
    }
  }
}

// Heatmaps side by side on one colour scale (gates' states: one scale for every rule), in the
// presenter view: one y axis (the first's) and one colour bar (the last's) for the row, so their
// cells have the room for numbers read from afar (four in a row had cells 44 px wide).
const barOf = (fig) => (fig.right || []).find((r) => r && "color_mapper" in r && "major_label_text_color" in r);
const isHeatmap = (m) => isFigure(m) && (m.renderers || []).some((r) => r.glyph && r.glyph.type === "Image");
function shareScales(doc, present) {
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

// The width of a text in the site's font at 1 px (a canvas measures it; in node, an estimate).
let ruler = null;
export function textWidth(text, px = 1, bold = false) {
  if (ruler === null) {
    try { ruler = typeof document !== "undefined" ? document.createElement("canvas").getContext("2d") : false; } catch (e) { ruler = false; }
  }
  if (!ruler) return 0.62 * px * String(text).length;
  ruler.font = `${bold ? "bold " : ""}100px ${fontFamily()}`;
  return (ruler.measureText(String(text)).width / 100) * px;
}
const baseSize = (m, prop) => { const b = base(m, prop); return parseFloat(b && typeof b === "object" ? b.value : b) || 11; };
// Every figure's axis labels no longer than the figure (a long y label on a short figure was
// cut at both ends: "query: token t of the chunk"), and, in the presenter view, the numbers in
// a heatmap's cells as large as its cells allow, up to 30 px: they scale with the figure (at
// 11 px they could not be read from the back of a room). The cells' size is the one the
// figure gets now, less what its axes and colour bar took in the last layout.
const CELL_HEIGHT = 0.55, CELL_WIDTH = 0.86, CELL_MAX = 30;
function fitTexts(doc, f, present) {
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
      const value = `${Math.max(8, Math.floor(px))}px`;
      if (!g.text_font_size || g.text_font_size.value !== value) g.text_font_size = Object.assign({}, base(g, "text_font_size"), { value });
    }
  }
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
