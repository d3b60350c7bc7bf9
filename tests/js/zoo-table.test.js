// The zoo's table logic (assets/js/zoo-table.js) on stand-in rows: amounts typed with units,
// sorting with missing values last, the filter by name, kind and column, the bars.
import test from "node:test";
import assert from "node:assert/strict";
import { barWidths, parseAmount, passes, sortRows, valueOf } from "../../assets/js/zoo-table.js";

// A stand-in <tr>: cells by data-col with data-v; hidden <data> for vLLM's KV and the bars.
function row(name, kinds, cols, data = {}) {
  const el = (attrs, text = "") => ({
    getAttribute: (k) => (k in attrs ? String(attrs[k]) : null), hasAttribute: (k) => k in attrs, textContent: text,
  });
  const cells = { name: el({ "data-v": name.toLowerCase() }, name), family: el({}, cols.family || "") };
  for (const [k, v] of Object.entries(cols)) if (k !== "family") cells[k] = el({ "data-v": v });
  const extra = Object.fromEntries(Object.entries(data).map(([k, v]) => [k, el({ value: v })]));
  return {
    name, getAttribute: (k) => (k === "data-kinds" ? kinds : null),
    querySelector: (sel) => {
      const m = /\[data-(col|bar)="([^"]+)"\]/.exec(sel);
      return m[1] === "bar" ? extra[`bar:${m[2]}`] || null : extra[`col:${m[2]}`] || cells[m[2]] || null;
    },
  };
}

const llama = row("Llama-3-8B", "full", { family: "llama", state: 0, kv1M: 137438953472, weights: 16e9 },
  { "col:vllm1M": 137438953472, "bar:ideal1M": 137438953472, "bar:vllm1M": 137438953472 });
const mamba = row("Mamba-2-2.7B", "linear", { family: "mamba2", state: 171900928, kv1M: 0, weights: 5.4e9 },
  { "col:vllm1M": 0, "bar:ideal1M": 171900928, "bar:vllm1M": 171900928 });
const rg = row("RecurrentGemma-2B", "linear window", { family: "recurrent_gemma", state: 737280, kv1M: 16777216 },
  { "bar:ideal1M": 17514496 });

test("amounts read with their units: bytes binary and decimal, tokens K = 1024", () => {
  assert.equal(parseAmount("10 GiB"), 10 * 2 ** 30);
  assert.equal(parseAmount("1.5GB"), 1.5e9);
  assert.equal(parseAmount("128K"), 131072);
  assert.equal(parseAmount("1,024"), 1024);
  assert.equal(parseAmount(""), null);
  assert.ok(Number.isNaN(parseAmount("lots")));
});

test("sorting: numbers both ways, a row without the value last either way, text by name", () => {
  assert.deepEqual(sortRows([llama, mamba, rg], [["state", 1]]).map((r) => r.name), ["Llama-3-8B", "RecurrentGemma-2B", "Mamba-2-2.7B"]);
  assert.deepEqual(sortRows([llama, mamba, rg], [["kv1M", -1]]).map((r) => r.name), ["Llama-3-8B", "RecurrentGemma-2B", "Mamba-2-2.7B"]);
  // vLLM does not run RecurrentGemma: no value, last whichever the direction
  assert.equal(sortRows([rg, llama, mamba], [["vllm1M", 1]]).at(-1).name, "RecurrentGemma-2B");
  assert.equal(sortRows([rg, llama, mamba], [["vllm1M", -1]]).at(-1).name, "RecurrentGemma-2B");
  assert.deepEqual(sortRows([mamba, rg, llama], [["name", 1]]).map((r) => r.name), ["Llama-3-8B", "Mamba-2-2.7B", "RecurrentGemma-2B"]);
  assert.equal(valueOf(llama, "family"), "llama");
});

test("the filter: name or family, any of the kinds, a column at least or at most a value", () => {
  const shown = (f) => [llama, mamba, rg].filter((r) => passes(r, f)).map((r) => r.name);
  assert.deepEqual(shown({ q: "MAMBA" }), ["Mamba-2-2.7B"]);
  assert.deepEqual(shown({ q: "gemma" }), ["RecurrentGemma-2B"]);
  assert.deepEqual(shown({ kinds: ["window"] }), ["RecurrentGemma-2B"]);
  assert.deepEqual(shown({ kinds: ["full", "window"] }), ["Llama-3-8B", "RecurrentGemma-2B"]);
  assert.deepEqual(shown({ where: { key: "kv1M", op: "max", value: parseAmount("1 GiB") } }), ["Mamba-2-2.7B", "RecurrentGemma-2B"]);
  assert.deepEqual(shown({ where: { key: "weights", op: "min", value: 1e10 } }), ["Llama-3-8B"]);  // RG: no weights
  assert.deepEqual(shown({ where: { key: "kv1M", op: "max", value: NaN } }), ["Llama-3-8B", "Mamba-2-2.7B", "RecurrentGemma-2B"]);
});

test("bars: in % of the largest shown, exact and vLLM", () => {
  const [a, b, c] = barWidths([llama, mamba, rg], "1M");
  assert.deepEqual(a, [100, 100]);
  assert.ok(Math.abs(b[0] - (100 * 171900928) / 137438953472) < 1e-9);
  assert.deepEqual([c[1]], [0]);
});
