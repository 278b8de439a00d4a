/** Login form, or the first-run form that creates the owner account when no user exists yet. */
import { useEffect, useState } from "preact/hooks";
import { ApiError, type AuthStatus, errorText } from "../api.js";
import { LanguageSelect } from "../components/language-select.js";
import { useServices } from "../hooks.js";
import { currentLocale, t } from "../i18n/index.js";
import { startSession } from "../session.js";

export interface LoginPageProps {
  needsSetup: boolean;
  reason?: string | undefined;
}

/** The reason a single sign-on came back refused (`/?signInError=…`), taken out of the address. */
function takeSignInError(): string | undefined {
  const params = new URLSearchParams(window.location.search);
  const error = params.get("signInError");
  if (error === null) return undefined;
  params.delete("signInError");
  const rest = params.toString();
  window.history.replaceState(
    window.history.state,
    "",
    `${window.location.pathname}${rest ? `?${rest}` : ""}`,
  );
  return error;
}

/** "Sign in with …" for each provider the server has; they lead to the provider and back. */
function SingleSignOn({ providers }: { providers: NonNullable<AuthStatus["providers"]> }) {
  if (providers.length === 0) return null;
  const back = encodeURIComponent(`${window.location.pathname}${window.location.search}`);
  return (
    <div class="sso-buttons" data-testid="sso-buttons">
      {providers.map((p) => (
        <a
          key={p.id}
          class="btn btn-block"
          href={`/api/auth/sso/${encodeURIComponent(p.id)}/start?returnTo=${back}`}
          data-testid={`sso-${p.id}`}
        >
          {t("login.signInWith", { name: p.name })}
        </a>
      ))}
      <p class="sso-or muted">
        <span>{t("login.or")}</span>
      </p>
    </div>
  );
}

/** The page shown to anyone not logged in. */
export function LoginPage({ needsSetup, reason }: LoginPageProps) {
  const services = useServices();
  const [username, setUsername] = useState(needsSetup ? "owner" : "");
  const [password, setPassword] = useState("");
  const [confirm, setConfirm] = useState("");
  const [ssoError] = useState(takeSignInError);
  const [error, setError] = useState<string | undefined>(
    ssoError ? t("login.ssoFailed", { reason: ssoError }) : undefined,
  );
  const [status, setStatus] = useState<AuthStatus | undefined>(undefined);
  useEffect(() => {
    if (needsSetup) return;
    services.api
      .authStatus()
      .then(setStatus)
      .catch(() => undefined);
  }, [needsSetup, services]);
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
        {!needsSetup && <SingleSignOn providers={status?.providers ?? []} />}
        {status?.passwordSignIn === false && (
          <p class="muted" data-testid="password-owner-only">
            {t("login.passwordOwnerOnly")}
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
