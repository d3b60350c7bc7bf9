// A readout's new markup put into its element by changing only what differs from what is there:
// a step's caption differs from the last in a few numbers, and replacing the element's whole
// content (innerHTML) made the browser take every node of it out of its layout and put it back
// (running-sum: about 160 nodes a step, which the next canvas text read then laid out: 5 ms of
// the 16 ms a frame has). Nodes of the same kind and name are kept and their text or attributes
// changed; the others are replaced, added or removed. The result is the same DOM as innerHTML's.

// The new markup parsed, its nodes moved into `el` where they differ from the old ones.
export function morph(el, html) {
  const template = el.ownerDocument.createElement("template");
  template.innerHTML = html;
  sync(el, template.content);
}

function sameKind(a, b) {
  return a.nodeType === b.nodeType && a.nodeName === b.nodeName && a.namespaceURI === b.namespaceURI;
}

// The children of `into` made the same as those of `from` (whose nodes may be moved). An
// element equal to its new one (the browser compares them, natively) is left alone whole.
export function sync(into, from) {
  let h = into.firstChild;
  for (let w = from.firstChild; w;) {
    const next = w.nextSibling;
    if (!h) into.appendChild(w);
    else if (!sameKind(h, w)) {
      const after = h.nextSibling;
      into.replaceChild(w, h);
      h = after;
    } else {
      if (h.nodeType !== 1) { if (h.nodeValue !== w.nodeValue) h.nodeValue = w.nodeValue; }
      else if (!h.isEqualNode(w)) { syncAttributes(h, w); sync(h, w); }
      h = h.nextSibling;
    }
    w = next;
  }
  while (h) {
    const after = h.nextSibling;
    into.removeChild(h);
    h = after;
  }
}

function syncAttributes(h, w) {
  for (const a of Array.from(h.attributes)) {
    if (!w.hasAttributeNS(a.namespaceURI, a.localName)) h.removeAttributeNS(a.namespaceURI, a.localName);
  }
  for (const a of Array.from(w.attributes)) {
    if (h.getAttributeNS(a.namespaceURI, a.localName) !== a.value) h.setAttributeNS(a.namespaceURI, a.name, a.value);
  }
}
