// A presenter fit takes up to a dozen layouts (seconds on a slow laptop, with the figures out
// of sight), so it is remembered (localStorage) for this page, build, settings and screen
// size: a presenter who opened the page once before gets it in one layout.
import { embedded, linkContract, pageConfig } from "./config.js";
import { linkSettings } from "./link.js";
import { state } from "./state.js";

export function fitKey() {
  const q = new URLSearchParams(state.settingsQuery !== null ? state.settingsQuery : state.ownSettings ? linkSettings() : linkContract().defaults);
  q.sort();
  const part = `${state.view}${embedded() ? "+embed" : ""}`;
  const config = pageConfig();
  return `lab-fit:${config.page}:${config.build}:${innerWidth}x${innerHeight}:${part}:${q}`;
}
export function recallFit(storage = localStorage) {
  try {
    const v = JSON.parse(storage.getItem(fitKey()) || "null");
    return v && typeof v.scale === "number" && Array.isArray(v.wide) && typeof v.tall === "number" && typeof v.drop === "boolean" ? v : null;
  } catch (e) { return null; }  // blocked storage or a broken entry: fit from scratch
}
export function rememberFit(fit, storage = localStorage) {
  try {
    const build = pageConfig().build;
    for (let i = storage.length - 1; i >= 0; i--) {  // an older build's fits are stale
      const k = storage.key(i);
      if (k && k.startsWith("lab-fit:") && k.split(":")[2] !== build) storage.removeItem(k);
    }
    storage.setItem(fitKey(), JSON.stringify({ scale: fit.scale, wide: [...fit.wide], tall: fit.tall, drop: fit.drop }));
  } catch (e) { /* blocked storage: nothing remembered */ }
}
