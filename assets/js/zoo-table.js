// The zoo's table as data (zoo.html, written by sitebuild/zoo.py): which columns sort and filter,
// a value typed with its unit, one row's value of a column, the order and the filter. No DOM
// is touched here beyond reading the rows handed in; assets/zoo.js wires it to the page.

// key -> [words, how its value is read]: "text" (the cell's data-v), "num" (the cell's data-v),
// "vllm" (the hidden <data data-col=vllm…> of the KV cell), "length" (a context length, in tokens).
export const COLUMNS = {
  name: ["Model", "text"], family: ["Family", "text"], class: ["Kind", "num"],
  layers: ["Layers (count)", "num"], state: ["State per sequence", "num"],
  kv32K: ["KV at 32K (exact)", "num"], vllm32K: ["KV at 32K (vLLM)", "vllm"],
  kv128K: ["KV at 128K (exact)", "num"], vllm128K: ["KV at 128K (vLLM)", "vllm"],
  kv1M: ["KV at 1M (exact)", "num"], vllm1M: ["KV at 1M (vLLM)", "vllm"],
  weights: ["Weights as shipped", "num"], fits: ["Longest context on one H100", "length"],
};
export const KINDS = ["full", "window", "mla", "linear"];
export const LENGTHS = ["32K", "128K", "1M"];
// The presenter view's scenes (keys 1 and 2): how each sorts, and at which length its bars are.
export const SCENES = {
  kind: { sort: [["class", 1], ["kv1M", 1]], length: "1M" },
  cache: { sort: [["cache1M", -1]], length: "1M" },
};

const UNITS = {
  b: 1, kib: 2 ** 10, mib: 2 ** 20, gib: 2 ** 30, tib: 2 ** 40,
  kb: 1e3, mb: 1e6, gb: 1e9, tb: 1e12, k: 2 ** 10, m: 2 ** 20, "": 1,
};

// "10 GiB" -> 10737418240; "128K" (tokens) -> 131072; "" -> null; nonsense -> NaN.
export function parseAmount(text) {
  const s = String(text || "").trim().toLowerCase().replace(/,/g, "");
  if (!s) return null;
  const m = /^(\d+(?:\.\d+)?|\.\d+)\s*([a-z]*)$/.exec(s);
  if (!m || !(m[2] in UNITS)) return NaN;
  return Number(m[1]) * UNITS[m[2]];
}

// One row's value of a column: a number, a lower-case text, or null when it has none
// (vLLM does not run the model, weights not counted). "cache<len>" is the bar's exact total.
export function valueOf(row, key) {
  if (key.startsWith("cache")) return num(row.querySelector(`[data-bar="ideal${key.slice(5)}"]`), "value");
  const how = (COLUMNS[key] || [])[1];
  if (how === "vllm") return num(row.querySelector(`[data-col="${key}"]`), "value");
  const cell = row.querySelector(`[data-col="${key}"]`);
  if (!cell) return null;
  if (how === "text") return (cell.getAttribute("data-v") || cell.textContent).trim().toLowerCase();
  return num(cell, "data-v");
}

function num(el, attr) {
  if (!el || !el.hasAttribute(attr)) return null;
  const v = Number(el.getAttribute(attr));
  return Number.isFinite(v) ? v : null;
}

// rows sorted by keys [[key, 1 | -1], …]: rows without a value last, ties by name.
export function sortRows(rows, keys) {
  const all = [...keys, ["name", 1]];
  return [...rows].sort((a, b) => {
    for (const [key, dir] of all) {
      const x = valueOf(a, key), y = valueOf(b, key);
      if (x === y) continue;
      if (x === null) return 1;
      if (y === null) return -1;
      return (x < y ? -1 : 1) * dir;
    }
    return 0;
  });
}

// Whether a row passes: its name or family holds `q`; it has a layer of one of `kinds`; and
// `where` ({key, op: "min" | "max", value}) holds (a row without that value does not pass).
export function passes(row, { q = "", kinds = KINDS, where = null } = {}) {
  const text = `${valueOf(row, "name")} ${valueOf(row, "family")}`;
  if (q && !text.includes(q.trim().toLowerCase())) return false;
  const has = (row.getAttribute("data-kinds") || "").split(" ").filter(Boolean);
  if (!has.some((k) => kinds.includes(k))) return false;
  if (where && where.value !== null && !Number.isNaN(where.value)) {
    const v = valueOf(row, where.key);
    if (v === null || typeof v !== "number") return false;
    if (where.op === "min" ? v < where.value : v > where.value) return false;
  }
  return true;
}

// The bars' widths in % of the largest shown, per row: [exact, vLLM] at `length`.
export function barWidths(rows, length) {
  const of = (r, which) => num(r.querySelector(`[data-bar="${which}${length}"]`), "value") || 0;
  const top = Math.max(1, ...rows.flatMap((r) => [of(r, "ideal"), of(r, "vllm")]));
  return rows.map((r) => [of(r, "ideal"), of(r, "vllm")].map((v) => (100 * v) / top));
}
