/** Logging in and out: what to load when a session starts and what to forget when it ends. */
import { errorText } from "./api.js";
import { currentLocale, isLocale, type MessageKey, setLocale, t } from "./i18n/index.js";
import type { Services } from "./services.js";
import type { SessionUser } from "./types.js";

/**
 * The one-time password just typed on the login page, kept in memory only (never storage) while the
 * server asks for a new one, so the forced change does not ask to retype it; gone once used, on
 * logout and on reload.
 */
let oneTimePassword: string | undefined;

/** The one-time password of this page's sign-in, if the forced password change still needs it. */
export function takeOneTimePassword(): string | undefined {
  return oneTimePassword;
}

/** Forgets the one-time password (after the change, or when the session ends). */
export function forgetOneTimePassword(): void {
  oneTimePassword = undefined;
}

/**
 * Starts the live connection and loads the agents and channels for a logged-in user; `password` is
 * what was typed to sign in, kept only when the server asks for a new one.
 */
export function startSession(services: Services, user: SessionUser, password?: string): void {
  oneTimePassword = user.mustChangePassword ? password : undefined;
  const { api, store, live } = services;
  // The language the person chose follows them here from any other browser or device.
  if (isLocale(user.locale)) {
    if (user.locale !== currentLocale()) void setLocale(user.locale);
  } else {
    // First sign-in: the browser's language becomes the person's (for an owner, the starters' too).
    api.setLocale(currentLocale()).catch(() => {});
  }
  store.dispatch({ type: "auth", auth: { phase: "ready", user } });
  // The owner signed in with the password the server printed once: choosing one comes first.
  if (user.mustChangePassword) services.navigate({ name: "settings", section: "account" }, { replace: true });
  live.start();
  const report = (err: unknown) => store.dispatch({ type: "notice", kind: "error", text: errorText(err) });
  api
    .listAgents()
    .then((agents) => store.dispatch({ type: "agents_loaded", agents }))
    .catch(report);
  api
    .listChannels()
    .then((list) => store.dispatch({ type: "channels_loaded", list }))
    .catch(report);
}

const SESSION_END_TEXT: Record<string, MessageKey> = {
  "signed out": "session.signedOut",
  "session revoked": "session.revoked",
  "password changed": "session.passwordChanged",
  "account disabled": "session.accountDisabled",
  "account deleted": "session.accountDeleted",
};

/** What the login page says after the server ended the session, from the socket's close reason. */
export function sessionEndText(reason: string): string {
  const key = SESSION_END_TEXT[reason];
  return key ? t(key) : t("session.ended");
}

/** Drops the session client-side and shows the login page (with a reason when it was not asked for). */
export async function endSession(services: Services, reason?: string): Promise<void> {
  forgetOneTimePassword();
  services.live.stop();
  services.api.clearSession();
  const needsSetup = await services.api
    .authStatus()
    .then((s) => s.needsSetup)
    .catch(() => false);
  services.store.dispatch({
    type: "auth",
    auth: reason ? { phase: "login", needsSetup, reason } : { phase: "login", needsSetup },
  });
}

/** Resumes an existing cookie session on page load, or shows login / first-run setup. */
export async function bootstrap(services: Services): Promise<void> {
  // Asked first so that a signed-out page makes no request that fails (no 401 in its console).
  const status = await services.api.authStatus().catch(() => undefined);
  if (status?.signedIn === false) {
    services.store.dispatch({ type: "auth", auth: { phase: "login", needsSetup: status.needsSetup } });
    return;
  }
  try {
    const { user } = await services.api.me();
    startSession(services, user);
  } catch {
    await endSession(services);
  }
}
