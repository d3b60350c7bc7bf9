// Runs before first paint: theme, embed and presenter classes, so nothing flashes. The flags
// and themes a link may give are the page's link contract (lab-config's "link", stated in
// ui/urlstate.py); the shell (assets/js/link.js) names a bad one in a notice. The index page has
// no contract: it takes the theme only. A page opened from a file is told what to do here: the
// browser runs no module (the shell) from a file.
(function () {
  var q = new URLSearchParams(location.search);
  var root = document.documentElement;
  var config = document.getElementById("lab-config");
  var shell = config ? JSON.parse(config.textContent).link.shell : null;
  var last = function (k) { var all = q.getAll(k); return all.length ? all[all.length - 1].trim().toLowerCase() : null; };
  var saved = null;
  try { saved = localStorage.getItem("lab-theme"); } catch (e) { /* storage may be blocked in iframes */ }
  // A link's theme (an embedding course site's) wins, then the reader's choice, then the system.
  var asked = last("theme");
  var themes = shell ? shell.theme.values : ["light", "dark"];
  var dark = themes.indexOf(asked) >= 0 ? asked === "dark"
    : saved ? saved === "dark" : window.matchMedia && matchMedia("(prefers-color-scheme: dark)").matches;
  root.dataset.theme = dark ? "dark" : "light";
  if (!shell) return;
  var on = function (k) { return shell[k].on.indexOf(last(k)) >= 0; };
  if (on("embed")) root.classList.add("embed");
  if (on("present")) root.classList.add("present");
  if (location.protocol === "file:") document.addEventListener("DOMContentLoaded", openedFromAFile);
  // The lesson text waits until the shell has shown the plots (lab.css); shown at once if the
  // shell never ran (its module failed to load or to parse).
  if (document.querySelector("script[type=module]")) {
    root.classList.add("lab-text-later");
    addEventListener("load", function () { if (!window.lab) root.classList.remove("lab-text-later"); });
  }

  function openedFromAFile() {
    var what = "This page was opened from a file.";
    var box = document.getElementById("lab-error");
    var h = document.createElement("h2"), p = document.createElement("p");
    h.textContent = what;
    p.textContent = "The simulator needs a web server: run `make serve` and open the address it prints, or put the site folder on any static web host.";
    box.replaceChildren(h, p);
    box.hidden = false;
    var status = document.getElementById("lab-status");  // the zoo has none: it has no Python to wait for
    if (status) status.hidden = true;
    document.body.classList.remove("lab-loading");
    document.body.classList.add("lab-failed");
    if (!window.lab) window.lab = { state: { failed: what, live: false, prerendered: false } };  // the shell did not run
  }
})();

