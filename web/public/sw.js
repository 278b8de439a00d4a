/*
 * Dimsum's service worker: keeps the app shell (the page, its hashed scripts and styles, icons,
 * manifest and the offline page) so the app opens fast and says "offline" without a server. It never
 * caches API answers, the live socket or anything else that holds people's data: those always go to
 * the network.
 */
const SHELL = "dimsum-shell-v1";
const PRECACHE = [
  "/",
  "/offline.html",
  "/icon.svg",
  "/icon-192.png",
  "/icon-512.png",
  "/manifest.webmanifest",
];

self.addEventListener("install", (event) => {
  event.waitUntil(
    caches
      .open(SHELL)
      .then((cache) => cache.addAll(PRECACHE))
      .then(() => self.skipWaiting()),
  );
});

self.addEventListener("activate", (event) => {
  event.waitUntil(
    caches
      .keys()
      .then((keys) => Promise.all(keys.filter((k) => k !== SHELL).map((k) => caches.delete(k))))
      .then(() => self.clients.claim()),
  );
});

/** Only the shell: same origin, GET, not the API nor the socket. */
function isShell(url, request) {
  if (request.method !== "GET" || url.origin !== self.location.origin) return false;
  if (url.pathname.startsWith("/api/") || url.pathname === "/api" || url.pathname.startsWith("/ws"))
    return false;
  return true;
}

self.addEventListener("fetch", (event) => {
  const request = event.request;
  const url = new URL(request.url);
  if (!isShell(url, request)) return;
  if (request.mode === "navigate") {
    // Pages: the network first (a new build is picked up), the cached shell or the offline page without one.
    event.respondWith(
      fetch(request)
        .then((response) => {
          if (response.ok) {
            const copy = response.clone();
            caches.open(SHELL).then((cache) => cache.put("/", copy));
          }
          return response;
        })
        .catch(() => caches.match("/").then((shell) => shell || caches.match("/offline.html"))),
    );
    return;
  }
  if (url.pathname.startsWith("/assets/")) {
    // Hashed file names never change: the cache first.
    event.respondWith(
      caches.match(request).then(
        (hit) =>
          hit ||
          fetch(request).then((response) => {
            if (response.ok) {
              const copy = response.clone();
              caches.open(SHELL).then((cache) => cache.put(request, copy));
            }
            return response;
          }),
      ),
    );
    return;
  }
  if (PRECACHE.includes(url.pathname)) {
    event.respondWith(caches.match(request).then((hit) => hit || fetch(request)));
  }
});

/*
 * A click on a notification (an answer, a mention, an approval): the app's open window shows the
 * message (the page navigates on its own); without one, a new window opens the chat.
 */
self.addEventListener("notificationclick", (event) => {
  event.notification.close();
  const data = event.notification.data || {};
  if (typeof data.channelId !== "string" || data.channelId === "") return;
  const path = `/c/${encodeURIComponent(data.channelId)}`;
  event.waitUntil(
    self.clients.matchAll({ type: "window", includeUncontrolled: true }).then((windows) => {
      const open = windows.find((w) => new URL(w.url).origin === self.location.origin);
      if (!open) return self.clients.openWindow(path);
      open.postMessage({ type: "open-notification", channelId: data.channelId, messageId: data.messageId });
      return open.focus();
    }),
  );
});
