// The zoo page (zoo.html): the table the build wrote, sorted and filtered here, with a bar per
// row for the cache at the chosen length, the presenter view's two scenes (keys 1 and 2, 0 for
// all columns) and the reader's own config.json, which joins the table (zoo-paste.js: Python
// starts then, and only then).
// The state lives in the link (?q=, kinds=, sort=, dir=, len=, scene=, where=), so a view can be
// shared; embed=1 and present=1 are the shell's flags (boot-early.js sets their classes).
import { COLUMNS, KINDS, LENGTHS, SCENES, barWidths, parseAmount, passes, sortRows, valueOf } from "./js/zoo-table.js";
import { postHeight, settleHeight } from "./js/embeds.js";
import { ownConfig } from "./zoo-paste.js";

const $ = (id) => document.getElementById(id);
const root = document.documentElement;
const body = document.querySelector("#zoo-table tbody");
const all = [...body.rows];  // the build's rows, then the reader's own as they join
const config = JSON.parse($("lab-config").textContent);

const view = { q: "", kinds: [...KINDS], sort: [["name", 1]], len: "1M", scene: "", where: null };

function readLink() {
  const p = new URLSearchParams(location.search);
  if (p.has("q")) view.q = p.get("q");
  if (p.has("kinds")) view.kinds = p.get("kinds").split(",").filter((k) => KINDS.includes(k));
  if (COLUMNS[p.get("sort")] || /^cache(32K|128K|1M)$/.test(p.get("sort") || "")) view.sort = [[p.get("sort"), p.get("dir") === "desc" ? -1 : 1]];
  if (LENGTHS.includes(p.get("len"))) view.len = p.get("len");
  if (p.get("scene") in SCENES) view.scene = p.get("scene");
  const w = /^(\w+):(min|max):(.+)$/.exec(p.get("where") || "");
  if (w && COLUMNS[w[1]]) view.where = { key: w[1], op: w[2], text: w[3], value: parseAmount(w[3]) };
}

function writeLink() {
  const p = new URLSearchParams(location.search);
  const set = (k, v, dflt) => (v === dflt || v === "" ? p.delete(k) : p.set(k, v));
  set("q", view.q, "");
  set("kinds", view.kinds.join(","), KINDS.join(","));
  const [key, dir] = view.sort[0];
  set("sort", view.scene ? "" : key, "name");
  set("dir", view.scene || key === "name" && dir === 1 ? "" : dir < 0 ? "desc" : "asc", "");
  set("len", view.len, "1M");
  set("scene", view.scene, "");
  set("where", view.where && view.where.text ? `${view.where.key}:${view.where.op}:${view.where.text}` : "", "");
  const query = p.toString().replace(/%2C/g, ",").replace(/%3A/g, ":");
  history.replaceState(null, "", query ? `?${query}` : location.pathname);
}

function render() {
  const keys = view.scene ? SCENES[view.scene].sort : view.sort;
  const shown = sortRows(all.filter((r) => passes(r, view)), keys);
  for (const r of all) r.hidden = !shown.includes(r);
  // sorted by kind (scene 1): a rule above the first row of each kind
  shown.forEach((r, i) => r.classList.toggle("zoo-group", keys[0][0] === "class" && i > 0
    && valueOf(r, "class") !== valueOf(shown[i - 1], "class")));
  body.append(...shown, ...all.filter((r) => r.hidden));
  barWidths(shown, view.len).forEach(([ideal, vllm], i) => {
    const bar = shown[i].querySelector(".zoo-bar");
    bar.children[0].style.width = `${ideal}%`;
    bar.children[1].style.width = `${vllm}%`;
  });
  for (const a of body.querySelectorAll("a.zoo-open")) {
    a.href = a.getAttribute("href").replace(/([?&]t=)\d+/, `$1${{ "32K": 5, "128K": 7, "1M": 10 }[view.len]}`);
  }
  $("zoo-bar-head").textContent = `Cache at ${view.len}`;
  const yours = all.filter((r) => r.dataset.source === "yours").length;
  $("zoo-count").textContent = (shown.length === all.length ? `${all.length} models`
    : `${shown.length} of ${all.length} models shown`) + (yours ? ` (${yours} of yours)` : "");
  for (const th of document.querySelectorAll("#zoo-table thead th[data-col]")) {
    const [key, dir] = keys[0];
    if (th.dataset.col === key) th.setAttribute("aria-sort", dir > 0 ? "ascending" : "descending");
    else th.removeAttribute("aria-sort");
  }
  $("zoo-sort").value = keys[0][0];  // a scene's own order shown, not the one it replaced
  $("zoo-dir").textContent = keys[0][1] > 0 ? "Ascending ↑" : "Descending ↓";
  root.dataset.scene = view.scene;
  root.dataset.len = view.len;
  writeLink();
}

function controls() {
  const sortBox = $("zoo-sort"), colBox = $("zoo-col");
  for (const [key, [words]] of Object.entries(COLUMNS)) {
    sortBox.add(new Option(words, key));
    if (key !== "name" && key !== "family") colBox.add(new Option(words, key));
  }
  for (const len of LENGTHS) sortBox.add(new Option(`Cache at ${len} (bar)`, `cache${len}`));
  sortBox.value = view.sort[0][0];
  $("zoo-q").value = view.q;
  for (const box of document.querySelectorAll("input[name=kind]")) box.checked = view.kinds.includes(box.value);
  for (const box of document.querySelectorAll("input[name=len]")) box.checked = box.value === view.len;
  if (view.where) Object.assign(colBox, { value: view.where.key }), $("zoo-op").value = view.where.op, $("zoo-val").value = view.where.text;
  $("zoo-scene").value = view.scene;

  const where = () => {
    const text = $("zoo-val").value.trim();
    const value = parseAmount(text);
    $("zoo-val").setAttribute("aria-invalid", String(Number.isNaN(value)));
    view.where = { key: colBox.value, op: $("zoo-op").value, text, value };
  };
  $("zoo-controls").addEventListener("submit", (e) => e.preventDefault());
  $("zoo-q").addEventListener("input", (e) => { view.q = e.target.value; render(); });
  for (const id of ["zoo-col", "zoo-op", "zoo-val"]) $(id).addEventListener("input", () => { where(); render(); });
  for (const box of document.querySelectorAll("input[name=kind]")) box.addEventListener("change", () => {
    view.kinds = [...document.querySelectorAll("input[name=kind]:checked")].map((b) => b.value);
    render();
  });
  for (const box of document.querySelectorAll("input[name=len]")) box.addEventListener("change", (e) => { view.len = e.target.value; render(); });
  sortBox.addEventListener("change", () => { view.scene = ""; view.sort = [[sortBox.value, sortBox.value === "name" || sortBox.value === "family" ? 1 : view.sort[0][1]]]; render(); });
  $("zoo-dir").addEventListener("click", () => {
    const [key, dir] = view.scene ? SCENES[view.scene].sort[0] : view.sort[0];
    view.scene = "";
    view.sort = [[key, -dir]];
    render();
  });
  for (const th of document.querySelectorAll("#zoo-table thead th[data-col] button")) {
    th.addEventListener("click", () => {
      const key = th.parentElement.dataset.col;
      const dir = view.sort[0][0] === key && !view.scene ? -view.sort[0][1] : key === "name" || key === "family" ? 1 : -1;
      view.scene = "";
      view.sort = [[key, dir]];
      sortBox.value = key;
      render();
    });
  }
  $("zoo-scene").addEventListener("change", (e) => scene(e.target.value));
}

function scene(name) {
  view.scene = name in SCENES ? name : "";
  if (view.scene) view.len = SCENES[view.scene].length;
  $("zoo-scene").value = view.scene;
  for (const box of document.querySelectorAll("input[name=len]")) box.checked = box.value === view.len;
  render();
}

function keys() {
  document.addEventListener("keydown", (e) => {
    const t = e.target;
    if (e.ctrlKey || e.metaKey || e.altKey || (t && /^(INPUT|TEXTAREA|SELECT)$/.test(t.tagName))) return;
    if (e.key === "p") present(!root.classList.contains("present"));
    else if (e.key === "t") theme();
    else if (e.key === "1") scene("kind");
    else if (e.key === "2") scene("cache");
    else if (e.key === "0") scene("");
    else return;
    e.preventDefault();
  });
  $("btn-present").addEventListener("click", () => present(!root.classList.contains("present")));
  $("btn-theme").addEventListener("click", theme);
  $("btn-present").setAttribute("aria-pressed", String(root.classList.contains("present")));
}

function present(on) {
  root.classList.toggle("present", on);
  $("btn-present").setAttribute("aria-pressed", String(on));
  const p = new URLSearchParams(location.search);
  if (on) p.set("present", "1"); else p.delete("present");
  history.replaceState(null, "", p.toString() ? `?${p}` : location.pathname);
  if (on && !view.scene) scene("kind");
}

function theme() {
  const dark = root.dataset.theme !== "dark";
  root.dataset.theme = dark ? "dark" : "light";
  try { localStorage.setItem("lab-theme", root.dataset.theme); } catch (err) { /* storage may be blocked */ }
}

// A row of the reader's own joins the table, sorted and filtered as the others; true if shown.
function addRow(tr) {
  body.append(tr);
  all.push(tr);
  if (root.classList.contains("embed")) for (const a of tr.querySelectorAll("a[href]")) Object.assign(a, { target: "_blank", rel: "noopener" });
  render();
  return !tr.hidden;
}

// In an iframe (?embed=1): the host sizes the frame to the page (assets/lab-embed-host.js), and a
// link leaves the frame for a new tab, the whole page, as the other pages' "Open the full page".
function embed() {
  if (!root.classList.contains("embed")) return;
  for (const a of document.querySelectorAll(".lab-main a[href]")) Object.assign(a, { target: "_blank", rel: "noopener" });
  if (window.parent === window) return;
  settleHeight();
  if ("ResizeObserver" in window) new ResizeObserver(postHeight).observe(document.querySelector(".lab-main"));
}

function offline() {
  if ("serviceWorker" in navigator && window.isSecureContext) navigator.serviceWorker.register("sw.js").catch(() => {});
}

readLink();
controls();
keys();
ownConfig({ addRow, config: config.worker });
if (root.classList.contains("present") && !view.scene) view.scene = "kind";
if (view.scene) scene(view.scene); else render();
embed();
offline();
window.lab = { zoo: { view, render, scene } };
