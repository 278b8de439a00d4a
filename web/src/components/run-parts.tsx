/** The pieces every answer shows: its lifecycle badge, a stop button, and its parts in order. */
import { endPartOf } from "../../../src/team/message-parts.js";
import { useAction, useServices } from "../hooks.js";
import { t } from "../i18n/index.js";
import { isTerminal, type RunView } from "../state/chat.js";
import type { AgentRecord, MessagePart, RunStatus } from "../types.js";
import { MarkdownView } from "./markdown-view.js";
import { MinutesCard } from "./minutes-card.js";
import { WithSettingsLinks } from "./settings-links.js";
import { ToolCard } from "./tool-card.js";

const BADGE_LABEL: Record<RunStatus, () => string> = {
  queued: () => t("runs.status.queued"),
  running: () => t("runs.status.running"),
  waiting: () => t("runs.status.waiting"),
  done: () => t("runs.status.done"),
  error: () => t("runs.status.error"),
  cancelled: () => t("runs.status.cancelled"),
};

/** The run's lifecycle badge. */
export function RunBadge({ status }: { status: RunStatus | undefined }) {
  const shown = status ?? "running";
  return (
    <span class={`badge badge-run badge-${shown}`} data-testid="run-status" data-status={shown}>
      {shown === "running" && <span class="spinner" aria-hidden="true" />}
      {BADGE_LABEL[shown]()}
    </span>
  );
}

/** Cancels this one run; other runs in the channel keep going. */
export function StopButton({ runId }: { runId: string }) {
  const { api, store } = useServices();
  const [stop, busy] = useAction(async () => {
    const run = await api.cancelRun(runId);
    store.dispatch({ type: "run", run });
  });
  return (
    <button
      type="button"
      class="btn btn-small btn-danger"
      onClick={() => void stop()}
      disabled={busy}
      data-testid="run-stop"
      data-run-id={runId}
    >
      ■ Stop
    </button>
  );
}

export interface PartsProps {
  parts: readonly MessagePart[];
  /** The run the parts are of (where approvals of its tool calls are sent), when known. */
  runId?: string | undefined;
  /** Live runs of the page, for called agents whose card has no stored parts yet. */
  runs: Record<string, RunView>;
  agents: Map<string, AgentRecord>;
  /** The parts are still streaming (the last text part shows a cursor). */
  live: boolean;
}

/**
 * A message's parts in order: text, reasoning (collapsed), tool cards, called agents' runs (nested
 * cards) and the error or stop that ended it. Stored and live answers both render through here.
 */
export function Parts({ parts, runId, runs, agents, live }: PartsProps) {
  const lastText = parts.reduce((at, p, i) => (p.type === "text" ? i : at), -1);
  return (
    <div class="msg-parts" data-testid="message-parts">
      {parts.map((part, i) => {
        const key = `${part.type}-${i}`;
        switch (part.type) {
          case "text":
            return (
              <MarkdownView
                key={key}
                text={part.text}
                class={`msg-body${live && i === lastText && i === parts.length - 1 ? " streaming" : ""}`}
                testId={live ? "run-text" : "message-text"}
              />
            );
          case "reasoning":
            return <Reasoning key={key} text={part.text} thinking={live && i === parts.length - 1} />;
          case "tool":
            return <ToolCard key={key} call={part} runId={runId} />;
          case "agent_run":
            return <AgentRunCard key={key} part={part} runs={runs} agents={agents} />;
          case "error":
            return (
              <div key={key} class="run-error" data-testid="run-error" role="alert">
                <strong>{t("runs.error")}</strong> <WithSettingsLinks text={part.message} />
                {part.hint && (
                  <span class="run-error-hint">
                    {" "}
                    — <WithSettingsLinks text={part.hint} />
                  </span>
                )}
              </div>
            );
          case "stopped":
            return (
              <p key={key} class="run-stopped muted" data-testid="run-stopped">
                ■ {part.reason ? t("runs.stoppedWhy", { reason: part.reason }) : t("runs.stopped")}
              </p>
            );
          case "resumed":
            return (
              <p key={key} class="run-resumed muted" data-testid="run-resumed">
                ↻ {t("runs.resumed")}
              </p>
            );
          case "model_fallback":
            return (
              <p key={key} class="run-fallback muted" data-testid="run-fallback">
                ↪{" "}
                {t(part.skipped ? "runs.fallbackSkipped" : "runs.fallbackFailed", {
                  from: part.from,
                  reason: part.reason,
                  to: part.to,
                })}
              </p>
            );
          case "minutes":
            return (
              <MinutesCard
                key={key}
                meetingId={part.meetingId}
                topic={part.topic}
                minutes={part.minutes}
                note={part.note}
                agents={agents}
              />
            );
          default:
            return null;
        }
      })}
    </div>
  );
}

function Reasoning({ text, thinking }: { text: string; thinking: boolean }) {
  return (
    <details class="reasoning" data-testid="reasoning">
      <summary>
        {thinking ? t("runs.thinking") : t("runs.reasoning")}{" "}
        <span class="muted">{t("runs.chars", { count: text.length })}</span>
      </summary>
      <div class="reasoning-text" data-testid="reasoning-text">
        {text}
      </div>
    </details>
  );
}

/** The run of an agent this answer called: its own parts, nested where the call happened. */
function AgentRunCard({
  part,
  runs,
  agents,
}: {
  part: Extract<MessagePart, { type: "agent_run" }>;
  runs: Record<string, RunView>;
  agents: Map<string, AgentRecord>;
}) {
  const view = runs[part.runId];
  const live = part.parts === undefined;
  const parts = part.parts ?? view?.parts ?? [];
  const status = live ? (view?.run?.status ?? part.status) : part.status;
  const agent = agents.get(part.agentId);
  return (
    <details
      class="agent-run"
      data-testid="agent-run"
      data-run-id={part.runId}
      data-agent-id={part.agentId}
      open={live && !isTerminal(status)}
    >
      <summary class="agent-run-head">
        <span class="muted agent-run-label">{t("runs.asked")}</span>
        <span class="avatar avatar-small" aria-hidden="true">
          {agent?.emoji ?? "🤖"}
        </span>
        <span class="author">{agent?.name ?? part.agentId}</span>
        <RunBadge status={status} />
      </summary>
      <div class="agent-run-body">
        <Parts
          parts={parts}
          runId={part.runId}
          runs={runs}
          agents={agents}
          live={live && !isTerminal(status)}
        />
      </div>
    </details>
  );
}

/** A badge for a stored answer that did not end normally (a normal answer shows none). */
export function EndBadge({ parts }: { parts: readonly MessagePart[] }) {
  const end = endPartOf(parts);
  if (!end) return null;
  return <RunBadge status={end.type === "stopped" ? "cancelled" : "error"} />;
}

/** Badge and (while active) stop button, for a message or bubble header. */
export function RunControls({ view }: { view: RunView }) {
  const status = view.run?.status;
  return (
    <span class="run-controls">
      <RunBadge status={status} />
      {!isTerminal(status) && <StopButton runId={view.id} />}
    </span>
  );
}
