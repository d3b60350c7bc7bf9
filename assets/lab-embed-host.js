// Linear Attention Lab: the host page's side of an embed. Each embedded page (?embed=1 in an
// iframe) posts {type: "lab-height", height} when its height changes; this sizes the frame that
// spoke, and no other. Load it once per host page with <script src="…/lab-embed-host.js" defer>:
// a file, not an inline script, so a host whose Content-Security-Policy says script-src 'self'
// runs it when it is saved on that host. No outside requests, no globals.
addEventListener("message", function (e) {
  var d = e.data;
  if (!d || d.type !== "lab-height" || !(d.height > 0)) return;
  document.querySelectorAll("iframe").forEach(function (f) {
    if (f.contentWindow === e.source) f.style.height = Math.ceil(d.height) + "px";
  });
});
