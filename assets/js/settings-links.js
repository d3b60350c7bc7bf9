// The worked example one click from the first screen: a page's link to its own settings (an
// <a> with the settings_link role, href="?preset=..."). With Python running it applies them in
// place; before, it shows them in place where the build made their run (ahead.js), and opens
// the page with them otherwise. (Apart from link.js, which python.js imports: this one imports
// python.js.)
import { choose, runOfLink } from "./ahead.js";
import { roles } from "./config.js";
import { isShellKey, notice } from "./link.js";
import { player } from "./player.js";
import { applySettings } from "./python.js";
import { state } from "./state.js";

export function watchSettingsLinks() {
  document.addEventListener("click", (event) => {
    const cls = roles().settings_link;
    const a = event.composedPath().find((el) => el.classList && el.classList.contains(cls));
    if (!a) return;
    const wanted = new URLSearchParams(a.getAttribute("href").replace(/^[^?]*\?/, ""));
    event.preventDefault();
    if (state.live) {
      applySettings(wanted.toString()).then((notes) => {
        if (notes) notice(String(notes));
        player.reset();
      }).catch((err) => notice(`Those settings could not be applied (${err.message}).`));
      return;
    }
    const run = runOfLink(wanted.toString());
    if (run !== undefined && state.prerendered && !state.ownSettings && !state.sameRun) {  // built ahead of time: in place
      choose(run);
      return;
    }
    const url = new URL(location.href);
    for (const k of [...url.searchParams.keys()]) if (!isShellKey(k)) url.searchParams.delete(k);
    for (const [k, v] of wanted) url.searchParams.set(k, v);
    url.searchParams.set("t", "0");
    location.assign(url.href);
  });
}
