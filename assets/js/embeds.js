// An embedded page (?embed=1 in an iframe) tells its host how tall it is:
// {type: "lab-height", height: <CSS px>, href: <the embedded page's link>}. The host page
// resizes its iframe with HOST_SNIPPET (Share and README.md give it). Inside an embed, a link
// opens the whole page (the lesson text, the settings, other pages).
import { $, embedded } from "./config.js";

const inFrame = () => embedded() && window.parent !== window;
let lastHeight = 0;

export function postHeight() {
  if (!inFrame()) return;
  const h = Math.ceil(document.querySelector(".lab-main").getBoundingClientRect().height);
  if (h && h !== lastHeight) {
    lastHeight = h;
    window.parent.postMessage({ type: "lab-height", height: h, href: location.href }, "*");
  }
}

export const HOST_SNIPPET = `<script>
// Linear Attention Lab: each embedded page reports its height; size its frame to fit.
addEventListener("message", function (e) {
  var d = e.data;
  if (!d || d.type !== "lab-height" || !(d.height > 0)) return;
  document.querySelectorAll("iframe").forEach(function (f) {
    if (f.contentWindow === e.source) f.style.height = Math.ceil(d.height) + "px";
  });
});
</` + "script>";

// The embed's height measured here: what it shows is the transport and the simulator.
export function embedHeight() {
  const area = $("lab-stage-area").getBoundingClientRect().height;
  const bar = document.querySelector(".lab-transport").getBoundingClientRect().height;
  return Math.min(4000, Math.max(320, Math.ceil(area + bar + 24)));
}

// The link out of an embed: the page as it is now, without the embed's own keys.
export function fullPageLink(href) {
  const full = new URL(href);
  for (const k of ["embed", "view"]) full.searchParams.delete(k);
  return full.href;
}

export function watchEmbed() {
  if (inFrame() && "ResizeObserver" in window) new ResizeObserver(postHeight).observe(document.querySelector(".lab-main"));
  if (!embedded()) return;
  const a = $("lab-full");
  a.href = fullPageLink(location.href);
  a.hidden = false;
  a.addEventListener("click", () => { a.href = fullPageLink(location.href); });  // the link's t and settings as they are now
}
