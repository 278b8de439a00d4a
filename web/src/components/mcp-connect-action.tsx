/**
 * Under a failed MCP tool call whose server needs the person's own sign-in, or a wider scope of it
 * (step-up): "Connect again" right there, running the same browser flow as Settings → MCP servers
 * (the authorization server opens in a new tab) and saying when the connection is back.
 */
import { useEffect, useState } from "preact/hooks";
import { useAction, useServices } from "../hooks.js";
import { t } from "../i18n/index.js";

/** What the failure says the server needs; undefined when it is not a sign-in problem. */
export interface McpSignInNeed {
  server: string;
  /** The scope the server asked for (step-up); absent when there is no valid sign-in at all. */
  scope?: string;
}

// The messages of src/mcp/oauth/provider.ts.
const NEEDS =
  /MCP server "([a-z0-9_-]+)" (?:needs more access: it asks for scope "([^"]+)"|needs you to sign in)/;

export function mcpSignInNeed(output: string | undefined): McpSignInNeed | undefined {
  const match = output ? NEEDS.exec(output) : null;
  if (!match?.[1]) return undefined;
  return match[2] ? { server: match[1], scope: match[2] } : { server: match[1] };
}

interface Mine {
  name: string;
  status: string;
  needsScope?: string;
}

const POLL_MS = 1000;
const POLL_LIMIT = 300;

type State = "unknown" | "needed" | "waiting" | "connected";

/** The action; shows nothing to people who cannot sign in (guests) or for servers that are not theirs. */
export function McpConnectAction({ need }: { need: McpSignInNeed }) {
  const { api } = useServices();
  const [state, setState] = useState<State>("unknown");
  const check = async (): Promise<Mine | undefined> => {
    const mine = await api.request<Mine[]>("GET", "/api/mcp/mine");
    return mine.find((s) => s.name === need.server);
  };
  const ready = (server: Mine | undefined) => server?.status === "connected" && !server.needsScope;
  // An old failure whose server is connected again needs no action.
  useEffect(() => {
    let gone = false;
    check()
      .then((server) => {
        if (!gone && server) setState(ready(server) ? "connected" : "needed");
      })
      .catch(() => undefined);
    return () => {
      gone = true;
    };
  }, [need.server]);
  useEffect(() => {
    if (state !== "waiting") return;
    let polls = 0;
    const timer = setInterval(async () => {
      polls++;
      const server = await check().catch(() => undefined);
      if (ready(server)) setState("connected");
      else if (polls >= POLL_LIMIT) setState("needed");
    }, POLL_MS);
    return () => clearInterval(timer);
  }, [state]);
  const [connect, starting] = useAction(async () => {
    const started = await api.request<{ authorizationUrl?: string }>(
      "POST",
      `/api/mcp/${encodeURIComponent(need.server)}/signin`,
    );
    if (started.authorizationUrl) {
      window.open(started.authorizationUrl, "_blank", "noopener");
      setState("waiting");
    } else {
      setState("connected");
    }
  });

  if (state === "unknown") return null;
  return (
    <div
      class="mcp-connect-action"
      data-testid="mcp-connect-action"
      data-mcp={need.server}
      data-state={state}
      role="status"
    >
      {state === "connected" ? (
        <span>
          <span aria-hidden="true">✓ </span>
          <strong>{need.server}</strong> is connected — ask again to retry.
        </span>
      ) : (
        <>
          <span>
            {need.scope ? (
              <>
                <strong>{need.server}</strong> {t("mcpConnect.moreAccess")} (<code>{need.scope}</code>).
              </>
            ) : (
              <>
                <strong>{need.server}</strong> {t("mcpConnect.signIn")}
              </>
            )}
          </span>
          <button
            type="button"
            class="btn btn-small btn-primary"
            disabled={starting || state === "waiting"}
            onClick={() => void connect()}
            data-testid="mcp-connect-action-button"
          >
            {state === "waiting"
              ? t("mcpConnect.waiting")
              : need.scope
                ? t("mcpConnect.again")
                : t("mcpConnect.connect")}
          </button>
        </>
      )}
    </div>
  );
}
