// The UI font. Preloaded by the page (16 kB a weight); the figures are built, and the
// presenter fit measured, once it is there: a figure laid out in a fallback font keeps that
// layout. A font that cannot load (blocked, an old browser) leaves the system's fonts after at
// most 3 s. If it could not load, the family is taken out of --font (which the figures read
// too): a face that failed is tried again, and fails again, at every text drawn with it.
import { timings } from "./state.js";

const WAIT_MS = 3000;
let loaded = null;

// Resolves once the font is there or given up (started on the first call).
export function fontsLoaded() {
  if (loaded) return loaded;
  const root = document.documentElement;
  loaded = (document.fonts && document.fonts.load
    ? Promise.race([
      Promise.all(['16px "Lab Sans"', 'bold 16px "Lab Sans"'].map((f) => document.fonts.load(f))),
      new Promise((r) => setTimeout(r, WAIT_MS)),
    ])
    : Promise.resolve()).catch(() => {}).then(() => {
    const faces = document.fonts && typeof document.fonts.forEach === "function" ? [...document.fonts] : [];
    timings.font = faces.some((f) => f.family.includes("Lab Sans") && f.status === "loaded");
    if (!timings.font) root.style.setProperty("--font", getComputedStyle(root).getPropertyValue("--font").replace(/"Lab Sans",\s*/, ""));
  });
  return loaded;
}
