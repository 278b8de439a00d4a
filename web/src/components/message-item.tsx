/** A stored message, or the live bubble of a run still streaming (or ended without a message). */

import { formatTime } from "../format.js";
import { useAction, useServices } from "../hooks.js";
import { isTerminal, type RunView } from "../state/chat.js";
import type { AgentRecord, ChannelMessage, SessionUser } from "../types.js";
import { askConfirm } from "./confirm-dialog.js";
import { MarkdownView } from "./markdown-view.js";
import { RunControls, RunDetails } from "./run-parts.js";

function AgentName({ agentId, agents }: { agentId: string; agents: Map<string, AgentRecord> }) {
  const agent = agents.get(agentId);
  return (
    <>
      <span class="avatar" aria-hidden="true">
        {agent?.emoji ?? "🤖"}
      </span>
      <span class="author" data-testid="message-author">
        {agent?.name ?? (agentId || "agent")}
      </span>
    </>
  );
}

export interface MessageItemProps {
  message: ChannelMessage;
  run: RunView | undefined;
  agents: Map<string, AgentRecord>;
  me: SessionUser;
}

/** One stored message, with its run's reasoning and tool calls when this page saw them. */
export function MessageItem({ message, run, agents, me }: MessageItemProps) {
  const { api, store } = useServices();
  const { author } = message;
  const mine = author.type === "user" && author.id === me.id;
  const canDelete = mine || me.role === "owner" || me.role === "admin";
  const [remove, busy] = useAction(async () => {
    await api.deleteMessage(message.id);
    store.dispatch({
      type: "event",
      event: { type: "message_deleted", channelId: message.channelId, messageId: message.id },
    });
  });
  return (
    <article
      class={`msg msg-${author.type}${mine ? " msg-mine" : ""}`}
      data-testid="message"
      data-message-id={message.id}
      data-author-type={author.type}
      data-author-id={author.id}
      data-run-id={message.runId}
    >
      <header class="msg-head">
        {author.type === "agent" ? (
          <AgentName agentId={author.id} agents={agents} />
        ) : (
          <>
            <span class="avatar" aria-hidden="true">
              {author.type === "system" ? "ℹ️" : "🙂"}
            </span>
            <span class="author" data-testid="message-author">
              {author.type === "system" ? "system" : mine ? "You" : author.id}
            </span>
          </>
        )}
        <time class="msg-time muted" dateTime={new Date(message.createdAt).toISOString()}>
          {formatTime(message.createdAt)}
        </time>
        {/* A stored answer is done by definition; only say so when it ended otherwise. */}
        {run && run.run?.status !== "done" && <RunControls view={run} />}
        {canDelete && (
          <button
            type="button"
            class="icon-btn msg-delete"
            aria-label="Delete message"
            title="Delete message"
            disabled={busy}
            onClick={() => {
              void askConfirm({
                title: "Delete this message?",
                message: "It is removed for everyone in this chat.",
              }).then((yes) => {
                if (yes) void remove();
              });
            }}
            data-testid="message-delete"
          >
            🗑
          </button>
        )}
      </header>
      {run && <RunDetails view={run} />}
      <MarkdownView text={message.text} class="msg-body" testId="message-text" />
    </article>
  );
}

/** A run without a stored message yet: text streams in token by token. */
export function RunBubble({ view, agents }: { view: RunView; agents: Map<string, AgentRecord> }) {
  const status = view.run?.status;
  const active = !isTerminal(status);
  return (
    <article
      class="msg msg-agent msg-live"
      data-testid="run-bubble"
      data-run-id={view.id}
      data-status={status ?? "running"}
      aria-busy={active}
    >
      <header class="msg-head">
        <AgentName agentId={view.run?.agentId ?? ""} agents={agents} />
        <RunControls view={view} />
      </header>
      <RunDetails view={view} />
      {view.text ? (
        <MarkdownView text={view.text} class={`msg-body${active ? " streaming" : ""}`} testId="run-text" />
      ) : (
        active && (
          <p class="typing muted" data-testid="run-waiting">
            {status === "queued" ? "Queued…" : "Thinking…"}
          </p>
        )
      )}
    </article>
  );
}
