// Start-up progress: the staged line above the figures (what Python is doing, with bytes and
// wheels counted as they arrive), and the box that says what failed and what still works.
import { $, pageConfig } from "./config.js";
import { state } from "./state.js";

const MB = (n) => (n / 1e6).toFixed(1);

export function stage(name, label, figures, fraction) {
  state.stage = name;
  $("lab-stage").textContent = label;
  $("lab-figures").textContent = figures || "";
  if (fraction !== undefined) $("lab-bar").style.width = `${Math.round(100 * Math.min(1, fraction))}%`;
}
export const waitingFor = () => state.ownSettings
  ? "This link's own settings are shown once Python has started: "
  : "The plots work now; the settings respond once Python has started: ";

// Python could not start. With the page built ahead of time on screen, say what still works.
export function fail(what, todo, detail) {
  if (state.failed) return;
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
  if ($("lab-doc") && !state.ownSettings) {
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
  state.failed = what;
}

export class LoadError extends Error {
  constructor(message, detail) { super(message); this.detail = detail; }
}

// Bytes and finished wheels as they arrive (countDownloads).
export const counted = { core: 0, wheels: 0, wheelFiles: 0, failed: null };

export function progressRuntime() {
  const total = pageConfig().sizes.core;
  stage("runtime", `${waitingFor()}downloading the Python runtime`, `${MB(counted.core)} / ${MB(total)} MB`, 0.45 * counted.core / total);
}
export function progressPackages() {
  const sizes = pageConfig().sizes, n = sizes.count;
  stage("packages", `${waitingFor()}installing packages`, `${Math.min(counted.wheelFiles, n)} / ${n} · ${MB(counted.wheels)} / ${MB(sizes.wheels)} MB`,
    0.45 + 0.35 * counted.wheelFiles / n);
}

// Count bytes and finished wheels as they arrive, without changing what Pyodide receives.
export function countDownloads() {
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
        if (state.stage === "runtime") progressRuntime();
        controller.enqueue(value);
      },
      cancel(reason) { reader.cancel(reason); },
    });
    return new Response(stream, { status: response.status, statusText: response.statusText, headers: response.headers });
  };
}
