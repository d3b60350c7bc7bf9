// The figures' theme and presenter styling, which must work before Python has started: every
// figure's colours for the theme, its size for the presenter view (scaled by the fit), the
// site's UI font in every text, and the parts of the page this view shows (arrange.js).
// Called by the shell's theme module (theme.js) with the view's options; works in node.
import { allModels, deferLayout, isFigure, laidOut, viewsIndexed } from "./bokeh-internals.js";
import { arrange, figuresLeft, kids, layoutWanted } from "./arrange.js";
import { contract, hasRole, onAPhone } from "./config.js";
import { base, fontFamily, scaled, set, textWidth, widthGot } from "./figure-base.js";
import { legendAside } from "./legends.js";
import { fitTexts, shareScales } from "./fit-text.js";
import { player } from "./player.js";

export const THEMES = {
  light: { background: "#ffffff", text: "#1f2328", grid: "#e6e8eb", axis: "#57606a", muted: "#6e7781" },
  dark: { background: "#161b22", text: "#e6edf3", grid: "#30363d", axis: "#b1bac4", muted: "#9da7b3" },
};
const NEUTRAL = new Set(["#57606a", "#6e7781", "#8c959f", "#444444", "#1f2328", "grey", "gray", "black"]);
// text: the presenter's widget and readout type over the page's (lab.css: 19 px over 13 px)
const PRESENT = { size: 1.45, font: 1.6, line: 1.8, text: 19 / 13 };
// a phone's presenter view is read at arm's length, not across a room: its figures' type less
// enlarged (at 1.6 hybrid's memory legend alone was wider than a 390 px screen beside its axis,
// and chunkwise's token ticks ran together)
const PHONE_FONT = 1.25;
export const MIN_FRAME = 120;  // px: the least plot area of a figure in the presenter view
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
function factors(present, opts) {
  const f = present ? Object.assign({}, PRESENT, opts.scale ? { size: opts.scale } : {}, onAPhone() ? { font: PHONE_FONT } : {})
    : { size: 1, font: 1, line: 1, text: 1 };
  f.wide = (m) => (present && opts.wide && opts.wide(m)) || 1;
  f.tall = present && opts.tall > 0 ? opts.tall : 1;
  f.present = !!present;
  f.room = present && opts.room > 0 ? opts.room : Infinity;  // px: the stage's width (the lesson text beside it)
  return f;
}
export function restyle(doc, theme, present, opts) {
  opts = opts || {};
  const c = THEMES[theme] || THEMES.light;
  const f = factors(present, opts);
  const wasApplying = player.applying;
  player.applying = true;  // the view's own changes: not sent to Python
  const layoutOnce = deferLayout(doc);
  try {
    viewsIndexed(() => {
      const skip = figuresLeft(arrange(doc, layoutWanted(doc, present, opts)));
      paint(doc, theme, c, f, skip);
      shareScales(doc, present);
      fitTexts(doc, f, present, skip);
    });
  } finally {
    player.applying = wasApplying;
    layoutOnce();
  }
}

// Every text of every figure in the site's UI font (the --font of lab.css, which ships it),
// so a figure measures the same on every machine: titles, axes, legends, colour bars, labels
// and the numbers in heatmap cells (a glyph's text_font is a value spec). A text built in
// "monospace" keeps it: its labels are padded to one width (hybrid's bar axis), so a step's new
// labels leave the axis as wide as it was; in the UI font it laid the page out again (95 ms).
const FONT_PROPS = ["text_font", "axis_label_text_font", "major_label_text_font", "label_text_font", "title_text_font"];
function setFont(m) {
  for (const p of FONT_PROPS) {
    if (!(p in m) || base(m, p) === "monospace") continue;
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

// The models inside the settings (their column keeps its width: so do they), and those in a
// column of a fixed width (a figure's: it grows with the figure, and they no more than it).
function heldParts(doc) {
  const settings = new Set(), columns = new Set(), add = (m) => { settings.add(m); kids(m).forEach(add); };
  for (const m of allModels(doc)) {
    if (hasRole(m, "controls")) add(m);
    else if ("children" in m && typeof base(m, "width") === "number") kids(m).forEach((k) => columns.add(k));
  }
  return { settings, columns };
}
// A readout or a picker beside the figures, of a fixed width (or at most one): as wide as its
// text in the presenter's type, which is larger (chunkwise's cost table was cut off at its
// 360 px; gates' "Take apart the update of" wrapped onto two lines).
const isTextPart = (m) => m.type === "Div" || ("options" in m && "value" in m && "title" in m);

function paint(doc, theme, c, f, skip) {
  const { settings, columns } = heldParts(doc);
  for (const m of allModels(doc)) {
    // (a figure's legend moved all the same: moved as a view shows it, BokehJS lays the figure
    // out before it has built the legend's view: "cannot find a view for Legend")
    if (skip.has(m)) { if (isFigure(m)) legendAside(m, f.present); continue; }
    setFont(m);
    if (isTextPart(m) && !settings.has(m)) {
      const by = columns.has(m) ? Math.min(f.text, f.size) : f.text;
      for (const p of ["width", "max_width"]) if (typeof base(m, p) === "number") set(m, p, Math.min(Math.round(base(m, p) * by), f.room));
    }
    // other text drawn in a figure in a neutral grey, and outlines: light on a dark page
    if (!heatmapColours(m, theme) && m.type === "Text") {
      const b = base(m, "text_color");
      if (b && typeof b === "object" && NEUTRAL.has(String(b.value).toLowerCase())) swapSpec(m, "text_color", String(b.value).toLowerCase(), theme === "light" ? b.value : c.muted);
    }
    if (m.type === "BoxAnnotation") ink(m, "line_color", theme, c.text);
    if ("background_fill_color" in m && "renderers" in m && "toolbar" in m) {  // a figure
      // (a fluid figure's least width is what a phone's screen holds, ui/views fluid(): on a
      // phone never scaled up, or the figure passes the screen's edge: chunkwise's by 8 px)
      const phone = f.present && onAPhone();
      for (const p of ["width", "min_width", "max_width"]) {
        if (typeof base(m, p) === "number") scaled(m, p, p === "min_width" && phone ? Math.min(1, f.size * f.wide(m)) : f.size * f.wide(m));
      }
      for (const p of ["height", "min_height", "max_height"]) if (typeof base(m, p) === "number") scaled(m, p, f.size * f.tall);
      legendAside(m, f.present);
      const was = laidOut(m);
      // in the presenter view a plot area of MIN_FRAME px at the least, above what its title,
      // axes and legend took in the last layout (random-features' weights, under a legend of
      // two rows in the presenter's type, was 45 px tall at the smallest scale)
      if (f.present && was && typeof base(m, "height") === "number") {
        const least = Math.ceil(was.height - was.frameHeight + MIN_FRAME);
        if (m.height < least) set(m, "height", least);
      }
      // its title as large as the presenter's type, but never wider than the figure (a long
      // title on a narrow figure was cut off: "Masked scores of this chu")
      const title = m.title && typeof m.title === "object" && "text_font_size" in m.title ? m.title : null;
      const planned = typeof base(m, "width") === "number" ? base(m, "width") * f.size * f.wide(m) : null;
      const w = planned && widthGot(m, planned, was);
      if (title && title.text) {
        let px = 14 * Math.min(f.font, 0.45 + f.size);
        // (it starts where the frame does, after the y axis)
        const fits = w && f.size !== 1 ? (w - 8 - (was ? was.frameLeft : 40)) / textWidth(title.text, 1, true) : Infinity;
        // (rounded down where the room sets it: 16.5 px rounded up cut random-features' title on a phone)
        set(title, "text_font_size", `${fits < px ? Math.max(12, Math.floor(fits)) : Math.round(px)}px`);
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

// The texts fitted again alone (fit-text.js), with the view's options as restyle takes them:
// after new frames (a new d changes the cells, not the figure) and a resize (a fluid figure's
// width), when nothing else of the look changed.
export function refitTexts(doc, present, opts) {
  const wasApplying = player.applying;
  player.applying = true;  // the view's own changes: not sent to Python
  const layoutOnce = deferLayout(doc);
  try { fitTexts(doc, factors(present, opts || {}), present); } finally {
    player.applying = wasApplying;
    layoutOnce();
  }
}
