// Runs before first paint: theme, embed and presenter classes, so nothing flashes.
(function () {
  var q = new URLSearchParams(location.search);
  var root = document.documentElement;
  var saved = null;
  try { saved = localStorage.getItem("lab-theme"); } catch (e) { /* storage may be blocked in iframes */ }
  // A link's theme (an embedding course site's) wins, then the reader's choice, then the system.
  var asked = q.get("theme");
  var dark = asked === "dark" || asked === "light" ? asked === "dark"
    : saved ? saved === "dark" : window.matchMedia && matchMedia("(prefers-color-scheme: dark)").matches;
  root.dataset.theme = dark ? "dark" : "light";
  var on = function (v) { return v !== null && v !== "0" && v !== "false"; };
  if (on(q.get("embed"))) root.classList.add("embed");
  if (on(q.get("present"))) root.classList.add("present");
})();
