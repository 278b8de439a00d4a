/**
 * Settings → Notifications: this browser's notifications when the tab is hidden (an agent answers in
 * a direct chat, someone mentions you, a run waits for your approval). Turning them on asks the
 * browser's permission; the choices are kept in this browser only.
 */

import { useState } from "preact/hooks";
import { t } from "../../i18n/index.js";
import {
  loadNotificationPrefs,
  type NotificationKind,
  type NotificationPrefs,
  notificationPermission,
  saveNotificationPrefs,
  showNotification,
} from "../../notifications.js";

const KINDS: ReadonlyArray<{ kind: NotificationKind; label: () => string }> = [
  { kind: "answers", label: () => t("settings.notifications.kindAnswers") },
  { kind: "mentions", label: () => t("settings.notifications.kindMentions") },
  { kind: "approvals", label: () => t("settings.notifications.kindApprovals") },
];

function permissionText(permission: NotificationPermission | "unsupported"): string {
  switch (permission) {
    case "granted":
      return t("settings.notifications.granted");
    case "denied":
      return t("settings.notifications.denied");
    case "default":
      return t("settings.notifications.default");
    case "unsupported":
      return t("settings.notifications.unsupported");
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
      setStatus(t("settings.notifications.nowOn"));
    }
  };
  const test = () => {
    showNotification(
      {
        kind: "answers",
        title: "Dimsum",
        body: t("settings.notifications.testBody"),
        tag: "test",
        channelId: "",
      },
      () => undefined,
    )
      .then(() => setStatus(t("settings.notifications.testSent")))
      .catch((err: unknown) =>
        setStatus(
          t("settings.notifications.refused", { reason: err instanceof Error ? err.message : String(err) }),
        ),
      );
  };
  const on = prefs.enabled && permission === "granted";
  return (
    <section class="form" data-testid="settings-notifications" data-state={on ? "on" : "off"}>
      <h3>{t("settings.notifications.title")}</h3>
      <p class="muted section-intro">{t("settings.notifications.intro")}</p>
      <p class="muted" data-testid="notification-permission" data-permission={permission}>
        {permissionText(permission)}
      </p>
      {on ? (
        <>
          <fieldset class="field">
            <legend>{t("settings.notifications.notifyWhen")}</legend>
            {KINDS.map(({ kind, label }) => (
              <label class="check" key={kind}>
                <input
                  type="checkbox"
                  checked={prefs[kind]}
                  onChange={(e) => update({ ...prefs, [kind]: e.currentTarget.checked })}
                  data-testid={`notify-${kind}`}
                />
                {label()}
              </label>
            ))}
          </fieldset>
          <div class="form-actions">
            <button type="button" class="btn btn-small" onClick={test} data-testid="notifications-test">
              {t("settings.notifications.sendTest")}
            </button>
            <button
              type="button"
              class="btn btn-small"
              onClick={() => {
                update({ ...prefs, enabled: false });
                setStatus(t("settings.notifications.nowOff"));
              }}
              data-testid="notifications-off"
            >
              {t("settings.notifications.turnOff")}
            </button>
          </div>
        </>
      ) : (
        permission !== "unsupported" &&
        permission !== "denied" && (
          <div class="form-actions">
            <button type="button" class="btn btn-primary" onClick={turnOn} data-testid="notifications-on">
              {t("settings.notifications.turnOn")}
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
