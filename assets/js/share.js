// Share (a link to exactly this view or to one of the page's named views, in the presenter
// view or not; the embed code, the host page's snippet), CSV (the
// current data, from Python once live, else what the page built ahead of time holds) and the
// help dialog.
import { $, linkContract, pageConfig, presenting } from "./config.js";
import { embedHeight, hostFileUrl, hostSnippet } from "./embeds.js";
import { writeUrl } from "./link.js";
import { viewLabel } from "./scenes.js";
import { csv } from "./python.js";
import { state } from "./state.js";

export async function downloadCsv() {
  const live = state.live ? await csv() : null;  // Python's, once live
  const text = live !== null ? live : (state.prebuilt ? state.prebuilt.csv || null : !state.ownSettings ? pageConfig().prerender.csv : null);
  if (text == null) return;
  const blob = new Blob([text], { type: "text/csv" });
  const a = document.createElement("a");
  a.href = URL.createObjectURL(blob);
  a.download = `${pageConfig().page}.csv`;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(a.href), 1000);
}

// The embed code for a link (built with the DOM and read back as text: the link's values end
// up escaped).
export function embedCode(href, title, height) {
  const embed = new URL(href);
  embed.searchParams.set("embed", "1");
  embed.searchParams.delete("present");
  const frame = document.createElement("iframe");
  frame.setAttribute("src", embed.href);
  frame.setAttribute("title", title);
  frame.setAttribute("width", "100%");
  frame.setAttribute("height", String(height));
  frame.setAttribute("style", "border:0");
  frame.setAttribute("loading", "lazy");
  frame.setAttribute("allow", "fullscreen");
  frame.setAttribute("data-lab-embed", "");
  return frame.outerHTML;
}

// The link for what the dialog's "Show" picks: a named view ("" the whole page), presenter or not.
export function shareLink(href, view, present) {
  const link = new URL(href);
  link.searchParams.delete("embed");
  if (view) link.searchParams.set("view", view);
  else link.searchParams.delete("view");
  if (present) link.searchParams.set("present", "1");
  else link.searchParams.delete("present");
  return link.href;
}
function showLinks() {
  const href = shareLink(location.href, $("share-view").value, $("share-present").checked);
  $("share-link").value = href;
  $("share-embed").value = embedCode(href, pageConfig().title, embedHeight());
}
function openShare() {
  writeUrl();
  const pick = $("share-view"), views = linkContract().views;
  pick.replaceChildren(new Option("The whole page", ""), ...views.map((name) => new Option(viewLabel(name), name)));
  pick.value = views.includes(state.view) ? state.view : "";
  pick.disabled = !views.length;
  $("share-present").checked = presenting();
  showLinks();
  $("share-host").value = hostSnippet(location.href);
  $("share-host-file").href = hostFileUrl(location.href);
  $("dlg-share").showModal();
}

export function watchShare() {
  $("btn-csv").onclick = downloadCsv;
  $("btn-csv").disabled = state.ownSettings;
  $("btn-share").onclick = openShare;
  $("share-view").onchange = showLinks;
  $("share-present").onchange = showLinks;
  $("btn-help").onclick = () => $("dlg-help").showModal();
  document.querySelectorAll("[data-copy]").forEach((button) => {
    button.onclick = async () => {
      const field = $(button.dataset.copy);
      field.select();
      try { await navigator.clipboard.writeText(field.value); } catch (e) { document.execCommand("copy"); }
      button.textContent = "Copied";
      setTimeout(() => (button.textContent = "Copy"), 1500);
    };
  });
}
