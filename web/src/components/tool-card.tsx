/**
 * One tool call of a run: name, status and duration at a glance; arguments and result when opened.
 * A call waiting for approval is an approval card instead; a decided one says how under its card.
 * A call whose tool has an MCP App shows the app under its card.
 */
import { formatDuration, formatJson, oneLine } from "../format.js";
import { useSelector } from "../hooks.js";
import { t } from "../i18n/index.js";
import type { ToolCallView } from "../state/chat.js";
import { ApprovalCard, ApprovalOutcome } from "./approval-card.js";
import { McpAppFrame } from "./mcp-app-frame.js";
import { McpConnectAction, mcpSignInNeed } from "./mcp-connect-action.js";

const STATUS_LABEL: Record<ToolCallView["status"], () => string> = {
  running: () => t("tools.status.running"),
  waiting: () => t("tools.status.waiting"),
  ok: () => t("tools.status.ok"),
  error: () => t("tools.status.error"),
};

/** A tool-call card; a failed MCP call that needs the person's sign-in offers to connect under it. */
export function ToolCard({ call, runId }: { call: ToolCallView; runId?: string | undefined }) {
  const approval = call.approval;
  const channelId = useSelector((s) => s.chat?.channelId);
  if (approval?.state === "pending" && call.status === "waiting") {
    return <ApprovalCard call={call} approval={approval} runId={runId} />;
  }
  const args = formatJson(call.args);
  const need = call.status === "error" ? mcpSignInNeed(call.output) : undefined;
  return (
    <>
      <details
        class={`tool-card tool-${call.status}`}
        data-testid="tool-card"
        data-status={call.status}
        data-tool={call.name}
        data-call-id={call.callId}
      >
        <summary class="tool-summary">
          <span class={`tool-dot dot-${call.status}`} aria-hidden="true" />
          <span class="tool-name" data-testid="tool-name">
            {call.name}
          </span>
          <span class="tool-args-preview muted">{oneLine(args, 60)}</span>
          <span class="tool-meta">
            {call.durationMs !== undefined && (
              <span class="tool-duration" data-testid="tool-duration">
                {formatDuration(call.durationMs)}
              </span>
            )}
            <span class={`badge badge-${call.status}`} data-testid="tool-status">
              {STATUS_LABEL[call.status]()}
            </span>
          </span>
        </summary>
        <div class="tool-body">
          <h4>{t("tools.arguments")}</h4>
          <pre class="tool-pre" data-testid="tool-args">
            {args}
          </pre>
          <h4>{t("tools.result")}</h4>
          {call.output === undefined ? (
            <p class="muted">{t("tools.waiting")}</p>
          ) : (
            <pre class="tool-pre" data-testid="tool-output">
              {call.output}
            </pre>
          )}
        </div>
      </details>
      {approval && <ApprovalOutcome approval={approval} ended={call.status !== "waiting"} />}
      {call.app && call.status === "ok" && runId !== undefined && channelId !== undefined && (
        <McpAppFrame call={call} app={call.app} channelId={channelId} runId={runId} />
      )}
      {need && <McpConnectAction need={need} />}
    </>
  );
}
