/**
 * An MCP App in the answer: the tool's `ui://` resource in a sandboxed iframe (`allow-scripts` only,
 * loaded from the server, which adds the app's own sandboxing CSP: an opaque origin that cannot read
 * the page's cookies, storage or DOM), bridged with the MCP Apps host protocol (ext-apps' AppBridge
 * over postMessage): the call's input and result go in, size changes and links come out, and the
 * app's `tools/call` requests go to the server, which runs them under the agent's rules. A call that
 * asks first shows Approve / Always allow / Decline under the app; nothing else the app sends reaches
 * the page.
 */
import type { AppBridge, McpUiStyles } from "@modelcontextprotocol/ext-apps/app-bridge";
import { useEffect, useRef, useState } from "preact/hooks";
import { errorText } from "../api.js";
import { useServices } from "../hooks.js";
import { t } from "../i18n/index.js";
import type { ToolCallView } from "../state/chat.js";
import type { McpAppCallOutcome, McpAppCallResult } from "../types.js";

const MIN_HEIGHT = 48;
const MAX_HEIGHT = 720;
const FIRST_HEIGHT = 180;

/** An app's call waiting for the person's approval, with the app's pending promise. */
interface Ask {
  approvalId: string;
  tool: string;
  summary: string;
  reason: string;
  settle: (result: McpAppCallResult) => void;
}

type AppLink = NonNullable<ToolCallView["app"]>;

/** Light or dark, as the page shows it now. */
function pageTheme(): "light" | "dark" {
  const chosen = document.documentElement.dataset.theme;
  if (chosen === "light" || chosen === "dark") return chosen;
  return window.matchMedia?.("(prefers-color-scheme: dark)").matches ? "dark" : "light";
}

/** The page's colours, fonts and radius as the MCP Apps style variables (a subset; apps fall back on theirs). */
function hostStyles(): McpUiStyles {
  const css = getComputedStyle(document.documentElement);
  const value = (name: string) => css.getPropertyValue(name).trim() || undefined;
  const styles: Partial<McpUiStyles> = {
    "--color-background-primary": value("--panel"),
    "--color-background-secondary": value("--panel-2"),
    "--color-text-primary": value("--text"),
    "--color-text-secondary": value("--muted"),
    "--color-border-primary": value("--border"),
    "--font-sans": value("--font"),
    "--font-mono": value("--mono"),
    "--border-radius-md": value("--radius"),
  };
  // Every key is optional on the wire; the type lists them all (it is generated for zod).
  return styles as McpUiStyles;
}

function errorResult(text: string): McpAppCallResult {
  return { content: [{ type: "text", text }], isError: true };
}

/** The app of one finished tool call of a run in a channel. */
export function McpAppFrame({
  call,
  app,
  channelId,
  runId,
}: {
  call: ToolCallView;
  app: AppLink;
  channelId: string;
  runId: string;
}) {
  const { api } = useServices();
  const frame = useRef<HTMLIFrameElement>(null);
  const [connected, setConnected] = useState(false);
  const [height, setHeight] = useState(FIRST_HEIGHT);
  const [ask, setAsk] = useState<Ask | undefined>(undefined);
  const [sending, setSending] = useState(false);
  const [problem, setProblem] = useState<string | undefined>(undefined);
  const src = api.mcpAppUrl(channelId, runId, call.callId);
  // The latest call and ask, for the bridge's callbacks (set up once per app).
  const latest = useRef({ call, ask });
  latest.current = { call, ask };

  useEffect(() => {
    const win = frame.current?.contentWindow;
    if (!win) return;
    let bridge: AppBridge | undefined;
    let closed = false;
    const outcomeOf = (outcome: McpAppCallOutcome): Promise<McpAppCallResult> => {
      if (outcome.status === "done") return Promise.resolve(outcome.result);
      return new Promise((settle) => setAsk({ ...outcome, settle }));
    };
    void (async () => {
      // Loaded only where an answer has an app: the bridge brings the MCP protocol classes with it.
      const { AppBridge, PostMessageTransport } = await import("@modelcontextprotocol/ext-apps/app-bridge");
      if (closed) return;
      bridge = new AppBridge(
        null,
        { name: "Dimsum", version: "1" },
        { openLinks: {}, serverTools: {}, logging: {} },
        {
          hostContext: {
            theme: pageTheme(),
            styles: { variables: hostStyles() },
            displayMode: "inline",
            availableDisplayModes: ["inline"],
            platform: "web",
            locale: navigator.language,
            timeZone: Intl.DateTimeFormat().resolvedOptions().timeZone,
            containerDimensions: { maxHeight: MAX_HEIGHT },
          },
        },
      );
      const b = bridge;
      b.oninitialized = () => {
        const current = latest.current.call;
        void b.sendToolInput({ arguments: (current.args ?? {}) as Record<string, unknown> });
        void b.sendToolResult({
          content: [{ type: "text", text: current.output ?? "" }],
          ...(isObject(app.structuredContent) ? { structuredContent: app.structuredContent } : {}),
          ...(current.status === "error" ? { isError: true } : {}),
        });
      };
      b.onsizechange = ({ height: h }) => {
        if (typeof h === "number") setHeight(Math.min(MAX_HEIGHT, Math.max(MIN_HEIGHT, Math.ceil(h))));
      };
      b.oncalltool = async (params) => {
        try {
          const outcome = await api.callMcpAppTool(
            channelId,
            runId,
            call.callId,
            params.name,
            params.arguments ?? {},
          );
          return await outcomeOf(outcome);
        } catch (err) {
          return errorResult(errorText(err));
        }
      };
      b.onopenlink = async ({ url }) => {
        // Only web links, in a new tab that cannot reach back into the chat.
        if (!/^https?:\/\//i.test(url)) return { isError: true };
        window.open(url, "_blank", "noopener,noreferrer");
        return {};
      };
      // Messages into the conversation and model context are not offered (no capability declared).
      b.onmessage = async () => ({ isError: true });
      await b.connect(new PostMessageTransport(win, win));
      if (!closed) setConnected(true);
    })().catch((err: unknown) => setProblem(t("mcpApp.startFailed", { error: errorText(err) })));
    return () => {
      closed = true;
      latest.current.ask?.settle(errorResult("The app was closed before the call was approved."));
      void bridge?.close();
    };
  }, [api, app, channelId, runId, call.callId]);

  const decide = async (decision: "approve" | "always" | "reject") => {
    if (!ask || sending) return;
    setSending(true);
    setProblem(undefined);
    try {
      const outcome = await api.decideMcpAppCall(channelId, runId, call.callId, ask.approvalId, {
        decision: decision === "reject" ? "reject" : "approve",
        ...(decision === "always" ? { always: true } : {}),
      });
      ask.settle(outcome.status === "done" ? outcome.result : errorResult("The call was not approved."));
      setAsk(undefined);
    } catch (err) {
      setProblem(t("approval.notSent", { error: errorText(err) }));
    } finally {
      setSending(false);
    }
  };

  return (
    <div class="mcp-app" data-testid="mcp-app" data-server={app.server} data-connected={String(connected)}>
      <iframe
        ref={frame}
        class="mcp-app-frame"
        title={`${call.name} app`}
        sandbox="allow-scripts"
        referrerpolicy="no-referrer"
        // The bridge listens before the app starts, so its first message is not missed.
        src={connected ? src : "about:blank"}
        style={{ height: `${height}px` }}
        data-testid="mcp-app-frame"
      />
      {ask && (
        <section class="approval mcp-app-ask" data-testid="mcp-app-approval" aria-label={t("mcpApp.asks")}>
          <div class="approval-head">
            <span class="tool-dot dot-waiting" aria-hidden="true" />
            <span class="tool-name">{ask.tool}</span>
            <span class="approval-asks muted">{t("mcpApp.wantsRun")}</span>
          </div>
          <pre class="approval-summary">{ask.summary}</pre>
          {ask.reason && <p class="approval-reason muted">{ask.reason}.</p>}
          <div class="elicit-actions approval-actions">
            <button
              type="button"
              class="btn btn-small btn-primary"
              disabled={sending}
              onClick={() => void decide("approve")}
              data-testid="mcp-app-approve"
            >
              {t("approval.approve")}
            </button>
            <button
              type="button"
              class="btn btn-small"
              disabled={sending}
              title={t("approval.alwaysTitle", { tool: ask.tool })}
              onClick={() => void decide("always")}
              data-testid="mcp-app-always"
            >
              {t("approval.alwaysAllow")}
            </button>
            <button
              type="button"
              class="btn btn-small btn-danger"
              disabled={sending}
              onClick={() => void decide("reject")}
              data-testid="mcp-app-decline"
            >
              {t("sampling.decline")}
            </button>
          </div>
        </section>
      )}
      {problem && (
        <p class="elicit-error" role="alert" data-testid="mcp-app-problem">
          {problem}
        </p>
      )}
    </div>
  );
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
