// An embedded page (?embed=1 in an iframe) tells its host how tall it is:
// {type: "lab-height", height: <CSS px>, href: <the embedded page's link>}. The host page
// resizes its iframe with assets/lab-embed-host.js (Share gives the snippet that loads it). Inside an embed, a link
// opens the whole page (the lesson text, the settings, other pages).
import { $, embedded } from "./config.js";

//
// Only final heights are sent, once per change of what the page shows: none while the page
// built ahead of time is still being put together (its parts join one a frame: running-sum sent
// four heights in a second, gates a dozen); after that, a height once it has held for two
// frames (BokehJS lays a changed layout out over a few), and only if it differs from the last.
const inFrame = () => embedded() && window.parent !== window;
const heightNow = () => Math.ceil(document.querySelector(".lab-main").getBoundingClientRect().height);
let lastHeight = 0;
let settled = false;  // the page is whole (settleHeight)
let watching = false;  // a height is being watched until it holds

// Style sheets still loading, in the page or in any shadow root: Panel's widgets link theirs
// into their own, and a widget is a few pixels taller or shorter until its sheet applies (an
// embed of hybrid had reported 3276 px, then 3283 px). A sheet that never loads has no `sheet`
// either: the wait for them is bounded (SHEET_WAIT_FRAMES).
export function sheetsPending(root) {
  for (const link of root.querySelectorAll('link[rel="stylesheet"]')) if (!link.sheet) return true;
  for (const el of root.querySelectorAll("*")) if (el.shadowRoot && sheetsPending(el.shadowRoot)) return true;
  return false;
}
const SHEET_WAIT_FRAMES = 120;  // pairs of frames: about 4 s at 60 frames a second

export function postHeight() {
  if (!inFrame() || !settled || watching) return;
  watching = true;
  let seen = heightNow();
  let waits = 0;
  const check = () => requestAnimationFrame(() => requestAnimationFrame(() => {
    const h = heightNow();
    if (h !== seen || (sheetsPending(document) && ++waits < SHEET_WAIT_FRAMES)) { seen = h; check(); return; }
    watching = false;
    if (h && h !== lastHeight) {
      lastHeight = h;
      window.parent.postMessage({ type: "lab-height", height: h, href: location.href }, "*");
    }
  }));
  check();
}

// Every part of the page is on screen (main.js, once they have joined): heights from now on.
export function settleHeight() {
  settled = true;
  postHeight();
}

// The host page's side (assets/lab-embed-host.js, shipped with the site): a file to load, not
// an inline script, which a host sending Content-Security-Policy script-src 'self' refused to
// run. The snippet loads the Lab's own copy; such a host saves the file and loads its copy.
export const HOST_FILE = "assets/lab-embed-host.js";
export const hostFileUrl = (pageHref) => new URL(HOST_FILE, pageHref).href;
export const hostSnippet = (pageHref) => `<script src="${hostFileUrl(pageHref)}" defer></` + "script>";

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
