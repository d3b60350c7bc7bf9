// The shell's one state object. Every key has exactly one writer (the module named below);
// everyone else reads it. A module that needs a key changed asks its writer (a function it
// exports), never assigns it. Tests and benchmarks read it through window.lab.state, a
// read-only view (main.js).
//
// key           writer          readers                               what
// shell         link.js         most modules                          the link's shell keys, accepted ({key: text})
// ownSettings   link.js         first-paint, takeover, python, ...    the link asks for settings the page built ahead of time lacks
// sameRun       link.js         first-paint, python, wanted           the link's own settings change no run (its exercise): the default run steps, its exercise waits
// prebuilt      link.js         first-paint, python, share, fit-memory the run built ahead of time for the link's settings ({link, query, file, t_max, csv}), or null
// view          link.js         first-paint, theme, presenter, scenes ?view=<name> ("" for the whole page; setView: a scene)
// settingsQuery python.js       link, presenter                       the settings' query, from Python (null before)
// stage         progress.js     progress, first-paint                 the start-up stage on show ("cold", "runtime", "packages", ...)
// python        wanted.js       wanted, tests                         Python's start: "waiting" (an embed, until wanted and in view), "started"
// failed        progress.js     python, tests                         what could not start (a sentence), or null
// prerendered   first-paint.js  takeover, python, tests               the page built ahead of time is on screen
// mainAside     first-paint.js  presenter                             main views were set aside (the fit waits for them)
// joined        first-paint.js  presenter, main                       a promise: the parts set aside have joined
// live          takeover.js     link, python, presenter, tests        Python has taken the page over
// adopted       takeover.js     tests                                 ... by linking to the document on screen (nothing swapped)
// settingsOpen  view-switch.js  theme, presenter                      the folded settings are shown (the Settings button)
// print         print.js        theme, readers                        the page is being printed
// scale         presenter.js    theme, tests                          the presenter view's figure scale (null: not fitted)
// wide          presenter.js    theme, tests                          figure key -> a further factor on its width (a Map)
// tall          presenter.js    theme, tests                          a factor on every figure's height
// drop          presenter.js    theme, tests                          the parts marked to be left out are left out
// fitted        presenter.js    tests                                 how many fits have ended
// fitTries      fit-search.js   tests                                 how many layouts the fits have tried
// rehearsing    presenter.js    tests, bench                          scenes' fits are being measured ahead of time
// rehearsed     presenter.js    tests, bench                          every scene's fit is known for this screen and room
// offline       offline.js      offline, tests                        this build is kept for offline use
export const state = {
  shell: {},
  ownSettings: false,
  sameRun: false,
  prebuilt: null,
  view: "",
  settingsQuery: null,
  stage: "",
  python: "",
  failed: null,
  prerendered: false,
  mainAside: false,
  joined: Promise.resolve(),
  live: false,
  adopted: false,
  settingsOpen: false,
  print: false,
  scale: null,
  wide: new Map(),
  tall: 1,
  drop: false,
  fitted: 0,
  fitTries: 0,
  rehearsing: false,
  rehearsed: false,
  offline: false,
};

// Start-up timings (ms from navigation start), written by the module that reaches each
// moment, read by bench/boot.py and the tests: start, scripts, decoded, fonts, font, built,
// firstPlot, joined, pyodide, packages, live, fit; snapshot (Python was restored from it),
// worker (when the worker reached each step of its start, on this page's clock), python (ms per
// step of making the live page in the worker); choice (ms of the last choice answered ahead of
// time, ahead.js: its files loaded, its patches in, its frames shown).
export const timings = {};

// A read-only view of state (window.lab.state): assigning to it throws; wide is shown as a
// plain object.
export function readOnly(target = state) {
  return new Proxy(target, {
    get: (t, key) => (t[key] instanceof Map ? Object.fromEntries(t[key]) : t[key]),
    set: () => { throw new TypeError("window.lab.state is read-only: each key has one writer (assets/js/state.js)"); },
    deleteProperty: () => false,
  });
}
