/**
 * Wires notifications to the app: each live frame that deserves one while the tab is hidden shows
 * it, and a click (in the page, or relayed by the service worker) opens the chat and the message.
 */
import { revealMessage } from "./components/search-reveal.js";
import {
  loadNotificationPrefs,
  type NotificationTarget,
  notificationFor,
  notificationTargetOf,
  showNotification,
} from "./notifications.js";
import type { Services } from "./services.js";
import type { AppState } from "./state/app.js";
import { routePath } from "./state/route.js";
import type { ServerFrame } from "./types.js";

/** Opens the chat of a clicked notification and brings its message into view. */
export function openNotificationTarget(services: Services, target: NotificationTarget): void {
  const route = { name: "channel", channelId: target.channelId } as const;
  services.navigate(route);
  if (target.messageId === undefined) return;
  const path = routePath(route);
  void revealMessage(services, target.channelId, target.messageId, () => location.pathname === path);
}

/** Called with each live frame and the state before it applied: notifies when the tab is hidden. */
export function notifyForFrame(services: Services, frame: ServerFrame, before: AppState): void {
  if (document.visibilityState !== "hidden") return;
  const spec = notificationFor(frame, before, loadNotificationPrefs());
  if (!spec) return;
  showNotification(spec, (target) => openNotificationTarget(services, target)).catch(() => {
    // A browser that refuses to show it (permission withdrawn meanwhile): nothing to do.
  });
}

/** Listens for the service worker's "a notification was clicked" messages. */
export function listenForNotificationClicks(services: Services): void {
  navigator.serviceWorker?.addEventListener("message", (event) => {
    const target = notificationTargetOf(event.data);
    if (target) openNotificationTarget(services, target);
  });
}
