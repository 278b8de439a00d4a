/**
 * The person's own MCP sign-ins: servers each member connects with their own account. "Sign in"
 * opens the authorization server in a new tab (the Dimsum server receives the redirect) and polls
 * until the connection is up; "Sign out" revokes it.
 */
import { useEffect, useRef, useState } from "preact/hooks";
import { useAction, useReportError, useServices } from "../../hooks.js";

interface PersonalServer {
  name: string;
  status: string;
  tools: number;
  error?: string;
}

const POLL_MS = 1000;
const POLL_LIMIT = 300;

/** `empty`: what to show when no server needs the person's own sign-in (default: nothing). */
export function McpSignIns({ empty }: { empty?: string } = {}) {
  const { api } = useServices();
  const report = useReportError();
  const [servers, setServers] = useState<PersonalServer[] | undefined>(undefined);
  const [waiting, setWaiting] = useState<string | undefined>(undefined);
  const polls = useRef(0);
  const reload = () =>
    api
      .request<PersonalServer[]>("GET", "/api/mcp/mine")
      .then((list) => {
        setServers(list);
        return list;
      })
      .catch((err: unknown) => {
        report(err);
        return undefined;
      });
  useEffect(() => {
    void reload();
  }, [api]);
  useEffect(() => {
    if (!waiting) return;
    polls.current = 0;
    const timer = setInterval(async () => {
      polls.current++;
      const list = await reload();
      const done = list?.find((s) => s.name === waiting)?.status === "connected";
      if (done || polls.current >= POLL_LIMIT) {
        setWaiting(undefined);
        clearInterval(timer);
      }
    }, POLL_MS);
    return () => clearInterval(timer);
  }, [waiting]);

  const [signIn, signingIn] = useAction(async (name: string) => {
    const started = await api.request<{ authorizationUrl?: string }>(
      "POST",
      `/api/mcp/${encodeURIComponent(name)}/signin`,
    );
    if (started.authorizationUrl) {
      window.open(started.authorizationUrl, "_blank", "noopener");
      setWaiting(name);
    } else {
      await reload();
    }
  });
  const [signOut, signingOut] = useAction(async (name: string) => {
    await api.request("DELETE", `/api/mcp/${encodeURIComponent(name)}/signin`);
    await reload();
  });

  if (!servers) return null;
  if (servers.length === 0) return empty ? <p class="muted">{empty}</p> : null;
  return (
    <div data-testid="mcp-signins">
      <h4>Your accounts</h4>
      <ul class="mcp-list">
        {servers.map((server) => (
          <li
            key={server.name}
            class="mcp-server"
            data-testid="mcp-signin"
            data-mcp={server.name}
            data-status={server.status}
          >
            <strong>{server.name}</strong>
            <span class={`badge badge-mcp-${server.status}`} data-testid="mcp-signin-status">
              {waiting === server.name
                ? "waiting for sign-in…"
                : server.status === "connected"
                  ? "signed in"
                  : "not signed in"}
            </span>
            {server.status === "connected" && (
              <span class="muted">{`${server.tools} tool${server.tools === 1 ? "" : "s"}`}</span>
            )}
            {server.error && server.status !== "disconnected" && (
              <span class="run-error">{server.error}</span>
            )}
            {server.status === "connected" ? (
              <button
                type="button"
                class="btn btn-small"
                disabled={signingOut}
                onClick={() => void signOut(server.name)}
                data-testid="mcp-signout"
              >
                Sign out
              </button>
            ) : (
              <button
                type="button"
                class="btn btn-small"
                disabled={signingIn || waiting === server.name}
                onClick={() => void signIn(server.name)}
                data-testid="mcp-signin-button"
              >
                Sign in
              </button>
            )}
          </li>
        ))}
      </ul>
    </div>
  );
}
