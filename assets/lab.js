// The page shell: boots Pyodide with a staged progress display, runs the page's entry script,
// and owns the keyboard, theme, presenter view, Share, CSV and the offline service worker.
// Python side: ui/app.py (window.labPy holds its hooks once the page is live).
"use strict";

(function () {
  const CONFIG = JSON.parse(document.getElementById("lab-config").textContent);
  const root = document.documentElement;
  const $ = (id) => document.getElementById(id);
  const MB = (n) => (n / 1e6).toFixed(1);
  const timings = (window.labTimings = { start: performance.now() });

  // ---- progress ---------------------------------------------------------------------------
  let stageName = "";
  function stage(name, label, figures, fraction) {
    stageName = name;
    $("lab-stage").textContent = label;
    $("lab-figures").textContent = figures || "";
    if (fraction !== undefined) $("lab-bar").style.width = `${Math.round(100 * Math.min(1, fraction))}%`;
    document.querySelectorAll("#lab-status [data-stage]").forEach((li) => {
      li.classList.toggle("active", li.dataset.stage === name);
    });
  }

  function fail(what, todo, detail) {
    document.body.classList.remove("lab-loading");
    document.body.classList.add("lab-failed");
    $("lab-status").hidden = true;
    const box = $("lab-error");
    box.hidden = false;
    box.innerHTML = "";
    const h = document.createElement("h2");
    h.textContent = what;
    const p = document.createElement("p");
    p.textContent = todo;
    box.append(h, p);
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
      if (url.includes("/pyodide/") && !counted.failed) counted.failed = url.split("/").pop();
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
    stage("runtime", "Downloading Python runtime", `${MB(counted.core)} / ${MB(total)} MB`, 0.45 * counted.core / total);
  }
  function progressPackages() {
    const n = CONFIG.sizes.count;
    stage("packages", "Installing packages", `${Math.min(counted.wheelFiles, n)} / ${n} · ${MB(counted.wheels)} / ${MB(CONFIG.sizes.wheels)} MB`,
      0.45 + 0.35 * counted.wheelFiles / n);
  }

  // ---- boot ---------------------------------------------------------------------------------
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
      stage("start", "Starting the simulator", "", 0.85);
      await new Promise((r) => requestAnimationFrame(() => setTimeout(r, 0)));  // paint the stage first
      window.labShell = shellHooks;
      await pyodide.runPythonAsync(`
import pyodide.ffi
if not hasattr(pyodide.ffi, "jsnull"):
    # Panel 1.9 targets Pyodide 0.29; in 0.27 a JS null already arrives as None.
    pyodide.ffi.jsnull = type("JsNull", (), {})()
`);
      await pyodide.runPythonAsync(CONFIG.code + "\nimport ui.app\nawait ui.app.READY\n");
      window.labPyodide = pyodide;
      live();
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

  function live() {
    timings.live = performance.now();
    stage("done", "Ready", "", 1);
    document.body.classList.remove("lab-loading");
    document.body.classList.add("lab-live");
    $("lab-status").hidden = true;
    $("btn-csv").disabled = false;
    window.labLive = true;
    try {
      pauseUnseenFigures(window.labPy.figures());
    } catch (err) {  // an optimisation only: every figure then keeps painting
      console.warn("Figures out of view keep painting:", err);
    }
    registerServiceWorker();
  }

  // ---- figures out of sight are not repainted ---------------------------------------------
  // BokehJS repaints every changed figure on every step, on screen or not. A figure scrolled
  // out of view (or hidden in the presenter view) holds its repaints (Bokeh's `hold_render`);
  // it is repainted, as it is now, as soon as it comes within 200 px of the view, and before
  // the page is printed. (A view's pause() would not stay: BokehJS unpauses every figure each
  // time it lays the page out.)
  function pauseUnseenFigures(ids) {
    if (!("IntersectionObserver" in window) || !window.Bokeh) return;
    const views = new Map();
    for (const root of Bokeh.index) {
      for (const id of ids) {
        const model = root.model.document.get_model_by_id(id);
        const view = model != null ? root.owner.find_one(model) : null;
        if (view != null) views.set(view.el, view);
      }
    }
    const show = (view, seen) => {
      if (view.model.hold_render === seen) view.model.hold_render = !seen;
    };
    const observer = new IntersectionObserver((entries) => {
      for (const entry of entries) {
        const view = views.get(entry.target);
        if (view != null) show(view, entry.isIntersecting);
      }
    }, { rootMargin: "200px" });
    for (const el of views.keys()) observer.observe(el);
    window.addEventListener("beforeprint", () => {
      for (const view of views.values()) {
        if (view.model.hold_render) {
          show(view, true);
          view.repaint();  // now: printing does not wait for the next animation frame
        }
      }
    });
  }

  // ---- hooks Python calls -----------------------------------------------------------------
  const shellHooks = {
    theme: () => root.dataset.theme,
    setQuery: (query) => {
      const url = `${location.pathname}?${query}${location.hash}`;
      if (url !== location.pathname + location.search + location.hash) history.replaceState(null, "", url);
    },
  };

  // ---- view controls ----------------------------------------------------------------------
  function setTheme(name) {
    root.dataset.theme = name;
    try { localStorage.setItem("lab-theme", name); } catch (e) { /* blocked storage */ }
    if (window.labPy) window.labPy.theme(name);
  }
  function setPresent(on) {
    root.classList.toggle("present", on);
    $("btn-present").setAttribute("aria-pressed", String(on));
    if (window.labPy) window.labPy.present(on);
    else {
      const q = new URLSearchParams(location.search);
      if (on) q.set("present", "1"); else q.delete("present");
      history.replaceState(null, "", `${location.pathname}?${q}`);
    }
  }
  function toggleFullscreen() {
    if (document.fullscreenElement) document.exitFullscreen();
    else if (document.documentElement.requestFullscreen) document.documentElement.requestFullscreen().catch(() => {});
  }
  function downloadCsv() {
    if (!window.labPy) return;
    const text = window.labPy.csv();
    const blob = new Blob([text], { type: "text/csv" });
    const a = document.createElement("a");
    a.href = URL.createObjectURL(blob);
    const t = new URLSearchParams(location.search).get("t") || "0";
    a.download = `${CONFIG.page}-t${t}.csv`;
    document.body.append(a);
    a.click();
    a.remove();
    setTimeout(() => URL.revokeObjectURL(a.href), 1000);
  }
  function openShare() {
    const link = new URL(location.href);
    link.searchParams.delete("embed");
    $("share-link").value = link.href;
    const embed = new URL(location.href);
    embed.searchParams.set("embed", "1");
    $("share-embed").value =
      `<iframe src="${embed.href}" title="${CONFIG.title}" width="100%" height="720" style="border:0" loading="lazy" allow="fullscreen"></iframe>`;
    $("dlg-share").showModal();
  }

  // Follow the system's light/dark setting until the reader picks one here.
  if (window.matchMedia) {
    matchMedia("(prefers-color-scheme: dark)").addEventListener("change", (e) => {
      let saved = null;
      try { saved = localStorage.getItem("lab-theme"); } catch (err) { /* blocked storage */ }
      if (!saved) {
        root.dataset.theme = e.matches ? "dark" : "light";
        if (window.labPy) window.labPy.theme(root.dataset.theme);
      }
    });
  }

  $("btn-theme").onclick = () => setTheme(root.dataset.theme === "dark" ? "light" : "dark");
  $("btn-present").onclick = () => setPresent(!root.classList.contains("present"));
  $("btn-present").setAttribute("aria-pressed", String(root.classList.contains("present")));
  $("btn-csv").onclick = downloadCsv;
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

  // ---- keyboard -----------------------------------------------------------------------------
  function typing(event) {
    const path = event.composedPath ? event.composedPath() : [event.target];
    return path.some((el) => el && el.nodeType === 1 &&
      (/^(INPUT|TEXTAREA|SELECT)$/.test(el.tagName) || el.isContentEditable));
  }
  document.addEventListener("keydown", (event) => {
    if (event.ctrlKey || event.metaKey || event.altKey || typing(event)) return;
    if (document.querySelector("dialog[open]") && event.key !== "?") return;
    const actions = {
      ArrowRight: "step", n: "step", ArrowLeft: "back", " ": "play", r: "reset",
    };
    const action = actions[event.key];
    if (action) {
      if (window.labPy) window.labPy.key(action);
      event.preventDefault();
    } else if (event.key === "f") toggleFullscreen();
    else if (event.key === "p") setPresent(!root.classList.contains("present"));
    else if (event.key === "t") setTheme(root.dataset.theme === "dark" ? "light" : "dark");
    else if (event.key === "?") {
      const dlg = $("dlg-help");
      if (dlg.open) dlg.close(); else dlg.showModal();
    } else return;
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
  pageScripts.then(renderMath);
  boot();
})();
