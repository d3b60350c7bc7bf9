// A presenter fit takes up to a dozen layouts (seconds on a slow laptop, with the figures out
// of sight), so it is remembered (localStorage, and here for this visit) for this page, build,
// settings, screen size, view and room (the lesson text open beside the figures or not): a
// scene key, or a presenter who opened the page before, gets it in one layout. presenter.js
// measures every scene's ahead of time.
import { embedded, linkContract, pageConfig } from "./config.js";
import { linkSettings } from "./link.js";
import { state } from "./state.js";

export function fitKey(view = state.view) {
  const q = new URLSearchParams(state.settingsQuery !== null ? state.settingsQuery : state.ownSettings || state.prebuilt ? linkSettings() : linkContract().defaults);
  q.sort();
  const lesson = typeof document !== "undefined" && document.documentElement.classList.contains("show-text");
  const part = `${view}${embedded() ? "+embed" : ""}${lesson ? "+lesson" : ""}`;
  const config = pageConfig();
  return `lab-fit:${config.page}:${config.build}:${innerWidth}x${innerHeight}:${part}:${q}`;
}
const here = new Map();  // fitKey -> fit: this visit's, read where the storage is blocked
export function recallFit(storage = localStorage, view = state.view) {
  const key = fitKey(view);
  let text;
  try { text = storage.getItem(key); } catch (e) { text = undefined; }
  try {
    const v = text === undefined ? here.get(key) : JSON.parse(text || "null");
    return v && typeof v.scale === "number" && Array.isArray(v.wide) && typeof v.tall === "number" && typeof v.drop === "boolean" ? v : null;
  } catch (e) { return null; }  // a broken entry: fit from scratch
}
export function rememberFit(fit, storage = localStorage, view = state.view) {
  const entry = { scale: fit.scale, wide: [...fit.wide], tall: fit.tall, drop: fit.drop, tooSmall: !!fit.tooSmall };
  here.set(fitKey(view), entry);
  try {
    const build = pageConfig().build;
    for (let i = storage.length - 1; i >= 0; i--) {  // an older build's fits are stale
      const k = storage.key(i);
      if (k && k.startsWith("lab-fit:") && k.split(":")[2] !== build) storage.removeItem(k);
    }
    storage.setItem(fitKey(view), JSON.stringify(entry));
  } catch (e) { /* blocked storage: nothing remembered */ }
}
