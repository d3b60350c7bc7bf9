// The reader's own config.json on the zoo page: pasted or chosen as a file, it joins the table as
// a row of theirs, made by Python with the function the build made every other row with
// (ui/zoo.py). Python starts here only then, in assets/zoo-worker.js (Pyodide, numpy and the
// project's wheel: sitebuild/zoo.py worker_config, in the page's config). What is refused before
// Python starts: nothing to read, more than sim's limit (8 MiB), text that is not JSON. A file
// Python cannot read gives one line naming what is wrong; the rows and the text stay.
const $ = (id) => document.getElementById(id);
const MB = (n) => `${(n / 1e6).toFixed(0)} MB`;
const LIMIT = (n) => `${(n / 2 ** 20).toFixed(0)} MiB`;

// {addRow(tr): the table takes a row and says whether the view shows it, config: worker_config}
export function ownConfig({ addRow, config }) {
  const box = $("zoo-config"), file = $("zoo-file"), add = $("zoo-config-add");
  const say = (message, bad = false) => {
    $("zoo-config-say").textContent = message;
    $("zoo-config-say").classList.toggle("zoo-bad", bad);
    box.setAttribute("aria-invalid", String(bad));
  };
  let worker = null;
  let ready = false;
  let asked = 0;
  const pending = new Map();  // id -> resolve
  const seen = new Map();  // the text of each file added -> its row's id (the same file twice is one row)

  function startPython() {
    const at = (path) => new URL(path, location.href).href;
    const names = config.messages;
    worker = new Worker(at("assets/zoo-worker.js"));
    ready = false;
    return new Promise((resolve, reject) => {
      const fail = (message) => {
        worker.terminate();
        worker = null;  // the next Add starts it again
        for (const done of pending.values()) done({ error: message });
        pending.clear();
        reject(new Error(message));
      };
      worker.onerror = (event) => fail(`its script did not run (${event.message || "blocked or missing"})`);
      worker.onmessage = ({ data }) => {
        if (data.type === names.ready) { ready = true; resolve(); }
        else if (data.type === names.failed) fail(data.message);
        else if (data.type === names.row && pending.has(data.id)) {
          pending.get(data.id)(JSON.parse(data.value));
          pending.delete(data.id);
        }
      };
      worker.postMessage({ type: names.start, names, config: {
        fetchScript: at("assets/py-fetch.js"), zstdScript: at("assets/zstd.js"), pyodideScript: at("pyodide/pyodide.js"), indexURL: at("pyodide/"),
        wheelURL: at(`pyodide/${config.wheel}`), packages: config.packages, packed: config.packed,
        module: config.module, function: config.function,
      } });
    });
  }

  async function rowOf(input) {
    if (!worker) {
      say(`Starting Python to work out your row (about ${MB(config.download_bytes)} the first time, kept for offline use)…`);
      await startPython();
    } else if (!ready) {
      say("Python is still starting…");
    }
    const id = ++asked;
    const answer = new Promise((resolve) => pending.set(id, resolve));
    worker.postMessage({ type: config.messages.row, id, key: `yours-${id}`, ...input });
    return answer;
  }

  // text (a paste) or bytes (a file), refused early where Python would refuse it anyway
  function early(text, size) {
    if (size > config.max_bytes) {
      return `config.json: ${size.toLocaleString("en")} bytes is too long; accepted: at most ${config.max_bytes.toLocaleString("en")} bytes (${LIMIT(config.max_bytes)})`;
    }
    const body = text.replace(/^\uFEFF/, "").trim();
    if (!body) return "config.json: the file is empty; expected a JSON object with model_type and the model's sizes";
    try {
      JSON.parse(body);
    } catch (err) {
      return `config.json: not valid JSON (${String(err.message).slice(0, 160)})`;
    }
    return null;
  }

  async function addOwn(input, text) {
    if (seen.has(text)) {
      const row = document.getElementById(`m-${seen.get(text)}`);
      say(`This config.json is in the table already, as ${row ? row.querySelector("a.zoo-open").textContent : "a row of yours"}.`);
      return;
    }
    add.disabled = file.disabled = true;
    add.setAttribute("aria-busy", "true");
    try {
      const got = await rowOf(input);
      if (got.error) return say(`Not added: ${got.error}`, true);
      const template = document.createElement("template");
      template.innerHTML = got.html;
      const tr = template.content.querySelector("tr");
      tr.classList.add("zoo-yours");
      seen.set(text, got.row.id);
      const shown = addRow(tr);
      say(`Added ${got.row.name} to the table as a row of yours` + (shown ? "."
        : ": the filters above hide it now (clear the search or tick its kind of layers)."));
      if (shown) tr.scrollIntoView({ block: "nearest" });
    } catch (err) {
      say(`Python could not start, so nothing was added: ${String(err.message || err).slice(0, 200)}. The table is as it was; try again.`, true);
    } finally {
      add.disabled = file.disabled = false;
      add.removeAttribute("aria-busy");
    }
  }

  add.addEventListener("click", () => {
    const text = box.value;
    const problem = early(text, new TextEncoder().encode(text).length);
    if (problem) return say(`Not added: ${problem}`, true);
    addOwn({ text }, text);
  });
  file.addEventListener("change", async () => {
    const chosen = file.files && file.files[0];
    if (!chosen) return;
    file.value = "";  // the same file chosen again is a new choice
    if (chosen.size > config.max_bytes) return say(`Not added: ${chosen.name}: ${early("x", chosen.size)}`, true);
    const bytes = new Uint8Array(await chosen.arrayBuffer());
    const text = new TextDecoder().decode(bytes);  // for the early checks only: Python reads the bytes
    const problem = early(text, bytes.length);
    if (problem) return say(`Not added: ${chosen.name}: ${problem}`, true);
    addOwn({ bytes, name: chosen.name.replace(/(\.config)?\.json$/i, "") }, text);
  });
}
