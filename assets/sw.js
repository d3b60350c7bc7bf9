// Keeps the whole site for offline use. One cache per build: a new build installs beside the
// old one and takes over only when the page asks (the "Reload" offer), then the old cache goes.
// Python's memory snapshot, the shared heap (pyodide/lab-snapshot.<n>.bin.zst, 10 MB in parts) and each
// page's changes to it (lab-snapshot-<page>.bin.zst, ~1 MB), is kept as a page is visited ({type:
// "lab-keep", url}, or fetched through here); another page starts Python from the wheels, which are kept.
const CACHE = "lab-__BUILD__";
const FILES = __FILES__;
// What each file of the build measures (bytes; "./" is index.html), and each heap's sha256: a
// response cut short or changed on the way (a proxy, a deploy caught mid-copy) but answered
// 200 is never kept, so "Saved for offline use" is said only of files that passed (fuzz N4).
const SIZES = __SIZES__;
const HEAPS = __HEAPS__;

const hex = (buffer) => Array.from(new Uint8Array(buffer), (b) => b.toString(16).padStart(2, "0")).join("");
const sitePath = (url) => {
  const u = new URL(String(url), self.location.href);
  const scope = new URL(self.registration.scope);
  return u.origin === scope.origin && u.pathname.startsWith(scope.pathname)
    ? (u.pathname.slice(scope.pathname.length) || "./") : null;
};
// The response's body, if it measures what the build wrote (length, and a heap's sha256), as a
// new response to keep; otherwise null. A file the build does not know is kept as it came.
async function whole(url, response) {
  if (!response.ok) return null;
  const path = sitePath(url);
  const size = path === null ? undefined : SIZES[decodeURI(path)];
  if (size === undefined) return response;
  const body = await response.arrayBuffer();
  if (body.byteLength !== size) return null;
  const sha = HEAPS[decodeURI(path)];
  if (sha && hex(await crypto.subtle.digest("SHA-256", body)) !== sha) return null;
  return new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers });
}
async function keep(cache, request, response) {
  const checked = await whole(typeof request === "string" ? request : request.url, response);
  if (!checked) throw new Error(`${typeof request === "string" ? request : request.url}: cut short or changed on the way; not kept`);
  await cache.put(request, checked);
}

const isHeap = (url) => {
  const u = new URL(String(url), self.location.href);
  return u.origin === self.location.origin && /\/pyodide\/lab-snapshot(-[\w-]+|\.\d+)\.bin\.zst$/.test(u.pathname);
};

// Once every file is kept, the pages say "Saved for offline use": the worker tells every page
// when its install ends, and answers a page that asks ({type: "lab-saved?"}) with
// {type: "lab-saved", build, saved}.
const saved = async () => (await (await caches.open(CACHE)).keys()).length >= FILES.length;
async function tell(client) {
  client.postMessage({ type: "lab-saved", build: "__BUILD__", saved: await saved() });
}

self.addEventListener("install", (event) => {
  event.waitUntil((async () => {
    // as cache.addAll, with each file measured before it is kept: one that fails fails the
    // install (nothing kept; the next visit tries again)
    const cache = await caches.open(CACHE);
    const got = await Promise.all(FILES.map(async (file) => {
      const request = new Request(file);
      const response = await fetch(request);
      const checked = await whole(request.url, response);
      if (!checked) throw new Error(`${file}: cut short or changed on the way; the offline copy waits for the next visit`);
      return [request, checked];
    }));
    await Promise.all(got.map(([request, response]) => cache.put(request, response)));
    for (const client of await self.clients.matchAll({ includeUncontrolled: true })) tell(client);
  })());
});

self.addEventListener("message", (event) => {
  if (event.data === "activate") self.skipWaiting();
  else if (event.data && event.data.type === "lab-saved?" && event.source) event.waitUntil(tell(event.source));
  else if (event.data && event.data.type === "lab-keep" && isHeap(event.data.url)) {
    // answered {type: "lab-kept", url, kept}: whether the heap is kept now (offline.js ignores it)
    const url = event.data.url, source = event.source;
    event.waitUntil(caches.open(CACHE).then(async (cache) => {
      if (!(await cache.match(url))) await keep(cache, url, await fetch(url));
      return true;
    }).catch((err) => { console.warn(String(err)); return false; })
      .then((kept) => source && source.postMessage({ type: "lab-kept", url, kept })));
  }
});

self.addEventListener("activate", (event) => {
  event.waitUntil((async () => {
    for (const key of await caches.keys()) {
      if (key.startsWith("lab-") && key !== CACHE) await caches.delete(key);
    }
    await self.clients.claim();
  })());
});

self.addEventListener("fetch", (event) => {
  const request = event.request;
  if (request.method !== "GET" || new URL(request.url).origin !== self.location.origin) return;
  event.respondWith((async () => {
    const cache = await caches.open(CACHE);
    const hit = await cache.match(request, { ignoreSearch: true });
    if (hit) return hit;
    const response = await fetch(request);
    if (response.ok && isHeap(request.url)) event.waitUntil(keep(cache, request, response.clone()).catch((err) => console.warn(String(err))));
    return response;
  })());
});
