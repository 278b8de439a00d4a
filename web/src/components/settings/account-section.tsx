/**
 * Your account: change your password (the form password managers expect), then your sessions
 * (revoke one, or log out everywhere). After a first sign-in with the server's printed one-time
 * password the app opens here and says why.
 */
import { useEffect, useState } from "preact/hooks";
import { describeUserAgent, formatTime } from "../../format.js";
import { useAction, useReportError, useServices } from "../../hooks.js";
import { t } from "../../i18n/index.js";
import { endSession, forgetOneTimePassword, takeOneTimePassword } from "../../session.js";
import type { SessionInfo, SessionUser } from "../../types.js";
import { askConfirm } from "../confirm-dialog.js";
import { LanguageSelect } from "../language-select.js";
import { MessengerLink } from "./messenger-link.js";

const MIN_PASSWORD = 8;

function PasswordForm({ me, onChanged }: { me: SessionUser; onChanged: () => void }) {
  const { api, store } = useServices();
  // Right after signing in with the printed one-time password, that is the current one: not asked again.
  const [oneTime] = useState(() => (me.mustChangePassword ? takeOneTimePassword() : undefined));
  const [current, setCurrent] = useState(oneTime ?? "");
  const [next, setNext] = useState("");
  const [confirm, setConfirm] = useState("");
  const [problem, setProblem] = useState<string | undefined>(undefined);
  const [change, changing] = useAction(async () => {
    if (next.length < MIN_PASSWORD) return setProblem(t("account.passwordTooShort", { min: MIN_PASSWORD }));
    if (next !== confirm) return setProblem(t("account.passwordsDiffer"));
    if (next === current) return setProblem(t("account.passwordSame"));
    setProblem(undefined);
    await api.changePassword(current, next);
    forgetOneTimePassword();
    setCurrent("");
    setNext("");
    setConfirm("");
    store.dispatch({ type: "auth", auth: { phase: "ready", user: { ...me, mustChangePassword: false } } });
    store.dispatch({
      type: "notice",
      kind: "info",
      text: t("account.passwordChanged"),
    });
    onChanged();
  });
  return (
    <form
      class="form password-form"
      data-testid="password-form"
      onSubmit={(e) => {
        e.preventDefault();
        void change();
      }}
    >
      <h3>{t("login.password")}</h3>
      {me.mustChangePassword && (
        <p class="notice notice-warning" data-testid="one-time-password-notice">
          {t("account.oneTimeNotice")}
        </p>
      )}
      {/* Tells password managers which account the new password belongs to. */}
      <input type="text" name="username" autocomplete="username" value={me.username} readOnly hidden />
      {/* Always shown, before and after a reload: filled in when the one-time password is known. */}
      <label class="field">
        <span>{t("account.currentPassword")}</span>
        <input
          type="password"
          name="current-password"
          autocomplete="current-password"
          required
          value={current}
          onInput={(e) => setCurrent(e.currentTarget.value)}
          data-testid="password-current"
        />
      </label>
      <label class="field">
        <span>{t("account.newPassword")}</span>
        <input
          type="password"
          name="new-password"
          autocomplete="new-password"
          required
          minLength={MIN_PASSWORD}
          value={next}
          onInput={(e) => setNext(e.currentTarget.value)}
          data-testid="password-new"
        />
      </label>
      <label class="field">
        <span>{t("account.confirmPassword")}</span>
        <input
          type="password"
          name="confirm-password"
          autocomplete="new-password"
          required
          minLength={MIN_PASSWORD}
          value={confirm}
          onInput={(e) => setConfirm(e.currentTarget.value)}
          data-testid="password-confirm"
        />
      </label>
      {problem && (
        <p class="form-error" role="alert" data-testid="password-problem">
          {problem}
        </p>
      )}
      <p class="muted section-intro">{t("account.changeIntro")}</p>
      <div class="form-actions">
        <button type="submit" class="btn btn-primary" disabled={changing} data-testid="password-submit">
          {t("account.changePassword")}
        </button>
      </div>
    </form>
  );
}

function Sessions({ version }: { version: number }) {
  const services = useServices();
  const report = useReportError();
  const [sessions, setSessions] = useState<SessionInfo[] | undefined>(undefined);
  const reload = () => services.api.listSessions().then(setSessions).catch(report);
  useEffect(() => {
    void reload();
  }, [services.api, version]);

  const [revoke, revoking] = useAction(async (id: string) => {
    await services.api.revokeSession(id);
    await reload();
  });
  const [logoutAll, loggingOut] = useAction(async () => {
    const ok = await askConfirm({
      title: t("account.logoutAllTitle"),
      message: t("account.logoutAllMessage"),
      confirmLabel: t("account.logoutAll"),
    });
    if (!ok) return;
    await services.api.logoutAll();
    await endSession(services, t("account.loggedOutEverywhere"));
  });

  return (
    <section class="form" data-testid="settings-sessions">
      <h3>{t("account.sessions")}</h3>
      {sessions === undefined ? (
        <p class="muted">{t("common.loading")}</p>
      ) : (
        <ul class="session-list">
          {sessions.map((s) => (
            <li key={s.id} class="session" data-testid="session-row">
              <span class="session-agent">
                {s.userAgent ? describeUserAgent(s.userAgent) : t("account.unknownBrowser")}
              </span>
              <span class="muted">{t("account.lastSeen", { time: formatTime(s.lastSeenAt) })}</span>
              {s.current ? (
                <span class="badge badge-ok">{t("account.thisBrowser")}</span>
              ) : (
                <button
                  type="button"
                  class="btn btn-small"
                  disabled={revoking}
                  onClick={() => void revoke(s.id)}
                  data-testid="session-revoke"
                >
                  {t("account.revoke")}
                </button>
              )}
            </li>
          ))}
        </ul>
      )}
      <div>
        <button
          type="button"
          class="btn btn-danger btn-small"
          disabled={loggingOut}
          onClick={() => void logoutAll()}
          data-testid="logout-all"
        >
          {t("account.logoutAll")}
        </button>
      </div>
    </section>
  );
}

/** The account section: password, then sessions. */
export function AccountSection({ me }: { me: SessionUser }) {
  const [version, setVersion] = useState(0);
  return (
    <>
      <section class="form" data-testid="settings-language">
        <h3>{t("language.label")}</h3>
        <p class="muted section-intro">{t("language.intro")}</p>
        <LanguageSelect saveToAccount />
      </section>
      <PasswordForm me={me} onChanged={() => setVersion((v) => v + 1)} />
      <Sessions version={version} />
      {me.role !== "guest" && <MessengerLink />}
    </>
  );
}
