// The page shell. At first paint it shows the page built ahead of time (the default run, from
// the lab-doc block) and lets the player (player.js) step through it; meanwhile it boots
// Pyodide with a staged progress display and runs the page's entry script, whose live page
// then takes over (ui/app.py). It owns the transport bar, the keyboard, the link, theme,
// presenter view, Share, CSV, notices and the offline service worker.
// Python side: ui/app.py (window.labPy holds its hooks once the page is live).
"use strict";

(function () {
  const CONFIG = JSON.parse(document.getElementById("lab-config").textContent);
  const root = document.documentElement;
  const $ = (id) => document.getElementById(id);
  const MB = (n) => (n / 1e6).toFixed(1);
  const timings = (window.labTimings = { start: performance.now() });
  const player = window.labPlayer;

  // ---- notices (plain text only: nothing from a link or a file is ever read as markup) ------
  // The shell's (its own keys of the link) and Python's (the settings) side by side: neither
  // replaces the other. Bounded: at most LINK.max_notices sentences, values cut and invisible
  // characters shown as escapes (what is quoted is what was given).
  const LINK = CONFIG.link;  // the link contract, stated once in Python (ui/urlstate.py)
  const notes = { shell: [], python: "" };
  function renderNotice() {
    const all = [...notes.shell, notes.python].filter(Boolean), max = LINK.max_notices;
    let text = all.slice(0, max).join(" ");
    if (all.length > max) text += ` … and ${all.length - max} more.`;
    $("lab-notice-text").textContent = text;
    $("lab-notice").hidden = !text;
  }
  const shellNote = (text) => { notes.shell.push(text); renderNotice(); };
  const notice = (text) => { notes.python = String(text || ""); renderNotice(); };  // Python's
  $("lab-notice-close").onclick = () => { notes.shell = []; notes.python = ""; renderNotice(); };
  function shown(raw) {
    const s = [...String(raw).slice(0, LINK.max_value_shown + 8)].map((ch) =>
      /[\p{C}\p{Z}]/u.test(ch) && ch !== " " ? `\\u${ch.codePointAt(0).toString(16).padStart(4, "0")}` : ch).join("");
    return s.length <= LINK.max_value_shown ? s : `${s.slice(0, LINK.max_value_shown - 1)}…`;
  }

  // ---- the link -----------------------------------------------------------------------------
  // The settings part belongs to Python once it is live (setSettings); t to the player; the
  // view flags to the shell. Before Python, the link's settings are kept exactly as they came.
  // The shell's own keys are checked here by the contract: a bad one is named and dropped.
  const query = new URLSearchParams(location.search);
  const isShellKey = (k) => Object.prototype.hasOwnProperty.call(LINK.shell, k);
  const shellValues = readShellKeys();  // key -> accepted value (text)
  const linkT = shellValues.t !== undefined ? shellValues.t : null;
  // Does the link ask for settings other than the page built ahead of time shows?
  const defaults = new URLSearchParams(LINK.defaults);
  const ownSettings = LINK.settings.some((k) => query.has(k) && query.getAll(k).pop() !== defaults.get(k));
  let settingsQuery = null;  // from Python
  let urlTimer = null;

  function accepts(spec, tMax) {
    if (spec.accepts === "flag") return `${spec.on[0]} or ${spec.off[0]}`;
    if (spec.accepts === "choice") return `one of ${spec.values.join(", ")}`;
    if (spec.accepts === "int") return `a whole number from ${spec.min} to ${tMax !== undefined ? tMax : "the run's last t"}`;
    if (spec.accepts === "number") return `a number from ${spec.min} to ${spec.max}`;
    return LINK.views.length ? `one of this page's views: ${LINK.views.join(", ")}` : "nothing: this page has no named views";
  }
  function acceptShell(spec, raw) {
    const v = raw.trim().toLowerCase();
    if (spec.accepts === "flag") return spec.on.includes(v) ? "1" : spec.off.includes(v) ? "0" : null;
    if (spec.accepts === "choice") return spec.values.includes(v) ? v : null;
    if (spec.accepts === "int") return /^\d{1,9}$/.test(v) && Number(v) >= spec.min ? String(Number(v)) : null;
    if (spec.accepts === "number") {
      const n = Number(v);
      return /^\d{1,3}(\.\d{1,3})?$/.test(v) && n >= spec.min && n <= spec.max ? String(n) : null;
    }
    return LINK.views.includes(raw) ? raw : null;  // a view's name, exactly
  }
  function readShellKeys() {
    const out = {};
    for (const [k, spec] of Object.entries(LINK.shell)) {
      const all = query.getAll(k);
      if (!all.length) continue;
      if (all.length > 1) shellNote(`The link gives ${k} ${all.length.toLocaleString("en")} times; the last one counts.`);
      const raw = all[all.length - 1], ok = acceptShell(spec, raw);
      if (ok === null) {
        const tMax = spec.accepts === "int" && !LINK.settings.some((s) => query.has(s)) ? CONFIG.prerender.t_max : undefined;
        shellNote(`Ignored ${k}=${shown(raw)}: expected ${accepts(spec, tMax)}.`);
      } else out[k] = ok;
    }
    return out;
  }

  function writeUrl() {
    urlTimer = null;
    const q = new URLSearchParams(settingsQuery !== null ? settingsQuery : "");
    if (settingsQuery === null) for (const [k, v] of query) if (!isShellKey(k)) q.set(k, v);
    if (!(ownSettings && !window.labLive)) q.set("t", String(player.t));
    else if (shellValues.t !== undefined) q.set("t", shellValues.t);
    for (const k of ["embed", "theme", "view"]) if (shellValues[k] !== undefined) q.set(k, shellValues[k]);
    if (root.classList.contains("present")) q.set("present", "1");
    if (tp.speed.value !== "8") q.set("speed", tp.speed.value);  // a presenter's pace travels
    const url = `${location.pathname}?${q.toString().replace(/%2C/g, ",")}${location.hash}`;
    if (url !== location.pathname + location.search + location.hash) history.replaceState(null, "", url);
  }
  // While playing, the link follows at most every 250 ms, and only in a frame's spare time:
  // a history update costs 2-5 ms (measured), and one that came after a step's work made that
  // frame miss its paint (at 60 steps/s, four frames a second). Pausing writes it at once.
  const idle = window.requestIdleCallback || ((fn) => setTimeout(() => fn({ timeRemaining: () => 50 }), 0));
  const SPARE_MS = 8;
  function whenSpare() {
    idle((deadline) => {
      if (urlTimer === null) return;  // written meanwhile
      if (!player.playing || deadline.timeRemaining() >= SPARE_MS) writeUrl();
      else whenSpare();
    });
  }
  function urlLater() {
    if (!player.playing) { clearTimeout(urlTimer); writeUrl(); }
    else if (urlTimer === null) urlTimer = setTimeout(whenSpare, 250);
  }

  // ---- progress -----------------------------------------------------------------------------
  let stageName = "";
  function stage(name, label, figures, fraction) {
    stageName = name;
    $("lab-stage").textContent = label;
    $("lab-figures").textContent = figures || "";
    if (fraction !== undefined) $("lab-bar").style.width = `${Math.round(100 * Math.min(1, fraction))}%`;
  }
  const waitingFor = () => ownSettings
    ? "This link's own settings are shown once Python has started: "
    : "The plots work now; the settings respond once Python has started: ";

  // Python could not start. With the page built ahead of time on screen, say what still works.
  function fail(what, todo, detail) {
    if (window.labFailed) return;
    document.body.classList.remove("lab-loading");
    document.body.classList.add("lab-failed");
    $("lab-status").hidden = true;
    const box = $("lab-error");
    box.hidden = false;
    box.replaceChildren();
    const h = document.createElement("h2");
    h.textContent = what;
    const p = document.createElement("p");
    p.textContent = todo;
    box.append(h, p);
    if ($("lab-doc") && !ownSettings) {
      const still = document.createElement("p");
      still.textContent = "What still works: the plots of the default settings below, with Step, Back, Play, Reset, " +
        "the timeline, the keys, the link's t, CSV, PNG and the theme. Changing a setting needs Python.";
      box.append(still);
    }
    if (detail) {
      const d = document.createElement("details");
      const s = document.createElement("summary");
      s.textContent = "Technical details";
      const pre = document.createElement("pre");
      pre.textContent = String(detail).slice(-3000);
      d.append(s, pre);
      box.append(d);
    }
    const again = document.createElement("button");
    again.type = "button";
    again.textContent = "Try again";
    again.onclick = () => location.reload();
    box.append(again);
    window.labFailed = what;
  }

  // Count bytes and finished wheels as they arrive, without changing what Pyodide receives.
  const counted = { core: 0, wheels: 0, wheelFiles: 0, failed: null };
  const realFetch = window.fetch.bind(window);
  window.fetch = async function (input, init) {
    const url = String(input instanceof Request ? input.url : input);
    let response;
    try {
      response = await realFetch(input, init);
    } catch (err) {  // a missing file under an integrity check rejects here, not with a 404
      if (url.includes("/pyodide/") && !counted.failed) {
        counted.failed = url.split("/").pop();
        // Pyodide's loader does not always reject when its runtime cannot be fetched (it
        // logs "wasm instantiation failed" and waits for ever): say so now.
        if (/\.(wasm|asm\.js)$|python_stdlib\.zip$/.test(url)) {
          setTimeout(() => fail(`Could not download ${counted.failed}.`,
            "Check the connection and reload. If you are offline, open the page once while online so it can be kept for later.", String(err)), 0);
        }
      }
      throw err;
    }
    const isWheel = /\.(whl|zip)$/.test(url) && url.includes("/pyodide/") && !url.endsWith("python_stdlib.zip");
    if (!response.ok) {
      if (url.includes("/pyodide/")) counted.failed = `${url.split("/").pop()} (HTTP ${response.status})`;
      return response;
    }
    if (!response.body || !url.includes("/pyodide/")) return response;
    const reader = response.body.getReader();
    const stream = new ReadableStream({
      async pull(controller) {
        const { done, value } = await reader.read();
        if (done) {
          if (isWheel) {
            counted.wheelFiles += 1;
            progressPackages();
          }
          controller.close();
          return;
        }
        if (isWheel) counted.wheels += value.byteLength;
        else counted.core += value.byteLength;
        if (stageName === "runtime") progressRuntime();
        controller.enqueue(value);
      },
      cancel(reason) { reader.cancel(reason); },
    });
    return new Response(stream, { status: response.status, statusText: response.statusText, headers: response.headers });
  };

  function progressRuntime() {
    const total = CONFIG.sizes.core;
    stage("runtime", `${waitingFor()}downloading the Python runtime`, `${MB(counted.core)} / ${MB(total)} MB`, 0.45 * counted.core / total);
  }
  function progressPackages() {
    const n = CONFIG.sizes.count;
    stage("packages", `${waitingFor()}installing packages`, `${Math.min(counted.wheelFiles, n)} / ${n} · ${MB(counted.wheels)} / ${MB(CONFIG.sizes.wheels)} MB`,
      0.45 + 0.35 * counted.wheelFiles / n);
  }

  // ---- the UI font ----------------------------------------------------------------------------
  // Preloaded by the page (16 kB a weight); the figures are built, and the presenter fit
  // measured, once it is there: a figure laid out in a fallback font keeps that layout. A font
  // that cannot load (blocked, an old browser) leaves the system's fonts after at most 3 s.
  // If it could not load, the family is taken out of --font (which the figures read too): a
  // face that failed is tried again, and fails again, at every text drawn with it.
  const fontsLoaded = (document.fonts && document.fonts.load
    ? Promise.race([
      Promise.all(['16px "Lab Sans"', 'bold 16px "Lab Sans"'].map((f) => document.fonts.load(f))),
      new Promise((r) => setTimeout(r, 3000)),
    ])
    : Promise.resolve()).catch(() => {}).then(() => {
    const faces = document.fonts && typeof document.fonts.forEach === "function" ? [...document.fonts] : [];
    timings.font = faces.some((f) => f.family.includes("Lab Sans") && f.status === "loaded");
    if (!timings.font) root.style.setProperty("--font", getComputedStyle(root).getPropertyValue("--font").replace(/"Lab Sans",\s*/, ""));
  });

  // ---- the page built ahead of time: on screen and stepping before Python --------------------
  // The document is themed, styled for this view and set to the link's t before BokehJS
  // builds a view of it: each change made after rendering cost another layout and paint of
  // the figures. (Bokeh.embed.embed_item would parse and render in one call; the fallback.)
  async function showPrerendered() {
    if (!window.Bokeh) return;
    timings.scripts = performance.now();  // BokehJS and Panel have run
    const item = JSON.parse($("lab-doc").textContent);
    const Document = typeof window.Bokeh.require === "function" && window.Bokeh.require("document").Document;
    const standalone = Document && window.Bokeh.embed.add_document_standalone;
    let jsdoc = null;
    if (standalone) jsdoc = Document.from_json(item.doc);
    else jsdoc = (await window.Bokeh.embed.embed_item(item)).roots[0].model.document;
    timings.decoded = performance.now();
    await fontsLoaded;  // figures measure their text as they are built: in the shipped font
    timings.fonts = performance.now();
    styleDoc(jsdoc);
    player.attach(jsdoc);
    if (linkT !== null && !ownSettings) seekFromLink(player.tMax);
    // Figures out of view are laid out but painted only once they come near it (watchFigures):
    // all start held, and those within reach of the view are let go as soon as they are placed.
    const figures = standalone ? [...jsdoc.all_models].filter(isFigure) : [];
    for (const model of figures) model.hold_render = true;
    if (standalone) rest = setAside(jsdoc);
    if (standalone) await standalone(jsdoc, $(item.target_id));
    timings.built = performance.now();
    for (const model of figures) {
      const view = window.labViewOf(model);
      if (!view || !view.el || nearView(view.el)) model.hold_render = false;
    }
    player.describe();  // the figures' text alternatives go on their elements, now there
    window.labPrerendered = true;
    document.body.classList.add("lab-ready");
    afterRender(jsdoc);
    if (ownSettings) document.body.classList.add("lab-waiting");
    else enableTransport(true);
    stage("rest", `${waitingFor()}the rest of the page is being built`, "", 0.02);
    watchFigures(jsdoc);
    // The plots are on screen once the frame after them has been painted.
    requestAnimationFrame(() => requestAnimationFrame(() => { timings.firstPlot = performance.now(); }));
    joined = twoFrames().then(() => joinRest(jsdoc));
  }

  // The first render builds the views of the top of the page only: the settings and the first
  // main view (css_classes "lab-main-view"), and what comes before them. The parts after it
  // (further main views and figures, the exercise) are set aside and join just after the first
  // paint, in page order, one part a frame. Building every view first had cost running-sum's
  // first plot about a fifth (0.96 -> 0.80 s, measured; the whole page is built as soon as
  // before, 1.39 -> 1.41 s). The presenter view shows every main view at once, fitted to the
  // screen: there only what follows the last main view is set aside. A named view (?view=, a
  // course's embed) is rendered alone: every part that does not hold it joins later, hidden
  // (running-sum's "state": 0.99 -> 0.86 s). Returns what was set aside:
  // [[layout, all its children, those it kept], ...].
  let rest = [];
  let joined = Promise.resolve();  // the parts set aside have all joined
  let mainAside = false;  // main views among them (the presenter fit waits for those)
  const isMain = (m) => Array.isArray(m.css_classes) && m.css_classes.includes("lab-main-view");
  const mainViews = (m) => (isMain(m) ? 1 : window.labPartsOf(m).reduce((n, k) => n + mainViews(k), 0));
  function setAside(jsdoc) {
    const roots = typeof jsdoc.roots === "function" ? jsdoc.roots() : jsdoc.roots;
    const aside = [];
    const cut = (m, kept) => {  // only a layout with a list of children is cut
      if (kept.length < m.children.length) { aside.push([m, m.children, new Set(kept)]); m.children = kept; }
    };
    if (viewState.view) {
      if (!window.labViewNames(jsdoc).includes(viewState.view)) return aside;  // the whole page is shown
      const named = `lab-view-${viewState.view}`;
      const isNamed = (m) => Array.isArray(m.css_classes) && m.css_classes.includes(named);
      const holds = (m) => isNamed(m) || window.labPartsOf(m).some(holds);
      const visit = (m) => {
        if (isNamed(m)) return;
        if (Array.isArray(m.children)) cut(m, m.children.filter(holds));
        window.labPartsOf(m).filter(holds).forEach(visit);
      };
      roots.filter(holds).forEach(visit);
      return aside;
    }
    const all = roots.reduce((n, r) => n + mainViews(r), 0);
    const keep = root.classList.contains("present") ? all : 1;
    mainAside = keep < all;
    let seen = 0;  // main views passed, in page order
    const visit = (m) => {
      if (isMain(m)) { seen++; return; }
      if (!Array.isArray(m.children)) { window.labPartsOf(m).forEach(visit); return; }
      const kids = m.children;
      for (let i = 0; i < kids.length; i++) {
        if (seen >= keep) { cut(m, kids.slice(0, i)); return; }
        visit(kids[i]);
      }
    };
    roots.forEach(visit);
    return aside;
  }
  // ... and join here, one part a frame (a part's views take up to a tenth of a second to
  // build, and a step pressed meanwhile is painted in between), in their places, styled like
  // the rest, their figures held until they come near the view.
  async function joinRest(jsdoc) {
    if (!rest.length) { timings.joined = performance.now(); return; }
    for (const [parent, kids, kept] of rest) {
      const shown = new Set(kept);
      for (const kid of kids) {
        if (shown.has(kid)) continue;
        await new Promise((r) => requestAnimationFrame(() => setTimeout(r, 0)));  // after a paint
        watchFigures(jsdoc);  // the figures joined a frame ago paint once near the view
        shown.add(kid);
        const wasApplying = player.applying;
        player.applying = true;
        try { parent.children = kids.filter((k) => shown.has(k)); } finally { player.applying = wasApplying; }
        for (const model of jsdoc.all_models) if (isFigure(model) && !window.labViewOf(model)) model.hold_render = true;
        styleDoc(jsdoc);
      }
    }
    rest = [];
    await twoFrames();  // BokehJS builds the new views asynchronously
    watchFigures(jsdoc);
    player.describe();
    label(jsdoc);
    postHeight();
    timings.joined = performance.now();
  }

  // The link's t (a whole number: readShellKeys), checked against what this run reaches; one
  // past the end is named and dropped from the link.
  function seekFromLink(tMax) {
    if (shellValues.t === undefined) return;
    if (Number(shellValues.t) > tMax) {
      shellNote(`Ignored t=${shown(shellValues.t)}: expected ${accepts(LINK.shell.t, tMax)}.`);
      delete shellValues.t;
      urlLater();
      return;
    }
    player.seek(Number(shellValues.t));
  }

  // ---- Python -------------------------------------------------------------------------------
  async function boot() {
    if (location.protocol === "file:") {
      return fail("This page was opened from a file.",
        "The simulator needs a web server: run `make serve` and open the address it prints, or put the site folder on any static web host.");
    }
    if (typeof WebAssembly !== "object") {
      return fail("This browser cannot run WebAssembly.",
        "Use a current Chrome, Edge, Firefox or Safari, and check that WebAssembly is not switched off by a policy or an extension.");
    }
    const scriptsMissing = () => fail("A part of the site did not load.",
      "A script is missing or was blocked (pyodide.js, BokehJS or Panel). Reload; if it persists the site copy is incomplete: rebuild it with `make build`.");
    if (typeof loadPyodide !== "function") return scriptsMissing();
    const base = new URL(".", location.href);
    const at = (path) => new URL(path, base).href;
    try {
      progressRuntime();
      const pyodide = await loadPyodide({
        indexURL: at("pyodide/"),
        env: { PANEL_CDN_ROOT: at("static/panel/"), BOKEH_RESOURCES: "cdn", HOME: "/home/pyodide" },
        stdout: () => {},
        stderr: (line) => console.debug(line),
      });
      timings.pyodide = performance.now();
      progressPackages();
      const errors = [];
      await pyodide.loadPackage(CONFIG.packages, {
        messageCallback: () => {},
        errorCallback: (msg) => errors.push(msg),
        checkIntegrity: true,
      });
      if (errors.length || counted.failed) {
        throw new LoadError(counted.failed ? `Could not download ${counted.failed}.` : "A package failed to install.", errors.join("\n"));
      }
      timings.packages = performance.now();
      await pageScripts;  // BokehJS and Panel, loading meanwhile
      if (!window.Bokeh) return scriptsMissing();
      stage("start", `${waitingFor()}starting the simulator`, "", 0.85);
      window.labShell = shellHooks;
      await pyodide.runPythonAsync(`
import pyodide.ffi
if not hasattr(pyodide.ffi, "jsnull"):
    # Panel 1.9 targets Pyodide 0.29; in 0.27 a JS null already arrives as None.
    pyodide.ffi.jsnull = type("JsNull", (), {})()
`);
      await pyodide.runPythonAsync(CONFIG.code + "\nimport ui.app\nawait ui.app.READY\n");
      window.labPyodide = pyodide;
    } catch (err) {
      if (err instanceof LoadError) return fail(err.message, "Reload the page. If it keeps failing, the site copy is incomplete: rebuild it (`make build`) or ask whoever hosts it.", err.detail);
      const text = String(err && err.message || err);
      if (/Failed to fetch|NetworkError|Load failed|404/.test(text) || counted.failed) {
        return fail(counted.failed ? `Could not download ${counted.failed}.` : "A file of the site could not be downloaded.",
          "Check the connection and reload. If you are offline, open the page once while online so it can be kept for later.", text);
      }
      return fail("The simulator could not start.", "Reload the page. If it happens again, please report it with the details below.", text);
    }
  }

  class LoadError extends Error {
    constructor(message, detail) { super(message); this.detail = detail; }
  }

  // The live page, rendered out of sight, replaces the page built ahead of time in one frame:
  // same t (or the link's), same theme and view, same scroll position.
  // adopted: Python linked itself to the document on screen (the same page, model for model):
  // nothing to swap.
  function takeover(jsdoc, adopted) {
    const live = $("lab-app-live");
    const t = ownSettings || !window.labPrerendered ? null : player.t;
    if (!adopted) styleDoc(jsdoc);
    player.takeover(jsdoc);
    if (t === null && linkT !== null) seekFromLink(player.tMax);
    if (adopted) {
      live.remove();
    } else {
      const old = $("lab-app");
      for (const view of [...(window.Bokeh.index || [])]) {
        if (view.el && old.contains(view.el)) view.remove();  // frees the old document's views
      }
      old.remove();
      live.id = "lab-app";
      live.removeAttribute("aria-hidden");
    }
    window.labAdopted = Boolean(adopted);
    timings.live = performance.now();
    stage("done", "Ready", "", 1);
    document.body.classList.remove("lab-loading", "lab-waiting");
    document.body.classList.add("lab-live", "lab-ready");
    $("lab-status").hidden = true;
    $("btn-csv").disabled = false;
    window.labLive = true;
    enableTransport(true);
    watchFigures(jsdoc);
    writeUrl();
    afterRender(jsdoc);
    registerServiceWorker();
  }

  // ---- figures out of sight are not repainted ---------------------------------------------
  // BokehJS repaints every changed figure on every step, on screen or not. A figure scrolled
  // out of view (or hidden in the presenter view) holds its repaints (Bokeh's `hold_render`);
  // it is repainted, as it is now, as soon as it comes within 200 px of the view, and before
  // the page is printed. (A view's pause() would not stay: BokehJS unpauses every figure each
  // time it lays the page out.)
  let observer = null;
  const held = new Map();
  const NEAR_PX = 200;  // a figure this close to the view is painted
  const isFigure = (model) => "renderers" in model && "toolbar" in model;
  function nearView(el) {
    const r = el.getBoundingClientRect();
    return r.bottom > -NEAR_PX && r.top < innerHeight + NEAR_PX && r.right > -NEAR_PX && r.left < innerWidth + NEAR_PX;
  }
  function watchFigures(jsdoc) {
    if (!("IntersectionObserver" in window) || !window.Bokeh) return;
    try {
      if (observer) observer.disconnect();
      held.clear();
      observer = new IntersectionObserver((entries) => {
        for (const entry of entries) {
          const view = held.get(entry.target);
          if (view != null && view.model.hold_render === entry.isIntersecting) view.model.hold_render = !entry.isIntersecting;
        }
      }, { rootMargin: `${NEAR_PX}px` });
      for (const rootView of window.Bokeh.index) {
        if (rootView.model.document !== jsdoc) continue;
        for (const model of jsdoc.all_models) {
          if (!isFigure(model)) continue;
          const view = rootView.owner.find_one(model);
          if (view != null) { held.set(view.el, view); observer.observe(view.el); }
        }
      }
    } catch (err) {  // an optimisation only: every figure then keeps painting
      console.warn("Figures out of view keep painting:", err);
    }
  }
  window.addEventListener("beforeprint", () => {
    for (const view of held.values()) {
      if (view.model.hold_render) {
        view.model.hold_render = false;
        view.repaint();  // now: printing does not wait for the next animation frame
      }
    }
  });

  // ---- the transport bar --------------------------------------------------------------------
  const tp = { back: $("tp-back"), step: $("tp-step"), play: $("tp-play"), reset: $("tp-reset"), t: $("tp-t"), speed: $("tp-speed") };
  function enableTransport(on) {
    for (const el of Object.values(tp)) el.disabled = !on;
  }
  enableTransport(false);
  tp.back.onclick = () => player.back();
  tp.step.onclick = () => player.step();
  tp.play.onclick = () => player.toggle();
  tp.reset.onclick = () => player.reset();
  tp.t.addEventListener("input", () => player.seek(Number(tp.t.value)));
  tp.speed.onchange = () => { player.speed = Number(tp.speed.value); writeUrl(); };
  // The link's speed (steps per second, 0.5 to 60), as an option of the list if it is not one.
  const linkSpeed = Number(shellValues.speed);
  if (shellValues.speed !== undefined) {
    if (![...tp.speed.options].some((o) => Number(o.value) === linkSpeed)) {
      tp.speed.add(new Option(`${linkSpeed} / s`, String(linkSpeed)));
    }
    tp.speed.value = [...tp.speed.options].find((o) => Number(o.value) === linkSpeed).value;
  }
  player.speed = Number(tp.speed.value);
  player.onChange((t, tMax) => {
    if (Number(tp.t.max) !== tMax) tp.t.max = String(tMax);
    if (Number(tp.t.value) !== t) tp.t.value = String(t);
    $("tp-t-out").value = `${t} / ${tMax}`;
    tp.t.setAttribute("aria-valuetext", `t = ${t} of ${tMax}`);
    const label = player.playing ? "Pause" : "Play";
    if (tp.play.textContent !== label) {
      tp.play.textContent = label;
      tp.play.setAttribute("aria-pressed", String(player.playing));
    }
    urlLater();
  });

  // ---- hooks Python calls -----------------------------------------------------------------
  const shellHooks = {
    theme: () => root.dataset.theme,
    notice,
    takeover,
    // The document on screen, if Python may take it over (the link asked for no settings of
    // its own), and the settings it was built with.
    prerendered: () => (window.labPrerendered && !ownSettings ? player.doc : null),
    defaultSettings: () => LINK.defaults,
    setSettings: (q) => { settingsQuery = String(q); writeUrl(); },
  };

  // ---- view controls ----------------------------------------------------------------------
  function restyleAll() {
    if (!window.Bokeh) return;
    const docs = new Set([...window.Bokeh.index].map((v) => v.model.document));
    for (const doc of docs) styleDoc(doc);
  }
  function setTheme(name) {
    root.dataset.theme = name;
    try { localStorage.setItem("lab-theme", name); } catch (e) { /* blocked storage */ }
    restyleAll();
  }
  function setPresent(on) {
    root.classList.toggle("present", on);
    $("btn-present").setAttribute("aria-pressed", String(on));
    restyleAll();
    writeUrl();
    fitSoon();
  }
  function toggleFullscreen() {
    if (document.fullscreenElement) document.exitFullscreen();
    else if (document.documentElement.requestFullscreen) document.documentElement.requestFullscreen().catch(() => {});
  }
  function downloadCsv() {
    const text = window.labPy ? window.labPy.csv() : (!ownSettings ? CONFIG.prerender.csv : null);
    if (text == null) return;
    const blob = new Blob([text], { type: "text/csv" });
    const a = document.createElement("a");
    a.href = URL.createObjectURL(blob);
    a.download = `${CONFIG.page}.csv`;
    document.body.append(a);
    a.click();
    a.remove();
    setTimeout(() => URL.revokeObjectURL(a.href), 1000);
  }
  function openShare() {
    writeUrl();
    const link = new URL(location.href);
    link.searchParams.delete("embed");
    $("share-link").value = link.href;
    const embed = new URL(location.href);
    embed.searchParams.set("embed", "1");
    embed.searchParams.delete("present");
    // Built with the DOM and read back as text: the link's values end up escaped.
    const frame = document.createElement("iframe");
    frame.setAttribute("src", embed.href);
    frame.setAttribute("title", CONFIG.title);
    frame.setAttribute("width", "100%");
    frame.setAttribute("height", String(embedHeight()));
    frame.setAttribute("style", "border:0");
    frame.setAttribute("loading", "lazy");
    frame.setAttribute("allow", "fullscreen");
    frame.setAttribute("data-lab-embed", "");
    $("share-embed").value = frame.outerHTML;
    $("share-host").value = HOST_SNIPPET;
    $("dlg-share").showModal();
  }

  // Follow the system's light/dark setting until the reader picks one here.
  if (window.matchMedia) {
    matchMedia("(prefers-color-scheme: dark)").addEventListener("change", (e) => {
      let saved = null;
      try { saved = localStorage.getItem("lab-theme"); } catch (err) { /* blocked storage */ }
      if (!saved && !shellValues.theme) {
        root.dataset.theme = e.matches ? "dark" : "light";
        restyleAll();
      }
    });
  }

  $("btn-theme").onclick = () => setTheme(root.dataset.theme === "dark" ? "light" : "dark");
  $("btn-present").onclick = () => setPresent(!root.classList.contains("present"));
  $("btn-present").setAttribute("aria-pressed", String(root.classList.contains("present")));
  $("btn-csv").onclick = downloadCsv;
  $("btn-csv").disabled = ownSettings;
  $("btn-share").onclick = openShare;
  $("btn-help").onclick = () => $("dlg-help").showModal();
  document.querySelectorAll("[data-copy]").forEach((button) => {
    button.onclick = async () => {
      const field = $(button.dataset.copy);
      field.select();
      try { await navigator.clipboard.writeText(field.value); } catch (e) { document.execCommand("copy"); }
      button.textContent = "Copied";
      setTimeout(() => (button.textContent = "Copy"), 1500);
    };
  });

  // ---- every screen: presenter fit, folded settings, named views, embeds, print, a11y ------
  // What the figures show depends on the view: the presenter view shows a page's main view
  // (css_classes "lab-main-view") scaled to fill the screen; a phone, the presenter view and an
  // embed's ?view= fold the settings away behind the Settings button; ?view=<name> shows one
  // part the page named ("lab-view-<name>"); print shows no controls. See restyle() in player.js.
  const viewState = { scale: null, wide: new Map(), tall: 1, drop: false, settings: false, print: false, view: shellValues.view || "" };
  const narrowQuery = window.matchMedia ? matchMedia("(max-width: 700px)") : { matches: false };
  const folded = () => root.classList.contains("present") || narrowQuery.matches || !!viewState.view;
  function styleDoc(doc) {
    window.labRestyle(doc, viewState.print ? "light" : root.dataset.theme, root.classList.contains("present") && !viewState.print,
      { scale: viewState.scale, wide: (m) => viewState.wide.get(figureKey(m)), tall: viewState.tall, drop: viewState.drop, view: viewState.view, fold: folded(), settings: viewState.settings, print: viewState.print });
  }
  function syncSettingsButton() {
    const b = $("tp-settings");
    b.hidden = !folded();
    b.setAttribute("aria-expanded", String(viewState.settings));
    b.textContent = viewState.settings ? "Hide settings" : "Settings";
  }
  $("tp-settings").onclick = () => {
    viewState.settings = !viewState.settings;
    syncSettingsButton();
    restyleAll();
    fitSoon();
  };
  narrowQuery.addEventListener && narrowQuery.addEventListener("change", () => { syncSettingsButton(); restyleAll(); });
  syncSettingsButton();

  // The presenter view fits one screen: the figures' scale is the largest with which the page
  // neither scrolls nor overflows sideways (a binary search; each try is one BokehJS layout).
  const twoFrames = () => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
  // How far the page's shown parts reach: [bottom, right] of every visible Bokeh view, and the
  // document's own scroll size (BokehJS lays out asynchronously: wait until it stops moving).
  // The page's shown parts (figures and texts, not their parts) and their boxes on screen.
  function shownParts() {
    const parts = [];
    if (!player.doc || !window.labViewOf) return parts;
    for (const m of player.doc.all_models) {
      if (!m.visible || !("sizing_mode" in m) || "children" in m) continue;
      const v = window.labViewOf(m);
      const r = v && v.el && v.el.isConnected ? v.el.getBoundingClientRect() : null;
      if (r && r.width > 0) parts.push({ m, r, figure: isFigure(m) });
    }
    return parts;
  }
  function extent() {
    let bottom = document.documentElement.scrollHeight, right = document.documentElement.scrollWidth;
    for (const { r } of shownParts()) { bottom = Math.max(bottom, r.bottom + scrollY); right = Math.max(right, r.right + scrollX); }
    return [Math.ceil(bottom), Math.ceil(right)];
  }
  async function settled() {
    let last = "", same = 0;
    for (let i = 0; i < 24 && same < 2; i++) {
      await new Promise((r) => requestAnimationFrame(r));
      const now = extent().join();
      same = now === last ? same + 1 : 0;
      last = now;
    }
    return extent();
  }
  const overflows = ([bottom, right]) => bottom > innerHeight + 1 || right > innerWidth + 1;
  // Figures may grow wider than their own proportions by at most this factor (a heatmap's cells
  // a little wider than tall read as well; much more and the figure looks stretched).
  const MAX_WIDE = 1.6;
  // A figure's name that is the same in the page built ahead of time and the live one (their
  // models differ when Python could not adopt the document on screen): title and rank.
  const figureRank = new WeakMap();
  function figureKey(m) {
    if (!figureRank.has(m)) {
      const seen = new Map();
      for (const x of m.document ? m.document.all_models : [m]) {
        if (!isFigure(x)) continue;
        const title = (x.title && x.title.text) || "";
        seen.set(title, (seen.get(title) || 0) + 1);
        figureRank.set(x, `${title}#${seen.get(title)}`);
      }
    }
    return figureRank.get(m);
  }
  // Try one scale and width factors; resolves to whether the shown parts fit the screen.
  async function tryFit(scale, wide, tall = 1) {
    window.labFitTries = (window.labFitTries || 0) + 1;
    viewState.scale = scale;
    viewState.wide = wide;
    viewState.tall = tall;
    restyleAll();
    const reach = await settled();
    return { fits: !overflows(reach), reach };
  }
  // The room at the side of each figure's row: every shown part (figure or text) level with the
  // figure is in its row; a row with text in it has none (the text takes it).
  function widths() {
    const parts = shownParts().filter((p) => p.r.height > 0), wide = new Map();
    for (const { m, r, figure } of parts) {
      if (!figure) continue;
      const row = parts.filter((p) => p.r.top < r.bottom - 4 && p.r.bottom > r.top + 4);
      const left = Math.min(...row.map((p) => p.r.left)), right = Math.max(...row.map((p) => p.r.right));
      const room = row.some((p) => !p.figure) ? 1 : 0.98 * (innerWidth - 18 - left) / Math.max(1, right - left);
      wide.set(figureKey(m), Math.max(1, Math.min(MAX_WIDE, Math.floor(room * 100) / 100)));
    }
    return wide;
  }
  // The height of the figures' rows added up (the figures level with each other are one row),
  // and where the lowest shown part ends.
  function figureRows() {
    const rects = [];
    let bottom = 0;
    for (const { r, figure } of shownParts()) {
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
  // A fit takes up to a dozen layouts (seconds on a slow laptop, with the figures out of sight),
  // so it is remembered (localStorage) for this page, build, settings and screen size: a
  // presenter who opened the page once before gets it in one layout.
  function fitKey() {
    const own = new URLSearchParams(location.search);
    for (const k of Object.keys(LINK.shell)) own.delete(k);
    const q = new URLSearchParams(settingsQuery !== null ? settingsQuery : ownSettings ? own : LINK.defaults);
    q.sort();
    const part = `${viewState.view}${root.classList.contains("embed") ? "+embed" : ""}`;
    return `lab-fit:${CONFIG.page}:${CONFIG.build}:${innerWidth}x${innerHeight}:${part}:${q}`;
  }
  function recallFit() {
    try {
      const v = JSON.parse(localStorage.getItem(fitKey()) || "null");
      return v && typeof v.scale === "number" && Array.isArray(v.wide) && typeof v.tall === "number" && typeof v.drop === "boolean" ? v : null;
    } catch (e) { return null; }  // blocked storage or a broken entry: fit from scratch
  }
  function rememberFit() {
    try {
      for (let i = localStorage.length - 1; i >= 0; i--) {  // an older build's fits are stale
        const k = localStorage.key(i);
        if (k && k.startsWith("lab-fit:") && k.split(":")[2] !== CONFIG.build) localStorage.removeItem(k);
      }
      localStorage.setItem(fitKey(), JSON.stringify({ scale: viewState.scale, wide: [...viewState.wide], tall: viewState.tall, drop: viewState.drop }));
    } catch (e) { /* blocked storage: nothing remembered */ }
  }
  // Full fit: the figures' scale is the largest with which the page neither scrolls nor
  // overflows sideways (from one measurement, the scale that fills the room below the
  // transport; then a binary search, as a row may wrap); then their widths grow, up to
  // MAX_WIDE, into what room the rows leave at the side. Each try is one BokehJS layout, out of
  // sight (the stage area is transparent while fitting). Same page, same screen: same result.
  // A refit that is not full (a new document on screen: the takeover) keeps the scale as long
  // as the page still fits, so nothing moves when Python takes over the page built ahead of time.
  let fitting = null, fitAgain = false, fitFull = false;
  const GOOD_SCALE = 0.9;  // a heatmap of 12 tokens has room for its tick labels
  const MIN_SCALE = 0.75;  // below it, a heatmap of 12 tokens runs its tick labels together (running-sum at 0.73)
  // Binary search (from one measurement's guess) for the largest scale in [lo, 3.2] at which
  // the page fits; null if it does not fit at lo.
  async function searchScale(lo) {
    const top = $("lab-stage-area").getBoundingClientRect().top + scrollY;
    let scale = Math.max(lo, 1.45), hi = 3.2, best = null;
    if (!(await tryFit(lo, new Map())).fits) return null;
    best = lo;
    for (let i = 0; i < 6 && hi - lo > 0.03; i++) {
      const { fits, reach: [bottom, right] } = await tryFit(scale, new Map());
      if (fits) { lo = scale; best = scale; } else hi = scale;
      const high = Math.max(1, bottom - top), wide = Math.max(1, right - 16);
      let next = 0.985 * scale * Math.min((innerHeight - 6 - top) / high, (innerWidth - 18) / wide);
      if (!(next > lo && next < hi)) next = (lo + hi) / 2;   // a row wrapped: halve the gap
      next = Math.round(next * 100) / 100;
      if (Math.abs(next - best) < 0.02) break;
      scale = next;
    }
    return best;
  }
  const hasDroppable = () => !!player.doc && [...player.doc.all_models].some((m) => Array.isArray(m.css_classes) && m.css_classes.includes("lab-present-drop"));
  // One quiet line at the screen's foot when the presenter view leaves something out.
  function fitNote(dropped, tooSmall) {
    const el = $("lab-fit-note");
    el.textContent = tooSmall ? "Too small a screen for readable figures: zoom out (Ctrl −)"
      : dropped ? "Readouts left out to fit this screen" : "";
    el.title = tooSmall ? "The presenter view's figures do not fit this screen at a readable size: widen the window or zoom out."
      : dropped ? "To keep the figures readable on this screen, the presenter view leaves out the readouts beside them; the full page (p) shows them." : "";
    el.hidden = !el.textContent;
  }
  function fitPresenter(full) {
    if (full) fitFull = true;
    if (fitting) { fitAgain = true; return fitting; }
    fitting = (async () => {
      await fontsLoaded;  // measured in the font the page is drawn in
      if (mainAside) await joined.catch(() => {});  // every main view is built
      do {
        fitAgain = false;
        const fullNow = fitFull || viewState.scale === null;
        fitFull = false;
        if (!root.classList.contains("present") || viewState.settings || !window.Bokeh) {
          if (viewState.scale !== null) { viewState.scale = null; viewState.wide.clear(); viewState.tall = 1; viewState.drop = false; restyleAll(); }
          fitNote(false, false);
          continue;
        }
        if (!fullNow && !overflows(await settled())) continue;
        root.classList.add("fitting");
        const t0 = performance.now();
        // the same page, build, settings and screen fitted before: one layout, if it still fits
        const remembered = recallFit();
        if (remembered) viewState.drop = remembered.drop;
        if (remembered && (await tryFit(remembered.scale, new Map(remembered.wide), remembered.tall)).fits) {
          fitNote(viewState.drop, remembered.scale < MIN_SCALE);
          root.classList.remove("fitting");
          timings.fit = performance.now() - t0;
          continue;
        }
        // The largest scale that fits, never below MIN_SCALE (the type stays presenter-sized
        // while figures shrink: below it a figure's ticks run together). If even that does not
        // fit, the parts a page marks "lab-present-drop" are left out (said in a quiet line),
        // and only a screen too small for the figures alone goes lower.
        // First at a comfortable scale (whole page, then without the parts it may leave out),
        // then down to the smallest readable one the same way.
        let scale = null;
        for (const [lo, drop] of [[GOOD_SCALE, false], [GOOD_SCALE, true], [MIN_SCALE, false], [MIN_SCALE, true]]) {
          if (drop && !hasDroppable()) continue;
          viewState.drop = drop;
          if ((scale = await searchScale(lo)) !== null) break;
        }
        const tooSmall = scale === null;
        if (tooSmall) scale = (await searchScale(0.45)) || 0.45;
        fitNote(viewState.drop, tooSmall);
        await tryFit(scale, new Map());
        // then each row's figures wider, into the room at its side (halved back while the
        // page no longer fits: a widened row may wrap)
        let wide = player.doc ? widths() : new Map();
        for (let i = 0; i < 3 && [...wide.values()].some((w) => w > 1); i++) {
          if ((await tryFit(scale, wide)).fits) break;
          wide = new Map([...wide].map(([k, w]) => [k, i < 2 ? 1 + Math.floor((w - 1) * 50) / 100 : 1]));
        }
        // and taller, into the room left below (a row that fills the width first)
        let tall = 1;
        await tryFit(scale, wide);
        const { rows, bottom } = figureRows();
        if (rows > 0 && bottom < innerHeight - 30) {
          tall = Math.min(MAX_WIDE, 1 + 0.98 * (innerHeight - 6 - bottom) / rows);
          for (let i = 0; i < 3 && tall > 1; i++) {
            if ((await tryFit(scale, wide, tall)).fits) break;
            tall = i < 2 ? 1 + (tall - 1) / 2 : 1;
          }
        }
        await tryFit(scale, wide, Math.round(tall * 100) / 100);
        root.classList.remove("fitting");
        timings.fit = performance.now() - t0;
        rememberFit();
      } while (fitAgain);
      window.labScale = viewState.scale;
      window.labWide = Object.fromEntries(viewState.wide);
      window.labTall = viewState.tall;
    })().finally(() => {
      // only now: a fit with nothing to wait for (the settings shown) ends before this
      // promise is even stored, and had left `fitting` set for good (no fit ever again)
      fitting = null;
      window.labFitted = (window.labFitted || 0) + 1;
    });
    return fitting;
  }
  let fitTimer = null;
  function fitSoon(ms = 60, full = true) {
    clearTimeout(fitTimer);
    if (full) fitFull = true;
    fitTimer = setTimeout(() => fitPresenter(), ms);
  }
  addEventListener("resize", () => fitSoon(200));

  // Called when a document is on screen (the page built ahead of time, then the live one).
  function afterRender(doc) {
    label(doc);
    announceSoon();
    // a new document of the same page at the same settings keeps the fitted size (no jump)
    fitSoon(0, !window.labLive || ownSettings);
    postHeight();
  }

  // ---- the embed tells its host how tall it is ------------------------------------------------
  // Message: {type: "lab-height", height: <CSS px>, href: <the embedded page's link>}. The host
  // page resizes its iframe with HOST_SNIPPET (Share and README.md give it).
  const embedded = root.classList.contains("embed") && window.parent !== window;
  let lastHeight = 0;
  function postHeight() {
    if (!embedded) return;
    const h = Math.ceil(document.querySelector(".lab-main").getBoundingClientRect().height);
    if (h && h !== lastHeight) {
      lastHeight = h;
      window.parent.postMessage({ type: "lab-height", height: h, href: location.href }, "*");
    }
  }
  if (embedded && "ResizeObserver" in window) new ResizeObserver(postHeight).observe(document.querySelector(".lab-main"));
  const HOST_SNIPPET = `<script>
// Linear Attention Lab: each embedded page reports its height; size its frame to fit.
addEventListener("message", function (e) {
  var d = e.data;
  if (!d || d.type !== "lab-height" || !(d.height > 0)) return;
  document.querySelectorAll("iframe").forEach(function (f) {
    if (f.contentWindow === e.source) f.style.height = Math.ceil(d.height) + "px";
  });
});
</` + "script>";
  // The embed's height measured here: what it shows is the transport and the simulator.
  function embedHeight() {
    const area = $("lab-stage-area").getBoundingClientRect().height;
    const bar = document.querySelector(".lab-transport").getBoundingClientRect().height;
    return Math.min(4000, Math.max(320, Math.ceil(area + bar + 24)));
  }
  // Inside an embed: a link to the whole page (the lesson text, the settings, other pages).
  if (root.classList.contains("embed")) {
    const full = new URL(location.href);
    for (const k of ["embed", "view"]) full.searchParams.delete(k);
    const a = $("lab-full");
    a.href = full.href;
    a.hidden = false;
    a.addEventListener("click", () => {  // the link's t and settings as they are now
      const now = new URL(location.href);
      for (const k of ["embed", "view"]) now.searchParams.delete(k);
      a.href = now.href;
    });
  }

  // ---- print: no controls, light, the current numbers, and the link to reopen it -------------
  function printRef() {
    const link = new URL(location.href);
    for (const k of ["embed", "present", "view"]) link.searchParams.delete(k);
    $("lab-print-ref").textContent = `t = ${player.t} of ${player.tMax} · reopen this view: ${link.href}`;
  }
  function setPrint(on) {
    if (viewState.print === on) return;
    viewState.print = on;
    if (on) printRef();
    restyleAll();
  }
  // (a synthetic beforeprint, as the screenshot helper sends to repaint held figures, is not printing)
  addEventListener("beforeprint", (e) => { if (e.isTrusted) setPrint(true); });
  addEventListener("afterprint", (e) => { if (e.isTrusted) setPrint(false); });
  if (window.matchMedia) matchMedia("print").addEventListener("change", (e) => setPrint(e.matches));

  // ---- screen readers ---------------------------------------------------------------------------
  // A step is announced politely once stepping stops: t and the page's caption ("lab-caption").
  let sayTimer = null;
  function announceSoon() {
    clearTimeout(sayTimer);
    if (!player.playing) sayTimer = setTimeout(announce, 400);
  }
  function captionText() {
    for (const [model, attrs] of player.groups) {
      if (!(model.css_classes || []).includes("lab-caption")) continue;
      const a = attrs.find(([attr]) => attr === "text");
      const html = a && player.frames.data[a[1]][player.t];
      if (html == null) continue;
      const tpl = document.createElement("template");
      tpl.innerHTML = String(html);  // parsed inert (a template runs nothing), read as text
      tpl.content.querySelectorAll("[aria-hidden='true']").forEach((el) => el.remove());
      return tpl.content.textContent.replace(/\s+/g, " ").trim();
    }
    return "";
  }
  function announce() {
    const text = `t = ${player.t} of ${player.tMax}. ${captionText()}`.trim();
    const say = $("lab-say");
    if (say.textContent !== text) say.textContent = text;
  }
  player.onChange(() => { announceSoon(); if (viewState.print) printRef(); });

  // Panel's widgets name themselves poorly: sliders' handles, spin buttons and checkboxes get
  // no accessible name, toggle groups no state. Named here from the models' own labels.
  function textOf(model) {
    const t = model && (model.title || model.label || model.text || "");
    const tpl = document.createElement("template");
    tpl.innerHTML = String(t);
    return tpl.content.textContent.replace(/[:\s]+$/, "").trim();
  }
  function label(doc) {
    if (!window.labViewOf) return;
    const parents = new Map();
    for (const m of doc.all_models) for (const k of (m.children && Array.isArray(m.children) ? m.children : [])) if (k && typeof k === "object") parents.set(k, m);
    const nameOf = (m) => {  // its title, else a label just before it (a group's <label>)
      let name = textOf(m);
      const parent = parents.get(m);
      if (!name && parent) {
        const i = parent.children.indexOf(m);
        for (let j = i - 1; j >= 0 && !name; j--) name = textOf(parent.children[j]);
      }
      return name.split(":")[0].trim();
    };
    for (const m of doc.all_models) {
      if (!("disabled" in m) || !("title" in m || "labels" in m || "label" in m)) continue;
      const view = window.labViewOf(m);
      const sr = view && (view.shadow_el || view.el);
      if (!sr) continue;
      const name = nameOf(m);
      const setName = (el, text) => { if (el && text && el.getAttribute("aria-label") !== text) el.setAttribute("aria-label", text); };
      sr.querySelectorAll(".noUi-handle").forEach((el) => setName(el, name));
      setName(sr.querySelector(".bk-spin-btn-up"), `Increase ${name}`);
      setName(sr.querySelector(".bk-spin-btn-down"), `Decrease ${name}`);
      if (m.type === "Checkbox") setName(sr.querySelector("input[type=checkbox]"), textOf(m));
      const group = sr.querySelector(".bk-btn-group");
      if (group && Array.isArray(m.labels)) {
        group.setAttribute("role", "group");
        setName(group, name);
        group.querySelectorAll(".bk-btn").forEach((b) => b.setAttribute("aria-pressed", String(b.classList.contains("bk-active"))));
      }
      // Choices.js marks chosen items aria-selected without a role that allows it
      sr.querySelectorAll(".choices__list--multiple .choices__item[aria-selected]:not([role])").forEach((el) => el.removeAttribute("aria-selected"));
    }
  }
  let labelTimer = null;
  const labelSoon = () => {
    clearTimeout(labelTimer);
    labelTimer = setTimeout(() => { if (player.doc) label(player.doc); postHeight(); }, 120);
  };
  for (const type of ["click", "keyup", "focusin"]) document.addEventListener(type, labelSoon, true);
  const refresh = player.refresh.bind(player);
  player.refresh = () => { refresh(); labelSoon(); };  // new settings: widgets may have re-rendered

  // ---- the worked example one click from the first screen ------------------------------------
  // A page's link to its own settings (<a class="lab-settings-link" href="?preset=...">): with
  // Python running it applies them in place; before, it opens the page with them.
  document.addEventListener("click", (event) => {
    const a = event.composedPath().find((el) => el.classList && el.classList.contains("lab-settings-link"));
    if (!a) return;
    const wanted = new URLSearchParams(a.getAttribute("href").replace(/^[^?]*\?/, ""));
    event.preventDefault();
    if (window.labPy && window.labPy.apply) {
      const notes = window.labPy.apply(wanted.toString());
      if (notes) notice(String(notes));
      player.reset();
      return;
    }
    const url = new URL(location.href);
    for (const k of [...url.searchParams.keys()]) if (!isShellKey(k)) url.searchParams.delete(k);
    for (const [k, v] of wanted) url.searchParams.set(k, v);
    url.searchParams.set("t", "0");
    location.assign(url.href);
  });

  // ---- keyboard: each keypress does one thing ----------------------------------------------
  // A focused control keeps the keys it uses itself: text fields and lists every key, sliders
  // and radio groups the arrows, Home/End, Page keys and Space, buttons Space and Enter.
  const SLIDER_KEYS = /^(ArrowLeft|ArrowRight|ArrowUp|ArrowDown|Home|End|PageUp|PageDown| )$/;
  function ownedByControl(event) {
    const path = event.composedPath ? event.composedPath() : [event.target];
    for (const el of path) {
      if (!el || el.nodeType !== 1) continue;
      const tag = el.tagName, type = (el.getAttribute("type") || "").toLowerCase(), role = el.getAttribute("role") || "";
      if (el.isContentEditable || tag === "TEXTAREA" || tag === "SELECT" ||
          (tag === "INPUT" && !["range", "radio", "checkbox", "button", "submit"].includes(type))) return true;
      if ((tag === "INPUT" && ["range", "radio"].includes(type)) || /^(slider|radio|radiogroup|spinbutton|tab|listbox|option)$/.test(role) ||
          (el.classList && el.classList.contains("noUi-handle"))) return SLIDER_KEYS.test(event.key);
      if (tag === "BUTTON" || tag === "A" || tag === "SUMMARY" || role === "button" || (tag === "INPUT" && ["checkbox", "button", "submit"].includes(type))) {
        return event.key === " " || event.key === "Enter";
      }
    }
    return false;
  }
  document.addEventListener("keydown", (event) => {
    if (event.ctrlKey || event.metaKey || event.altKey || event.repeat && event.key === " " || ownedByControl(event)) return;
    if (document.querySelector("dialog[open]") && event.key !== "?") return;
    const actions = {
      ArrowRight: () => player.step(), n: () => player.step(), ArrowLeft: () => player.back(),
      " ": () => player.toggle(), r: () => player.reset(), "]": () => player.jump(1), "[": () => player.jump(-1),
      f: toggleFullscreen, p: () => setPresent(!root.classList.contains("present")),
      t: () => setTheme(root.dataset.theme === "dark" ? "light" : "dark"),
      l: () => root.classList.toggle("hide-text"),
      "?": () => { const dlg = $("dlg-help"); if (dlg.open) dlg.close(); else dlg.showModal(); },
    };
    const action = actions[event.key];
    if (!action) return;
    const stepping = ["ArrowRight", "n", "ArrowLeft", " ", "r", "]", "["].includes(event.key);
    if (stepping && tp.step.disabled) return;  // nothing to step yet
    action();
    event.preventDefault();
  });

  // ---- offline ------------------------------------------------------------------------------
  // "Saved for offline use" once this build's worker keeps every file (it says so: sw.js): a
  // quiet line for a few seconds, and the same in the footer and the help for good.
  function offlineSaved(message) {
    if (!message || message.type !== "lab-saved" || message.build !== CONFIG.build || !message.saved || window.labOffline) return;
    window.labOffline = true;
    for (const id of ["lab-offline-state", "lab-offline-help"]) $(id).textContent = "Saved for offline use: this browser opens and runs the Lab with no network.";
    const line = $("lab-offline");
    line.hidden = false;
    setTimeout(() => { line.hidden = true; }, 8000);
  }
  function registerServiceWorker() {
    if (!("serviceWorker" in navigator) || !window.isSecureContext) return;
    navigator.serviceWorker.addEventListener("message", (e) => offlineSaved(e.data));
    navigator.serviceWorker.register("sw.js").then((reg) => {
      const ask = (worker) => worker && worker.postMessage({ type: "lab-saved?" });
      ask(reg.active);  // a visit after the first: already kept?
      if (!reg.active) navigator.serviceWorker.ready.then((r) => ask(r.active));
      const offer = () => {
        if (!reg.waiting || !navigator.serviceWorker.controller) return;
        const bar = document.createElement("div");
        bar.className = "lab-update";
        bar.setAttribute("role", "status");
        bar.textContent = "A new version of the Lab is available. ";
        const b = document.createElement("button");
        b.type = "button";
        b.textContent = "Reload";
        b.onclick = () => {
          reg.waiting.postMessage("activate");
          navigator.serviceWorker.addEventListener("controllerchange", () => location.reload());
        };
        bar.append(b);
        document.body.append(bar);
      };
      offer();
      reg.addEventListener("updatefound", () => {
        reg.installing.addEventListener("statechange", offer);
      });
    }).catch((e) => console.debug("service worker not registered", e));
  }

  // ---- formulas (typeset once the plots are on screen, before Python) ---------------------------
  // KaTeX (style sheet, script, fonts) is fetched and run after the first plot: the formulas
  // are in the lesson text below the simulator, and typesetting them delayed it.
  function typeset() {
    const load = (el, url) => {  // resolves once the element's file has loaded
      const loaded = new Promise((resolve, reject) => {
        el.onload = resolve;
        el.onerror = () => reject(new Error(`${url} did not load`));
      });
      document.head.append(el);
      return loaded;
    };
    const style = Object.assign(document.createElement("link"), { rel: "stylesheet", href: "static/katex/katex.min.css" });
    const scripts = ["static/katex/katex.min.js", "static/katex/contrib/auto-render.min.js"].map((src) =>
      load(Object.assign(document.createElement("script"), { src, async: false }), src));  // run in this order
    return Promise.all([load(style, "static/katex/katex.min.css"), ...scripts]).then(renderMath)
      .catch((err) => console.warn("formulas:", err));
  }
  function renderMath() {
    if (window.renderMathInElement) {
      document.querySelectorAll(".lab-text, .lab-intro").forEach((el) => window.renderMathInElement(el, {
        delimiters: [
          { left: "\\[", right: "\\]", display: true },
          { left: "\\(", right: "\\)", display: false },
          { left: "$$", right: "$$", display: true },
        ],
        throwOnError: false,
      }));
    }
  }

  // The rest of the page's scripts (BokehJS, Panel) run after this one.
  // Deferred scripts run while readyState is already "interactive"; DOMContentLoaded fires
  // once all of them (this one first) have run.
  const pageScripts = new Promise((resolve) => {
    if (document.readyState === "complete") resolve();
    else document.addEventListener("DOMContentLoaded", resolve, { once: true });
  });
  // The page built ahead of time first: on two cores, Pyodide's start (compiling 9 MB of
  // WebAssembly, unpacking the standard library) would otherwise share the processor with
  // BokehJS drawing the first plot. Then the parts set aside join (joinRest), and Python and
  // the formulas start.
  pageScripts.then(showPrerendered)
    .then(() => joined)
    .catch((err) => console.error("first paint:", err))
    .then(() => { typeset(); return boot(); });
})();
