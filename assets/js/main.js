// The page shell's start-up order, and nothing else (every other module only declares).
// It starts Python's worker (python.js), shows the page built ahead of time (first-paint.js)
// and lets the player (player.js) step through it; the live page then takes over
// (takeover.js; ui/worker.py in the worker). The build bundles this module and every module it
// imports into one file (sitebuild/bundle.py: assets/shell.js), loaded as the last of the page's
// deferred scripts (shell.html): BokehJS and Panel have run when this runs.
//
// window.lab, for the tests and the benchmarks:
//   timings  start-up moments (state.js)        state   a read-only view of state.js's state
//   player   the player (player.js)             py      Python's answers, as promises (python.js):
//   restyle, viewNames, viewOf, partsOf            csv(), query(), apply(q), run(code)
//            the player's helpers (restyle.js, arrange.js)
import { kids, viewNames } from "./arrange.js";
import { leanRenderers, viewOf } from "./bokeh-internals.js";
import { watchPrinting } from "./culling.js";
import { settleHeight, watchEmbed } from "./embeds.js";
import { showPrerendered } from "./first-paint.js";
import { fontsLoaded } from "./fonts.js";
import { watchFormulas } from "./formulas.js";
import { watchKeys } from "./keys.js";
import { readLink, watchNotices } from "./link.js";
import { player } from "./player.js";
import { watchPrint } from "./print.js";
import { watchResize } from "./presenter.js";
import { applySettings, csv, describePage, query, run, start } from "./python.js";
import { watchReaders } from "./readers.js";
import { restyle } from "./restyle.js";
import { watchScenes } from "./scenes.js";
import { watchSettingsLinks } from "./settings-links.js";
import { watchShare } from "./share.js";
import { readOnly, state, timings } from "./state.js";
import { watchTheme } from "./theme.js";
import { watchTransport } from "./transport.js";
import { watchViewSwitch } from "./view-switch.js";
import { startWhenWanted } from "./wanted.js";

timings.start = performance.now();
window.lab = { timings, state: readOnly(state), player, restyle, viewNames, viewOf, partsOf: kids,
  py: { csv, query, apply: applySettings, run } };
leanRenderers();  // before any figure is drawn
fontsLoaded();  // the UI font's wait starts now
watchNotices();
readLink();
watchPrinting();
watchTransport();
watchTheme();
watchViewSwitch();
watchScenes();
watchShare();
watchResize();
watchEmbed();
watchPrint();
watchReaders();
watchSettingsLinks();
watchKeys();
watchFormulas();

// Deferred scripts run while readyState is already "interactive"; DOMContentLoaded fires once
// all of them (this one last) have run.
const pageScripts = new Promise((resolve) => {
  if (document.readyState === "complete") resolve();
  else document.addEventListener("DOMContentLoaded", resolve, { once: true });
});
// Python's worker starts when it is wanted (wanted.js): a page opened whole's at once, asking
// for its files while the page built ahead of time is shown; an embed's once wanted and in
// view. Once its plots are on screen the worker hears what the page shows (to adopt it) and
// starts Python (the formulas come typeset from the build); the parts set aside join once the
// page is live (later.js), and then the page's height is final.
startWhenWanted(start);
const plotted = pageScripts.then(showPrerendered).catch((err) => console.error("first paint:", err));
plotted.then(() => { describePage(); return state.joined; })
  .catch((err) => console.error("first paint:", err))
  .then(() => { settleHeight(); });
