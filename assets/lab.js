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
  const SHELL_KEYS = ["t", "embed", "present", "theme", "view"];

  // ---- the link -----------------------------------------------------------------------------
  // The settings part belongs to Python once it is live (setSettings); t to the player; the
  // view flags to the shell. Before Python, the link's settings are kept exactly as they came.
  const query = new URLSearchParams(location.search);
  const linkT = query.get("t");
  // Does the link ask for settings other than the page built ahead of time shows?
  const defaults = new URLSearchParams(CONFIG.prerender.query);
  const ownSettings = [...query.keys()].some((k) => !SHELL_KEYS.includes(k) && query.get(k) !== defaults.get(k));
  let settingsQuery = null;  // from Python
  let urlTimer = null;

  function writeUrl() {
    urlTimer = null;
    const q = new URLSearchParams(settingsQuery !== null ? settingsQuery : "");
    if (settingsQuery === null) for (const [k, v] of query) if (!SHELL_KEYS.includes(k)) q.set(k, v);
    if (!(ownSettings && !window.labLive)) q.set("t", String(player.t));
    else if (linkT !== null) q.set("t", linkT);
    for (const k of ["embed", "present", "theme", "view"]) {
      const v = k === "present" ? (root.classList.contains("present") ? "1" : null) : query.get(k);
      if (v !== null) q.set(k, v);
    }
    if (tp.speed.value !== "8") q.set("speed", tp.speed.value);  // a presenter's pace travels
    const url = `${location.pathname}?${q.toString().replace(/%2C/g, ",")}${location.hash}`;
    if (url !== location.pathname + location.search + location.hash) history.replaceState(null, "", url);
  }
  // While playing, the link follows at most every 250 ms (a history update costs about 2 ms).
  function urlLater() {
    if (!player.playing) { clearTimeout(urlTimer); writeUrl(); }
    else if (urlTimer === null) urlTimer = setTimeout(writeUrl, 250);
  }

  // ---- notices (plain text only: nothing from a link or a file is ever read as markup) ------
  function notice(text) {
    const box = $("lab-notice");
    $("lab-notice-text").textContent = text || "";
    box.hidden = !text;
  }
  $("lab-notice-close").onclick = () => notice("");

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

  // ---- the page built ahead of time: on screen and stepping before Python --------------------
  async function showPrerendered() {
    if (!window.Bokeh) return;
    const doc = JSON.parse($("lab-doc").textContent);
    const views = await window.Bokeh.embed.embed_item(doc);
    const jsdoc = views.roots[0].model.document;
    window.labRestyle(jsdoc, root.dataset.theme, root.classList.contains("present"));
    player.attach(jsdoc);
    if (linkT !== null && !ownSettings) seekFromLink(player.tMax);
    window.labPrerendered = true;
    document.body.classList.add("lab-ready");
    if (ownSettings) document.body.classList.add("lab-waiting");
    else enableTransport(true);
    watchFigures(jsdoc);
    // The plots are on screen once the frame after them has been painted.
    requestAnimationFrame(() => requestAnimationFrame(() => { timings.firstPlot = performance.now(); }));
  }

  // The link's t, checked against what this run reaches; a bad one is named.
  function seekFromLink(tMax) {
    const n = Number(linkT);
    if (!/^\d{1,9}$/.test(linkT.trim()) || n > tMax) {
      notice(`Ignored t=${String(linkT).slice(0, 40)}: expected a whole number from 0 to ${tMax}.`);
      return;
    }
    player.seek(n);
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
  function takeover(jsdoc) {
    const live = $("lab-app-live");
    const t = ownSettings || !window.labPrerendered ? null : player.t;
    window.labRestyle(jsdoc, root.dataset.theme, root.classList.contains("present"));
    player.takeover(jsdoc);
    if (t === null && linkT !== null) seekFromLink(player.tMax);
    const old = $("lab-app");
    for (const view of [...(window.Bokeh.index || [])]) {
      if (view.el && old.contains(view.el)) view.remove();  // frees the old document's views
    }
    old.remove();
    live.id = "lab-app";
    live.removeAttribute("aria-hidden");
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
      }, { rootMargin: "200px" });
      for (const rootView of window.Bokeh.index) {
        if (rootView.model.document !== jsdoc) continue;
        for (const model of jsdoc.all_models) {
          if (!("renderers" in model && "toolbar" in model)) continue;
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
  const linkSpeed = Number(query.get("speed"));
  if (query.get("speed") !== null && linkSpeed >= 0.5 && linkSpeed <= 60) {
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
    setSettings: (q) => { settingsQuery = String(q); writeUrl(); },
  };

  // ---- view controls ----------------------------------------------------------------------
  function restyleAll() {
    if (!window.Bokeh) return;
    const docs = new Set([...window.Bokeh.index].map((v) => v.model.document));
    for (const doc of docs) window.labRestyle(doc, root.dataset.theme, root.classList.contains("present"));
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
    frame.setAttribute("height", String(Math.min(2400, Math.max(480, Math.ceil(document.documentElement.scrollHeight)))));
    frame.setAttribute("style", "border:0");
    frame.setAttribute("loading", "lazy");
    frame.setAttribute("allow", "fullscreen");
    $("share-embed").value = frame.outerHTML;
    $("dlg-share").showModal();
  }

  // Follow the system's light/dark setting until the reader picks one here.
  if (window.matchMedia) {
    matchMedia("(prefers-color-scheme: dark)").addEventListener("change", (e) => {
      let saved = null;
      try { saved = localStorage.getItem("lab-theme"); } catch (err) { /* blocked storage */ }
      if (!saved && !query.get("theme")) {
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
  function registerServiceWorker() {
    if (!("serviceWorker" in navigator) || !window.isSecureContext) return;
    navigator.serviceWorker.register("sw.js").then((reg) => {
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

  // ---- formulas (first paint, before Python) ------------------------------------------------
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

  // The rest of the page's scripts (KaTeX, BokehJS, Panel) run after this one.
  // Deferred scripts run while readyState is already "interactive"; DOMContentLoaded fires
  // once all of them (this one first) have run.
  const pageScripts = new Promise((resolve) => {
    if (document.readyState === "complete") resolve();
    else document.addEventListener("DOMContentLoaded", resolve, { once: true });
  });
  // The page built ahead of time first: on two cores, Pyodide's start (compiling 9 MB of
  // WebAssembly, unpacking the standard library) would otherwise share the processor with
  // BokehJS drawing the first plot. Python starts once that frame is painted.
  pageScripts.then(renderMath).then(showPrerendered)
    .catch((err) => console.error("first paint:", err))
    .then(() => new Promise((r) => requestAnimationFrame(() => setTimeout(r, 0))))
    .then(boot);
})();
