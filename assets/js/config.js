// The page's config (the lab-config block build.py writes: page, title, build, packages,
// sizes, the entry script's code, the link contract, what the page built ahead of time holds),
// read once on first use, and two DOM helpers every module uses.
let config = null;

export function pageConfig() {
  if (config === null) config = JSON.parse(document.getElementById("lab-config").textContent);
  return config;
}

// Set the config by hand (the node tests; a worker client).
export function useConfig(value) { config = value; }

// The link contract, stated once in Python (ui/urlstate.py: SHELL_KEYS, link_contract).
export const linkContract = () => pageConfig().link;

// The role classes, frame bindings and the worker's messages, stated once in Python (ui/contract.py).
export function contract() {
  const c = pageConfig().contract;
  if (!c) throw new Error("lab-config has no contract: the build writes ui.contract.contract() (ui.app.prerender's \"contract\") into it");
  return c;
}
export const roles = () => contract().roles;
export const frameBindings = () => contract().frames;
export const viewClass = (name) => contract().view_prefix + name;
// Does a model carry a role's class (role: a key of ui/contract.py's ROLES) or a class?
export const hasClass = (m, cls) => Array.isArray(m.css_classes) && m.css_classes.includes(cls);
export const hasRole = (m, role) => hasClass(m, roles()[role]);

export const $ = (id) => document.getElementById(id);
export const root = () => document.documentElement;
export const presenting = () => document.documentElement.classList.contains("present");
// A phone (lab.css's narrow screens): the presenter view scrolls down, its figures one below
// the other as wide as the screen (fit-search.js), each legend under its figure (restyle.js).
export const PHONE_WIDTH = 700;
export const onAPhone = () => innerWidth <= PHONE_WIDTH;
export const embedded = () => document.documentElement.classList.contains("embed");
// Does the link ask for an embed (?embed=1)? Read from the link itself, as boot-early.js reads it
// (the last value counts), for early.js, which may run before boot-early.js has set the class.
export function embedAsked(search = location.search, shell = linkContract().shell) {
  const all = new URLSearchParams(search).getAll("embed");
  return all.length > 0 && shell.embed.on.includes(all[all.length - 1].trim().toLowerCase());
}
// Does the browser ask to save data, or say its link is slow (navigator.connection, where it
// exists: Chromium; effectiveType 3g and below carry Python's 30 MB in minutes)? A page opened
// whole then starts Python only when it is wanted, as an embed does (wanted.js).
export function savesData(connection = typeof navigator === "undefined" ? undefined : navigator.connection) {
  return !!connection && (connection.saveData === true || ["slow-2g", "2g", "3g"].includes(String(connection.effectiveType)));
}

// Two animation frames: what was changed before is on screen.
export const twoFrames = () => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
