// The page shell's start-up order, and nothing else (every other module only declares).
// At first paint the shell shows the page built ahead of time (first-paint.js) and lets the
// player (player.js) step through it; meanwhile it starts Python (python.js), whose live page
// then takes over (takeover.js, ui/app.py). Loaded as the last of the page's deferred
// scripts (shell.html): BokehJS and Panel have run when this runs.
//
// window.lab, for Python, the tests and the benchmarks:
//   timings  start-up moments (state.js)        state   a read-only view of state.js's state
//   player   the player (player.js)             shell   the hooks Python calls (python.js)
//   py       Python's hooks (ui/app.py sets it)  pyodide the runtime, once started
//   restyle, viewNames, viewOf, partsOf         the player's helpers (restyle.js, arrange.js)
import { kids, viewNames } from "./arrange.js";
import { viewOf } from "./bokeh-internals.js";
import { watchPrinting } from "./culling.js";
import { watchEmbed } from "./embeds.js";
import { showPrerendered } from "./first-paint.js";
import { fontsLoaded } from "./fonts.js";
import { typeset } from "./formulas.js";
import { watchKeys } from "./keys.js";
import { readLink, watchNotices, watchSettingsLinks } from "./link.js";
import { player } from "./player.js";
import { watchPrint } from "./print.js";
import { watchResize } from "./presenter.js";
import { countDownloads } from "./progress.js";
import { start } from "./python.js";
import { watchReaders } from "./readers.js";
import { restyle } from "./restyle.js";
import { watchShare } from "./share.js";
import { readOnly, state, timings } from "./state.js";
import { watchTheme } from "./theme.js";
import { watchTransport } from "./transport.js";

timings.start = performance.now();
window.lab = { timings, state: readOnly(state), player, restyle, viewNames, viewOf, partsOf: kids, shell: null, py: null, pyodide: null };
fontsLoaded();  // the UI font's wait starts now
watchNotices();
readLink();
countDownloads();
watchPrinting();
watchTransport();
watchTheme();
watchShare();
watchResize();
watchEmbed();
watchPrint();
watchReaders();
watchSettingsLinks();
watchKeys();

// Deferred scripts run while readyState is already "interactive"; DOMContentLoaded fires once
// all of them (this one last) have run.
const pageScripts = new Promise((resolve) => {
  if (document.readyState === "complete") resolve();
  else document.addEventListener("DOMContentLoaded", resolve, { once: true });
});
// The page built ahead of time first: on two cores, Pyodide's start (compiling 9 MB of
// WebAssembly, unpacking the standard library) would otherwise share the processor with
// BokehJS drawing the first plot. Then the parts set aside join, and Python and the formulas
// start.
pageScripts.then(showPrerendered)
  .then(() => state.joined)
  .catch((err) => console.error("first paint:", err))
  .then(() => { typeset(); return start(); });
