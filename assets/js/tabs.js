// Real tabs: BokehJS draws a Tabs layout's headers (Panel's pn.Tabs, the hybrid page's JSON and
// config.json boxes) as focusable divs with no role that only a click selects. Here they become
// a tab set as ARIA describes it: role tablist / tab / tabpanel, aria-selected, one tab stop
// (the selected tab), Left / Right (and Up / Down) move between tabs, Home / End to the first
// and last, Enter or Space selects the focused tab.
import { allModels, tabParts } from "./bokeh-internals.js";

// The tab a key moves to from tab i of n (null: not a key of the tab set).
export function tabKey(key, i, n) {
  switch (key) {
    case "ArrowRight": case "ArrowDown": return (i + 1) % n;
    case "ArrowLeft": case "ArrowUp": return (i - 1 + n) % n;
    case "Home": return 0;
    case "End": return n - 1;
    default: return null;
  }
}

// The tab list ahead of its panels in the document, so the tab order and the accessibility tree
// meet the tabs first (BokehJS appends the headers after the panels and places both with grid
// areas, so moving them changes nothing on screen). ``header``: the tab list's box, ``panels``
// its panels' elements. Returns whether it moved.
export function headersFirst(header, panels) {
  const root = header && header.parentNode;
  const first = root ? panels.find((p) => p && p.parentNode === root) : null;
  if (!first || !(header.compareDocumentPosition(first) & 2)) return false;  // 2: first precedes it
  root.insertBefore(header, first);
  return true;
}

const wired = new WeakSet();
let ids = 0;
function mark(model, parts) {
  const { list, tabs, panels } = parts;
  list.setAttribute("role", "tablist");
  headersFirst(list.parentNode, panels);
  tabs.forEach((tab, i) => {
    if (!tab.id) tab.id = `lab-tab-${++ids}`;
    const panel = panels[i];
    tab.setAttribute("role", "tab");
    tab.setAttribute("aria-selected", String(i === model.active));
    tab.tabIndex = i === model.active ? 0 : -1;
    if (panel) {
      if (!panel.id) panel.id = `lab-tabpanel-${ids}-${i}`;
      panel.setAttribute("role", "tabpanel");
      panel.setAttribute("aria-labelledby", tab.id);
      tab.setAttribute("aria-controls", panel.id);
    }
  });
}

function wire(model, parts) {
  const { list } = parts;
  if (wired.has(list)) return;
  wired.add(list);
  const fresh = () => tabParts(model) || parts;  // headers are drawn again when the tabs change
  list.addEventListener("keydown", (e) => {
    const { tabs } = fresh();
    const i = tabs.indexOf(e.target);
    if (i < 0) return;
    if (e.key === "Enter" || e.key === " ") {
      e.preventDefault();  // keys.js leaves a tab's keys to it
      if (!model.disabled) model.active = i;
      mark(model, fresh());
      return;
    }
    const j = tabKey(e.key, i, tabs.length);
    if (j === null) return;
    e.preventDefault();
    tabs[j].focus();
  });
  list.addEventListener("click", () => mark(model, fresh()));
}

export function realTabs(doc) {
  for (const m of allModels(doc)) {
    if (!m.type || !m.type.endsWith("Tabs") || !Array.isArray(m.tabs)) continue;
    const parts = tabParts(m);
    if (!parts) continue;
    mark(m, parts);
    wire(m, parts);
  }
}
