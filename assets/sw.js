// Keeps the whole site for offline use. One cache per build: a new build installs beside the
// old one and takes over only when the page asks (the "Reload" offer), then the old cache goes.
// Each page's memory snapshot (pyodide/lab-snapshot-<page>.bin.gz, ~20 MB) is kept once that
// page is visited ({type: "lab-keep", url}, or fetched through here); another page starts
// Python from the wheels, which are kept.
const CACHE = "lab-__BUILD__";
const FILES = __FILES__;

const isHeap = (url) => {
  const u = new URL(String(url), self.location.href);
  return u.origin === self.location.origin && /\/pyodide\/lab-snapshot-[\w-]+\.bin\.gz$/.test(u.pathname);
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
    await (await caches.open(CACHE)).addAll(FILES);
    for (const client of await self.clients.matchAll({ includeUncontrolled: true })) tell(client);
  })());
});

self.addEventListener("message", (event) => {
  if (event.data === "activate") self.skipWaiting();
  else if (event.data && event.data.type === "lab-saved?" && event.source) event.waitUntil(tell(event.source));
  else if (event.data && event.data.type === "lab-keep" && isHeap(event.data.url)) {
    event.waitUntil(caches.open(CACHE).then(async (cache) => {
      if (!(await cache.match(event.data.url))) await cache.add(event.data.url);
    }).catch(() => {}));
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
    if (response.ok && isHeap(request.url)) cache.put(request, response.clone()).catch(() => {});
    return response;
  })());
});
