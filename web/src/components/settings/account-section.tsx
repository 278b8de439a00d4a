/** The user's own sessions: list, revoke one, or log out everywhere. */
import { useEffect, useState } from "preact/hooks";
import { formatTime } from "../../format.js";
import { useAction, useReportError, useServices } from "../../hooks.js";
import { endSession } from "../../session.js";
import type { SessionInfo } from "../../types.js";

/** The sessions section. */
export function AccountSection() {
  const services = useServices();
  const report = useReportError();
  const [sessions, setSessions] = useState<SessionInfo[] | undefined>(undefined);
  const reload = () => services.api.listSessions().then(setSessions).catch(report);
  useEffect(() => {
    void reload();
  }, [services.api]);

  const [revoke, revoking] = useAction(async (id: string) => {
    await services.api.revokeSession(id);
    await reload();
  });
  const [logoutAll, loggingOut] = useAction(async () => {
    if (!confirm("Log out of every browser and device, including this one?")) return;
    await services.api.logoutAll();
    await endSession(services, "You were logged out everywhere.");
  });

  return (
    <section class="form" data-testid="settings-sessions">
      <h3>Sessions</h3>
      {sessions === undefined ? (
        <p class="muted">Loading…</p>
      ) : (
        <ul class="session-list">
          {sessions.map((s) => (
            <li key={s.id} class="session" data-testid="session-row">
              <span>{s.userAgent ? s.userAgent.slice(0, 60) : "unknown browser"}</span>
              <span class="muted">last seen {formatTime(s.lastSeenAt)}</span>
              {s.current ? (
                <span class="badge badge-ok">this browser</span>
              ) : (
                <button
                  type="button"
                  class="btn btn-small"
                  disabled={revoking}
                  onClick={() => void revoke(s.id)}
                  data-testid="session-revoke"
                >
                  Revoke
                </button>
              )}
            </li>
          ))}
        </ul>
      )}
      <button
        type="button"
        class="btn btn-danger btn-small"
        disabled={loggingOut}
        onClick={() => void logoutAll()}
        data-testid="logout-all"
      >
        Log out everywhere
      </button>
    </section>
  );
}
