// The player: steps through the frames of a page's run in the browser, with no Python.
//
// A page's Bokeh document holds a ColumnDataSource named "lab-frames": one column per thing
// that changes with t (t_max + 1 values each), and in its tags the bindings
// [model, attribute, column] saying where frame t of each column goes ("data.<field>" for a
// column of a ColumnDataSource). Step, Back, Play, Reset, the timeline, the keys and the
// link's t all end in show(t), which puts frame t into every bound model; BokehJS repaints.
// Python (ui/page.py) sends new frames when a setting changes and calls refresh().
//
// Also here: the figures' theme and presenter styling (restyle), which must work before
// Python has started, and takeover(), which swaps the page built ahead of time for the live
// one. Works in a browser and in node (the pure parts are exported for tests/js).
"use strict";

(function (global) {
  // ---- theme and presenter styling of every figure ------------------------------------------
  const THEMES = {
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
  function restyle(doc, theme, present, opts) {
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
    } finally {
      player.applying = wasApplying;
      layoutOnce();
    }
  }

  // BokehJS lays the whole page out again, at once, on every change of a size (a figure's
  // width, a title's type size, a part shown or hidden: invalidate_layout climbs to the root
  // view, which measures the page). A restyle makes dozens of such changes: each root view of
  // the document puts its layout off until they are all made, and does it once. On the gates
  // page a presenter-view restyle took 1.0-1.7 s and takes 60-130 ms (a fit tries ten).
  // Returns the function that lays out what was put off.
  function deferLayout(doc) {
    const index = global.Bokeh && global.Bokeh.index;
    const roots = index ? [...index].filter((v) => v.model && v.model.document === doc) : [];
    const pending = new Set();
    for (const v of roots) v.invalidate_layout = () => pending.add(v);  // shadows the prototype's
    return () => {
      for (const v of roots) delete v.invalidate_layout;
      for (const v of pending) v.invalidate_layout();
    };
  }

  // ---- which parts of a page a view shows -----------------------------------------------------
  // Pages mark their Panel layouts with css_classes: "lab-main-view" (what the presenter view
  // shows), "lab-secondary" (never in the presenter view), "lab-controls" (the settings, folded
  // away in the presenter view, on phones and in print) and "lab-view-<name>" (?view=<name>).
  const has = (m, cls) => Array.isArray(m.css_classes) && m.css_classes.includes(cls);
  function kids(m) {
    const c = m.children, out = [];
    const add = (x) => { if (Array.isArray(x)) x.forEach(add); else if (x && typeof x === "object" && "visible" in x && "css_classes" in x) out.push(x); };
    if (Array.isArray(c)) c.forEach(add);
    else if (c instanceof Map) for (const v of c.values()) add(v);
    else if (c && typeof c === "object" && !("visible" in c)) for (const v of Object.values(c)) add(v);
    if (m.child) add(m.child);
    return out;
  }
  function rootsOf(doc) {
    const r = typeof doc.roots === "function" ? doc.roots() : doc.roots;
    return r ? [...r] : [];
  }
  // The named views of a document ("lab-view-<name>"), and whether it has a main view.
  function viewNames(doc) {
    const names = new Set();
    for (const m of doc.all_models) for (const cls of m.css_classes || []) if (cls.startsWith("lab-view-")) names.add(cls.slice(9));
    return [...names];
  }
  // show: the parts a view is made of (null: the whole page); hide: the parts it leaves out.
  // Settings unfolded are shown beside a named or main view.
  function layoutWanted(doc, present, opts) {
    const hide = [];
    let show = null;
    if (opts.view && viewNames(doc).includes(opts.view)) show = [`lab-view-${opts.view}`];
    else if (present && [...doc.all_models].some((m) => has(m, "lab-main-view"))) show = ["lab-main-view"];
    if (present && !opts.print) hide.push("lab-secondary");
    if (present && opts.drop && !opts.print) hide.push("lab-present-drop");  // a screen too small for all
    if ((present || opts.fold || opts.print || show) && !opts.settings) hide.push("lab-controls");
    else if (show) show.push("lab-controls");
    if (opts.print) hide.push("lab-no-print");
    return { show, hide };
  }
  const hiddenByView = new WeakSet();
  function arrange(doc, { show, hide }) {
    const within = new Map();  // model -> holds a model marked with one of `show`
    const marked = (m) => show.some((cls) => has(m, cls));
    const holds = (m) => {
      if (!within.has(m)) within.set(m, marked(m) || kids(m).some(holds));
      return within.get(m);
    };
    const setVisible = (m, on) => {
      if (!on && m.visible) { hiddenByView.add(m); m.visible = false; }
      else if (on && hiddenByView.has(m)) { hiddenByView.delete(m); m.visible = true; }
    };
    const walk = (m, inside) => {
      let on = !hide.some((cls) => has(m, cls));
      if (on && show && !inside) {
        if (marked(m)) inside = true;
        else on = holds(m);
      }
      setVisible(m, on);
      if (on) for (const k of kids(m)) walk(k, inside);
    };
    for (const r of rootsOf(doc)) walk(r, false);
  }

  // Every text of every figure in the site's UI font (the --font of lab.css, which ships it),
  // so a figure measures the same on every machine: titles, axes, legends, colour bars, labels
  // and the numbers in heatmap cells (a glyph's text_font is a value spec).
  const FONT_PROPS = ["text_font", "axis_label_text_font", "major_label_text_font", "label_text_font", "title_text_font"];
  let font = null;
  function fontFamily() {
    if (font === null) {
      const css = global.document && global.getComputedStyle ? global.getComputedStyle(global.document.documentElement).getPropertyValue("--font") : "";
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

  function paint(doc, theme, c, f) {
    for (const m of doc.all_models) {
      setFont(m);
      if ("background_fill_color" in m && "renderers" in m && "toolbar" in m) {  // a figure
        for (const p of ["width", "min_width", "max_width"]) if (typeof base(m, p) === "number") scaled(m, p, f.size * f.wide(m));
        for (const p of ["height", "min_height", "max_height"]) if (typeof base(m, p) === "number") scaled(m, p, f.size * f.tall);
        // its title as large as the presenter's type, but never wider than the figure (a long
        // title on a narrow figure was cut off: "Masked scores of this chu")
        const title = m.title && typeof m.title === "object" && "text_font_size" in m.title ? m.title : null;
        const w = typeof base(m, "width") === "number" ? base(m, "width") * f.size * f.wide(m) : null;
        if (title && title.text) {
          let px = 14 * Math.min(f.font, 0.45 + f.size);
          if (w && f.size !== 1) px = Math.max(12, Math.min(px, (w - 40) / (0.58 * title.text.length)));
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
      } else if ("fill_color" in m && "left" in m && "right" in m && m.name === "lab-veil") {
        set(m, "fill_color", c.background);  // a veil over what is still to come
      } else if (m.type === "Text" && "text_font_size" in m) {  // numbers in a heatmap's cells
        scaled(m, "text_font_size", Math.max(1, f.size));
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

  // ---- frames -----------------------------------------------------------------------------
  // The bindings grouped by model: [[model, [[attr, column], ...]], ...].
  function group(bindings) {
    const byModel = new Map();
    for (const [model, attr, column] of bindings) {
      if (!byModel.has(model)) byModel.set(model, []);
      byModel.get(model).push([attr, column]);
    }
    return [...byModel.entries()];
  }

  // Put frame t of every column into its model: one assignment per model, so BokehJS sees
  // one change (and a ColumnDataSource keeps its columns the same length throughout).
  // "@alt" is a figure's text alternative: set on its element (role img), not on the model.
  // A Div's text goes straight into its view's element: BokehJS re-renders a Div and lays out
  // the whole page on every change of its text (20-60 ms a readout, measured); the readouts
  // keep their size, so the page needs no new layout. The model keeps the text, silently.
  function apply(groups, columns, t, describe, markup) {
    for (const [model, attrs] of groups) {
      const props = {};
      let data = null;
      for (const [attr, column] of attrs) {
        const value = columns[column][t];
        if (attr === "@alt") { if (describe) describe(model, value); }
        else if (attr.startsWith("data.")) (data = data || Object.assign({}, model.data))[attr.slice(5)] = value;
        else if (attr === "text" && markup && markup(model, value)) continue;
        else props[attr] = value;
      }
      if (data) model.data = data;
      if (Object.keys(props).length) model.setv ? model.setv(props) : Object.assign(model, props);
    }
  }

  function clamp(t, tMax) {
    const n = Math.round(Number(t));
    return Number.isFinite(n) ? Math.max(0, Math.min(n, tMax)) : 0;
  }

  const PANEL_HOLD_MS = 600;  // panel.io.pyodide's TIMEOUT (500 ms) and DEBOUNCE (50 ms), and a margin

  // ---- the player -------------------------------------------------------------------------
  const player = {
    t: 0, tMax: 0, playing: false, speed: 8, groups: [], stops: [], frames: null, doc: null,
    bound: new Set(), listeners: [],

    // Find the run in a rendered document; show frame t (kept where it is, within range).
    attach(doc) {
      this.doc = doc;
      this.frames = doc.get_model_by_name("lab-frames");
      this.refresh();
    },
    // A new run is about to arrive: a filter's indices point into data it may shorten, so
    // they are emptied first (BokehJS refilters at once; an index past its row broke the
    // page); refresh() puts frame t's back.
    prepare() {
      this.applying = true;
      try {
        for (const [model, attrs] of this.groups) {
          if (attrs.some(([a]) => a === "indices")) model.indices = [];
        }
      } finally { this.applying = false; }
    },
    // The frames changed (a new setting): read them again and show the same t, if it exists.
    refresh() {
      const info = (this.frames.tags && this.frames.tags[0]) || {};
      this.groups = group(info.bindings || []);
      this.stops = info.stops || [];
      this.bound = new Set(this.groups.map(([m]) => m));
      this.tMax = Math.max(0, (this.frames.data.t || [0]).length - 1);
      this.show(this.t);
    },
    show(t) {
      this.t = clamp(t, this.tMax);
      if (this.frames) {
        this.applying = true;
        // Text alternatives wait while playing (setting long aria-labels on every frame halved
        // the frame rate, measured; nobody reads them at 60 a second): set when play stops.
        try { apply(this.groups, this.frames.data, this.t, this.playing ? null : describe, markup); } finally { this.applying = false; }
      }
      for (const fn of this.listeners) fn(this.t, this.tMax);
    },
    step() {
      if (this.t < this.tMax) this.show(this.t + 1);
      else this.pause();
    },
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
      const reduce = global.matchMedia && global.matchMedia("(prefers-reduced-motion: reduce)").matches;
      const tick = (now) => {
        if (!this.playing) return;
        const rate = reduce ? Math.min(this.speed, 2) : this.speed;  // calm motion when asked
        if (now - last >= 1000 / rate - 4) {  // within 4 ms of due: this frame
          last = now;
          this.step();
        }
        if (this.playing) global.requestAnimationFrame(tick);
      };
      global.requestAnimationFrame(tick);
      for (const fn of this.listeners) fn(this.t, this.tMax);
    },
    pause() {
      if (!this.playing) return;
      this.playing = false;
      this.describe();
      for (const fn of this.listeners) fn(this.t, this.tMax);
    },
    // Give every figure frame t's text alternative (it goes on the figure's element, so only
    // once the document is on screen).
    describe() {
      const alt = this.groups.map(([m, attrs]) => [m, attrs.filter(([a]) => a === "@alt")]).filter(([, a]) => a.length);
      if (this.frames) apply(alt, this.frames.data, this.t, describe);
    },
    onChange(fn) { this.listeners.push(fn); },
    ids(doc) { return [...doc.all_models].map((m) => m.id); },

    // Changes the player makes are the browser's own: Python's copy of a bound model is
    // never read, so they are not sent back through Panel's link (it would put Python on
    // the path of every step).
    // Panel's link sends a value change at once but holds the next ones for up to 500 ms,
    // while a click goes at once: typing in a box and pressing its button reached Python as
    // the click first, with the old text. A click that follows a change by less than that
    // waits until the change has gone.
    guard(jsdoc) {
      const onChange = jsdoc.on_change.bind(jsdoc);
      let lastChange = -Infinity;
      jsdoc.on_change = (callback, ...rest) => onChange((event) => {
        if (this.applying || (event && this.bound.has(event.model))) return;
        if (!event || event.kind === "ModelChanged") {
          lastChange = performance.now();
          return callback(event);
        }
        const wait = lastChange + PANEL_HOLD_MS - performance.now();
        if (wait > 0) global.setTimeout(() => callback(event), wait);
        else callback(event);
      }, ...rest);
    },

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

  // The view of a model in the page (null in node or before it is rendered), remembered.
  const views = new WeakMap();
  function viewOf(model) {
    let view = views.get(model);
    if (view && view.el && view.el.isConnected) return view;
    view = null;
    for (const root of (global.Bokeh && global.Bokeh.index) || []) {
      view = root.owner && root.owner.find_one(model);
      if (view) break;
    }
    if (view) views.set(model, view);
    return view;
  }
  function describe(model, text) {
    const view = viewOf(model);
    if (view && view.el) {
      view.el.setAttribute("role", "img");
      view.el.setAttribute("aria-label", String(text));
    }
  }
  function markup(model, text) {
    const view = model.type === "Div" && !model.render_as_text ? viewOf(model) : null;
    if (!view || !view.markup_el) return false;
    model.setv({ text }, { silent: true });
    view.markup_el.innerHTML = text;
    return true;
  }

  const api = { player, restyle, apply, group, clamp, THEMES, viewNames, kids };
  global.labPlayer = player;
  global.labRestyle = restyle;
  global.labViewNames = viewNames;
  global.labViewOf = viewOf;
  global.labPartsOf = kids;
  if (typeof module === "object" && module.exports) module.exports = api;
})(typeof window !== "undefined" ? window : globalThis);
