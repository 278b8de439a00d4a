/**
 * Settings → Notifications: this browser's notifications when the tab is hidden (an agent answers in
 * a direct chat, someone mentions you, a run waits for your approval). Turning them on asks the
 * browser's permission; the choices are kept in this browser only.
 */
import { useState } from "preact/hooks";
import {
  loadNotificationPrefs,
  type NotificationKind,
  type NotificationPrefs,
  notificationPermission,
  saveNotificationPrefs,
  showNotification,
} from "../../notifications.js";

const KINDS: ReadonlyArray<{ kind: NotificationKind; label: string }> = [
  { kind: "answers", label: "An agent answers in a direct chat" },
  { kind: "mentions", label: "Someone mentions you (@your name) in a group" },
  { kind: "approvals", label: "A run waits for your approval" },
];

function permissionText(permission: NotificationPermission | "unsupported"): string {
  switch (permission) {
    case "granted":
      return "This browser may show Dimsum's notifications.";
    case "denied":
      return "This browser blocks Dimsum's notifications. Allow them in the site settings (the icon left of the address), then reload.";
    case "default":
      return "Turning them on asks this browser for permission.";
    case "unsupported":
      return "This browser cannot show notifications here (they need HTTPS or localhost).";
  }
}

export function NotificationsSection() {
  const [prefs, setPrefs] = useState<NotificationPrefs>(loadNotificationPrefs);
  const [permission, setPermission] = useState(notificationPermission);
  const [status, setStatus] = useState<string | undefined>(undefined);
  const update = (next: NotificationPrefs) => {
    saveNotificationPrefs(next);
    setPrefs(next);
  };
  const turnOn = async () => {
    setStatus(undefined);
    const answer = permission === "granted" ? "granted" : await Notification.requestPermission();
    setPermission(answer);
    if (answer === "granted") {
      update({ ...prefs, enabled: true });
      setStatus("Notifications are on for this browser.");
    }
  };
  const test = () => {
    showNotification(
      {
        kind: "answers",
        title: "Dimsum",
        body: "Notifications work in this browser.",
        tag: "test",
        channelId: "",
      },
      () => undefined,
    )
      .then(() => setStatus("Test notification sent."))
      .catch((err: unknown) =>
        setStatus(`The browser refused: ${err instanceof Error ? err.message : String(err)}`),
      );
  };
  const on = prefs.enabled && permission === "granted";
  return (
    <section class="form" data-testid="settings-notifications" data-state={on ? "on" : "off"}>
      <h3>Notifications</h3>
      <p class="muted section-intro">
        When this tab is hidden, Dimsum can tell you that something needs you. Clicking a notification opens
        the message. These choices apply to this browser only.
      </p>
      <p class="muted" data-testid="notification-permission" data-permission={permission}>
        {permissionText(permission)}
      </p>
      {on ? (
        <>
          <fieldset class="field">
            <legend>Notify me when</legend>
            {KINDS.map(({ kind, label }) => (
              <label class="check" key={kind}>
                <input
                  type="checkbox"
                  checked={prefs[kind]}
                  onChange={(e) => update({ ...prefs, [kind]: e.currentTarget.checked })}
                  data-testid={`notify-${kind}`}
                />
                {label}
              </label>
            ))}
          </fieldset>
          <div class="form-actions">
            <button type="button" class="btn btn-small" onClick={test} data-testid="notifications-test">
              Send a test notification
            </button>
            <button
              type="button"
              class="btn btn-small"
              onClick={() => {
                update({ ...prefs, enabled: false });
                setStatus("Notifications are off for this browser.");
              }}
              data-testid="notifications-off"
            >
              Turn off
            </button>
          </div>
        </>
      ) : (
        permission !== "unsupported" &&
        permission !== "denied" && (
          <div class="form-actions">
            <button type="button" class="btn btn-primary" onClick={turnOn} data-testid="notifications-on">
              Turn on notifications
            </button>
          </div>
        )
      )}
      {status && (
        <p class="notice notice-info" role="status" data-testid="notifications-status">
          {status}
        </p>
      )}
    </section>
  );
}
