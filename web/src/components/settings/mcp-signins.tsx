/**
 * The person's own MCP sign-ins: servers each member connects with their own account. "Connect"
 * opens the authorization server in a new tab (the Dimsum server receives the redirect) and polls
 * until the connection is up; "Sign out" revokes it. A server that answered a call with
 * `insufficient_scope` shows "needs more access" and "Connect again", which asks for the wider scope.
 */

import { useEffect, useRef, useState } from "preact/hooks";
import { useAction, useReportError, useServices } from "../../hooks.js";
import { t } from "../../i18n/index.js";

interface PersonalServer {
  name: string;
  status: string;
  tools: number;
  error?: string;
  /** The wider scope the server asked for, not granted by the sign-in yet. */
  needsScope?: string;
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
      const server = list?.find((s) => s.name === waiting);
      const done = server?.status === "connected" && !server.needsScope;
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
      <h4>{t("settings.mcp.signins.title")}</h4>
      <ul class="mcp-list">
        {servers.map((server) => {
          const connected = server.status === "connected";
          const state = server.needsScope ? "needs-scope" : server.status;
          return (
            <li
              key={server.name}
              class="mcp-server"
              data-testid="mcp-signin"
              data-mcp={server.name}
              data-status={state}
            >
              <strong>{server.name}</strong>
              <span
                class={`badge badge-mcp-${server.needsScope ? "needs-scope" : server.status}`}
                data-testid="mcp-signin-status"
              >
                {waiting === server.name
                  ? t("settings.mcp.signins.waiting")
                  : server.needsScope
                    ? t("settings.mcp.signins.needsScope")
                    : connected
                      ? t("settings.mcp.signins.signedIn")
                      : t("settings.mcp.signins.notSignedIn")}
              </span>
              {connected && <span class="muted">{t("settings.mcp.toolCount", { count: server.tools })}</span>}
              {server.needsScope && (
                <span class="mcp-signin-scope" data-testid="mcp-signin-scope">
                  {`${t("settings.mcp.signins.scopeBefore")} `}
                  {server.needsScope.split(" ").map((scope, i) => (
                    <span key={scope}>
                      {i > 0 && t("settings.mcp.signins.scopeSeparator")}
                      <code>{scope}</code>
                    </span>
                  ))}
                  {` ${t("settings.mcp.signins.scopeAfter")}`}
                </span>
              )}
              {server.error && server.status !== "disconnected" && (
                <span class="run-error">{server.error}</span>
              )}
              {(!connected || server.needsScope) && (
                <button
                  type="button"
                  class={`btn btn-small${server.needsScope ? " btn-primary" : ""}`}
                  disabled={signingIn || waiting === server.name}
                  onClick={() => void signIn(server.name)}
                  data-testid="mcp-signin-button"
                >
                  {server.needsScope ? t("settings.mcp.signins.connectAgain") : t("settings.mcp.connect")}
                </button>
              )}
              {connected && (
                <button
                  type="button"
                  class="btn btn-small"
                  disabled={signingOut}
                  onClick={() => void signOut(server.name)}
                  data-testid="mcp-signout"
                >
                  {t("settings.mcp.signins.signOut")}
                </button>
              )}
            </li>
          );
        })}
      </ul>
    </div>
  );
}
