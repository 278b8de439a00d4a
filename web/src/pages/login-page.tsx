/** Login form, or the first-run form that creates the owner account when no user exists yet. */
import { useEffect, useState } from "preact/hooks";
import { ApiError, errorText } from "../api.js";
import { LanguageSelect } from "../components/language-select.js";
import { useServices } from "../hooks.js";
import { currentLocale, t } from "../i18n/index.js";
import { startSession } from "../session.js";

export interface LoginPageProps {
  needsSetup: boolean;
  reason?: string | undefined;
}

/** The page shown to anyone not logged in. */
export function LoginPage({ needsSetup, reason }: LoginPageProps) {
  const services = useServices();
  const [username, setUsername] = useState(needsSetup ? "owner" : "");
  const [password, setPassword] = useState("");
  const [confirm, setConfirm] = useState("");
  const [error, setError] = useState<string | undefined>(undefined);
  const [busy, setBusy] = useState(false);
  // Seconds until the server takes another attempt (after too many wrong passwords).
  const [wait, setWait] = useState(0);
  useEffect(() => {
    if (wait <= 0) return;
    const timer = setTimeout(() => setWait(wait - 1), 1000);
    return () => clearTimeout(timer);
  }, [wait]);

  const submit = async (event: Event) => {
    event.preventDefault();
    if (needsSetup && password !== confirm) {
      setError(t("login.passwordsDiffer"));
      return;
    }
    setBusy(true);
    setError(undefined);
    try {
      const result = needsSetup
        ? await services.api.setup(username.trim(), password, currentLocale())
        : await services.api.login(username.trim(), password);
      startSession(services, result.user, password);
    } catch (err) {
      setError(errorText(err));
      // Sign-in is paused: the button waits out the pause, so a right password is never refused.
      if (err instanceof ApiError && err.retryAfterSeconds !== undefined) setWait(err.retryAfterSeconds);
    } finally {
      setBusy(false);
    }
  };

  return (
    <main class="login" data-testid="login-page">
      <form class="login-card" onSubmit={submit} data-testid={needsSetup ? "setup-form" : "login-form"}>
        <h1 class="login-title">
          <span aria-hidden="true">🥟</span> Dimsum
        </h1>
        {needsSetup ? (
          <p class="muted">{t("login.welcomeSetup")}</p>
        ) : (
          <p class="muted">{t("login.intro")}</p>
        )}
        {reason && (
          <p class="notice notice-info" data-testid="login-reason">
            {reason}
          </p>
        )}
        <label class="field">
          <span>{t("login.username")}</span>
          <input
            name="username"
            autocomplete="username"
            required
            value={username}
            onInput={(e) => setUsername(e.currentTarget.value)}
            data-testid="login-username"
          />
        </label>
        <label class="field">
          <span>{t("login.password")}</span>
          <input
            name="password"
            type="password"
            autocomplete={needsSetup ? "new-password" : "current-password"}
            required
            minLength={needsSetup ? 8 : undefined}
            value={password}
            onInput={(e) => setPassword(e.currentTarget.value)}
            data-testid="login-password"
          />
        </label>
        {needsSetup && (
          <label class="field">
            <span>{t("login.repeatPassword")}</span>
            <input
              name="confirm"
              type="password"
              autocomplete="new-password"
              required
              value={confirm}
              onInput={(e) => setConfirm(e.currentTarget.value)}
              data-testid="setup-confirm"
            />
          </label>
        )}
        {error && (
          <p class="form-error" role="alert" data-testid="login-error">
            {error}
          </p>
        )}
        <button
          class="btn btn-primary"
          type="submit"
          disabled={busy || wait > 0}
          data-testid="login-submit"
          data-wait={wait > 0 ? wait : undefined}
        >
          {needsSetup ? t("login.createOwner") : busy ? t("login.signingIn") : t("login.signIn")}
          {wait > 0 && ` (${wait} s)`}
        </button>
        <LanguageSelect />
      </form>
    </main>
  );
}
