/** Entry point: builds the services, applies the theme, renders the app and resumes the session. */
import "./styles/app.css";
import { render } from "preact";
import { ApiClient } from "./api.js";
import { createBrowserSocket, liveUrl } from "./browser-socket.js";
import { App } from "./components/app.js";
import { initialLocale, setLocale } from "./i18n/index.js";
import { LiveConnection } from "./live.js";
import { listenForNotificationClicks, notifyForFrame } from "./notify-live.js";
import type { Services } from "./services.js";
import { bootstrap, endSession, sessionEndText } from "./session.js";
import { appReducer, initialAppState } from "./state/app.js";
import { routePath } from "./state/route.js";
import { createStore } from "./state/store.js";
import { applyTheme, loadTheme } from "./theme.js";

applyTheme(loadTheme());
// The Chinese catalogue is fetched before the first render, so the page never flashes English (a
// promise, not a top-level await: that would make the bundler split shared code out of the entry).
const localeReady = setLocale(initialLocale(), false).catch(() => {
  // The catalogue did not load (offline?): the page starts in English.
});

const store = createStore(appReducer, initialAppState());
let expiring = false;
const sessionLost = (reason = "") => {
  if (expiring || store.getState().auth.phase !== "ready") return;
  expiring = true;
  void endSession(services, sessionEndText(reason)).finally(() => {
    expiring = false;
  });
};
const api = new ApiClient({ onUnauthenticated: () => sessionLost() });
const live = new LiveConnection(api, store, {
  url: liveUrl(location),
  createSocket: createBrowserSocket,
  onUnauthorized: sessionLost,
  // The open chat is no longer readable: leave it (the notice says why).
  onChannelLost: () => services.navigate({ name: "home" }, { replace: true }),
  onFrame: (frame, before) => notifyForFrame(services, frame, before),
});
const services: Services = {
  api,
  store,
  live,
  navigate(route, options) {
    const path = routePath(route);
    if (path !== location.pathname) {
      if (options?.replace) history.replaceState(null, "", path);
      else history.pushState(null, "", path);
    }
    // pushState does not fire popstate; useRoute listens for it, so announce the change.
    window.dispatchEvent(new PopStateEvent("popstate"));
  },
};

const root = document.getElementById("app");
if (!root) throw new Error("index.html has no #app element; the UI cannot start.");
void localeReady.then(() => {
  render(<App services={services} />, root);
  void bootstrap(services);
});

// The installable app: a service worker keeps the app shell (never API answers) and an offline page.
if ("serviceWorker" in navigator && window.isSecureContext) {
  navigator.serviceWorker.register("/sw.js").catch(() => {
    // Without it the app works as before, only not offline.
  });
  listenForNotificationClicks(services);
}
