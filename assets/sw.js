// Keeps the whole site for offline use. One cache per build: a new build installs beside the
// old one and takes over only when the page asks (the "Reload" offer), then the old cache goes.
const CACHE = "lab-__BUILD__";
const FILES = __FILES__;

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
    return fetch(request);
  })());
});
