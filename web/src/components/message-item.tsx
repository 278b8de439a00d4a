/**
 * A stored message (with its regenerated versions and its actions: copy, regenerate, edit), or the
 * live bubble of a run still streaming (or ended without a message). Both render the same parts.
 */
import { useEffect, useLayoutEffect, useRef, useState } from "preact/hooks";
import { answeringModelOf } from "../../../src/team/message-parts.js";
import { copyText } from "../clipboard.js";
import { formatTime } from "../format.js";
import { useAction, useServices } from "../hooks.js";
import { t } from "../i18n/index.js";
import { isImeKey } from "../ime.js";
import { isTerminal, type RunView, scheduleOf } from "../state/chat.js";
import type {
  AgentRecord,
  ChannelMessage,
  ElicitationView,
  MessagePart,
  QueuedDelivery,
  SessionUser,
  TeamRun,
} from "../types.js";
import { EDIT_LAST_EVENT } from "../use-chat-keys.js";
import { AnswerUsage } from "./answer-usage.js";
import { AttachmentChips } from "./attachment-chips.js";
import { askConfirm } from "./confirm-dialog.js";
import { ElicitationForm } from "./elicitation-form.js";
import { MarkdownView } from "./markdown-view.js";
import { MessengerBadge, messengerOf } from "./messenger-label.js";
import { EndBadge, Parts, RunControls } from "./run-parts.js";
import { SamplingApproval } from "./sampling-approval.js";

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
  /** Every version of the message, oldest first (more than one after a regenerate). */
  versions: ChannelMessage[];
  runs: Record<string, RunView>;
  agents: Map<string, AgentRecord>;
  me: SessionUser;
  /** The usernames of the chat's people, by id. */
  people?: ReadonlyMap<string, string> | undefined;
  /** This is the reader's last message (they may edit it). */
  editable: boolean;
  /** Agents this message reached without a new run (from posting it), by message id. */
  queued?: Record<number, QueuedDelivery[]> | undefined;
  /** Ended runs by id (model, tokens, cost, duration of each answer). */
  answerRuns?: Record<string, TeamRun> | undefined;
}

const QUEUED_LABEL = {
  steer: "message.queued.steer",
  collect: "message.queued.collect",
  waiting: "message.queued.waiting",
} as const;

/** Under a message that went to agents already at work: what became of it, per agent. */
function QueuedLabels({ entries, agents }: { entries: QueuedDelivery[]; agents: Map<string, AgentRecord> }) {
  return (
    <p class="queued-labels" data-testid="message-queued">
      {entries.map((entry) => (
        <span
          key={entry.agentId}
          class={`queued-label queued-${entry.mode}`}
          data-testid="queued-label"
          data-mode={entry.mode}
          data-agent-id={entry.agentId}
        >
          {entries.length > 1 && `${agents.get(entry.agentId)?.name ?? entry.agentId}: `}
          {t(QUEUED_LABEL[entry.mode])}
        </span>
      ))}
    </p>
  );
}

/** A message that started a collaboration flow (it cannot be edited; the flow is started again). */
const STARTS_FLOW = /^\s*(\/flow|@chain)\b/i;

/** One stored message with its parts and actions. */
export function MessageItem({
  versions,
  runs,
  agents,
  me,
  people,
  editable,
  queued,
  answerRuns,
}: MessageItemProps) {
  const { api, store } = useServices();
  // Undefined: the newest version (a new one arriving is shown).
  const [picked, setPicked] = useState<number | undefined>(undefined);
  // A new version (regenerated, or answering an edit) is shown as it arrives.
  useEffect(() => setPicked(undefined), [versions.length]);
  const [editing, setEditing] = useState<string | undefined>(undefined);
  const editInput = useRef<HTMLTextAreaElement>(null);
  const isEditing = editing !== undefined;
  // A layout effect: the editor has the caret in the same frame it appears (a key typed right after
  // ↑ lands in it, not in the composer).
  useLayoutEffect(() => {
    if (!isEditing) return;
    const el = editInput.current;
    el?.focus();
    el?.setSelectionRange(el.value.length, el.value.length);
  }, [isEditing]);
  const [copied, setCopied] = useState(false);
  const index = picked !== undefined && picked < versions.length ? picked : versions.length - 1;
  const message = versions[index] as ChannelMessage;
  const { author } = message;
  // A schedule's prompt is posted in its creator's name, but it is the schedule's: not "You", not editable.
  const schedule = scheduleOf(message);
  const mine = author.type === "user" && author.id === me.id && !schedule;
  // Posted in a messenger chat bound to this channel: labelled with the platform and the sender there.
  const messenger = author.type === "user" ? messengerOf(message) : undefined;
  const canDelete =
    mine ||
    (schedule !== undefined && author.type === "user" && author.id === me.id) ||
    me.role === "owner" ||
    me.role === "admin";
  const [remove, busy] = useAction(async () => {
    await api.deleteMessage(message.id);
    store.dispatch({
      type: "event",
      event: { type: "message_deleted", channelId: message.channelId, messageId: message.id },
    });
  });
  const [regenerate, regenerating] = useAction(async () => {
    const result = await api.regenerate(message.id);
    setPicked(undefined);
    store.dispatch({ type: "posted", channelId: message.channelId, result });
  });
  const [saveEdit, saving] = useAction(async () => {
    const text = editing?.trim() ?? "";
    if (text === "") return;
    const result = await api.editMessage(message.id, text);
    setEditing(undefined);
    store.dispatch({ type: "posted", channelId: message.channelId, result });
  });
  const canEdit = mine && editable && !STARTS_FLOW.test(message.text);
  // ↑ in the empty composer of this chat (see Composer) opens this message when it is the one to edit.
  useEffect(() => {
    if (!canEdit) return;
    const onEditLast = (event: Event) => {
      const detail = (event as CustomEvent<{ channelId: string }>).detail;
      if (detail?.channelId === message.channelId) setEditing(message.text);
    };
    window.addEventListener(EDIT_LAST_EVENT, onEditLast);
    return () => window.removeEventListener(EDIT_LAST_EVENT, onEditLast);
  }, [canEdit, message.channelId, message.text]);
  const copy = () => {
    copyText(message.text).then(
      () => {
        setCopied(true);
        setTimeout(() => setCopied(false), 1500);
      },
      () => store.dispatch({ type: "notice", kind: "error", text: t("message.copyFailed") }),
    );
  };
  const isAnswer = author.type === "agent";
  // An answer whose run still goes on: it waits for approval, or resumed after one.
  const runView = isAnswer && message.runId !== undefined ? runs[message.runId] : undefined;
  const going = runView?.run !== undefined && !isTerminal(runView.run.status) ? runView : undefined;
  const parts = going && going.parts.length > 0 ? going.parts : message.parts;
  const queuedHere = queued?.[message.id];
  const editedBy = message.parts.find((p) => p.type === "edited");
  return (
    <article
      class={`msg msg-${author.type}${mine ? " msg-mine" : ""}`}
      data-testid="message"
      data-message-id={message.id}
      data-author-type={author.type}
      data-author-id={author.id}
      data-run-id={message.runId}
      data-versions={versions.length}
    >
      <header class="msg-head">
        {isAnswer ? (
          <AgentName agentId={author.id} agents={agents} />
        ) : schedule ? (
          <>
            <span class="avatar" aria-hidden="true">
              ⏰
            </span>
            <span class="author" data-testid="message-author" data-schedule-id={schedule.scheduleId}>
              Schedule “{schedule.name}”
            </span>
          </>
        ) : (
          <>
            <span class="avatar" aria-hidden="true">
              {author.type === "system" ? "ℹ️" : "🙂"}
            </span>
            <span class="author" data-testid="message-author">
              {author.type === "system"
                ? t("search.system")
                : mine
                  ? t("search.you")
                  : (messenger?.name ?? people?.get(author.id) ?? t("message.someone"))}
            </span>
            {messenger && <MessengerBadge platform={messenger.platform} />}
          </>
        )}
        <time class="msg-time muted" dateTime={new Date(message.createdAt).toISOString()}>
          {formatTime(message.createdAt)}
        </time>
        {isAnswer && <ModelLabel parts={parts} model={agents.get(author.id)?.model} />}
        {/* People edit their messages; an answer is updated by its run (e.g. after an approval), or
            edited by a person (a flow step's output), which it says. */}
        {message.editedAt !== undefined && !isAnswer && (
          <span class="muted msg-edited" data-testid="message-edited">
            (edited)
          </span>
        )}
        {isAnswer && editedBy && (
          <span class="muted msg-edited" data-testid="message-edited" data-edited-by={editedBy.by}>
            (edited by {editedBy.by === me.id ? "you" : editedBy.name})
          </span>
        )}
        {/* A stored answer is done by definition; only say so when it ended otherwise. */}
        {going ? <RunControls view={going} /> : isAnswer && <EndBadge parts={message.parts} />}
        {canDelete && (
          <button
            type="button"
            class="icon-btn msg-delete"
            aria-label={t("message.delete")}
            title={t("message.delete")}
            disabled={busy}
            onClick={() => {
              void askConfirm({
                title: t("message.deleteTitle"),
                message: t("message.deleteMessage"),
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
      {editing !== undefined ? (
        <form
          class="msg-edit"
          data-testid="message-edit-form"
          onSubmit={(e) => {
            e.preventDefault();
            void saveEdit();
          }}
        >
          <textarea
            ref={editInput}
            class="msg-edit-input"
            data-testid="message-edit-input"
            value={editing}
            rows={Math.min(8, Math.max(2, editing.split("\n").length))}
            onInput={(e) => setEditing(e.currentTarget.value)}
            onKeyDown={(e) => {
              if (isImeKey(e)) return;
              if (e.key === "Escape") setEditing(undefined);
              if (e.key === "Enter" && !e.shiftKey) {
                e.preventDefault();
                void saveEdit();
              }
            }}
          />
          <div class="msg-edit-actions">
            <button type="button" class="btn btn-small" onClick={() => setEditing(undefined)}>
              {t("common.cancel")}
            </button>
            <button
              type="submit"
              class="btn btn-small btn-primary"
              disabled={saving || editing.trim() === ""}
              data-testid="message-edit-save"
            >
              {t("message.saveSend")}
            </button>
          </div>
        </form>
      ) : isAnswer ? (
        <Parts
          parts={parts}
          runId={message.runId}
          runs={runs}
          agents={agents}
          live={going?.run?.status === "running"}
        />
      ) : (
        <>
          <MarkdownView text={message.text} class="msg-body" testId="message-text" />
          <AttachmentChips channelId={message.channelId} parts={message.parts} />
        </>
      )}
      {isAnswer && !going && message.runId !== undefined && answerRuns?.[message.runId] && (
        <AnswerUsage run={answerRuns[message.runId]!} />
      )}
      {queuedHere && queuedHere.length > 0 && editing === undefined && (
        <QueuedLabels entries={queuedHere} agents={agents} />
      )}
      {editing === undefined && (
        <footer class="msg-actions" data-testid="message-actions">
          {versions.length > 1 && (
            <span class="version-switch" data-testid="version-switch">
              <button
                type="button"
                class="icon-btn"
                aria-label={t("message.previousVersion")}
                disabled={index === 0}
                onClick={() => setPicked(index - 1)}
                data-testid="version-prev"
              >
                ‹
              </button>
              <span data-testid="version-label">
                {index + 1}/{versions.length}
              </span>
              <button
                type="button"
                class="icon-btn"
                aria-label={t("message.nextVersion")}
                disabled={index === versions.length - 1}
                onClick={() => setPicked(index + 1 === versions.length - 1 ? undefined : index + 1)}
                data-testid="version-next"
              >
                ›
              </button>
            </span>
          )}
          {message.text !== "" && (
            <button
              type="button"
              class="icon-btn msg-action"
              onClick={copy}
              title={t("message.copy")}
              aria-label={t("message.copyLabel")}
              data-testid="message-copy"
            >
              {copied ? `✓ ${t("message.copied")}` : t("message.copy")}
            </button>
          )}
          {isAnswer && message.replyTo !== undefined && !going && (
            <button
              type="button"
              class="icon-btn msg-action"
              onClick={() => void regenerate()}
              disabled={regenerating}
              title={t("message.regenerate")}
              aria-label={t("message.regenerateLabel")}
              data-testid="message-regenerate"
            >
              ↻ {t("message.regenerate")}
            </button>
          )}
          {canEdit && (
            <button
              type="button"
              class="icon-btn msg-action"
              onClick={() => setEditing(message.text)}
              title={t("message.editTitle")}
              aria-label={t("message.editLabel")}
              data-testid="message-edit"
            >
              ✎ {t("message.edit")}
            </button>
          )}
        </footer>
      )}
    </article>
  );
}

/** A run without a stored message yet: its parts stream in as the agent works. */
export function RunBubble({
  view,
  runs,
  agents,
  asks = [],
}: {
  view: RunView;
  runs: Record<string, RunView>;
  agents: Map<string, AgentRecord>;
  /** MCP servers' open requests for input to this person, made during this run. */
  asks?: ElicitationView[];
}) {
  const status = view.run?.status;
  const active = !isTerminal(status);
  const said = view.parts.length > 0;
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
      {said && (
        <Parts
          parts={view.parts}
          runId={view.id}
          runs={runs}
          agents={agents}
          live={active && status !== "waiting"}
        />
      )}
      {active && view.retry && (
        <p class="muted run-retry" data-testid="run-retry">
          {t("message.retrying", { attempt: view.retry.attempt, reason: view.retry.reason })}
        </p>
      )}
      {active &&
        asks.map((request) =>
          request.mode === "sampling" ? (
            <SamplingApproval key={request.id} request={request} />
          ) : (
            <ElicitationForm key={request.id} request={request} />
          ),
        )}
      {!said && active && asks.length === 0 && (
        <p class="typing muted" data-testid="run-waiting">
          {status === "queued"
            ? t("message.queuedRun")
            : status === "waiting"
              ? t("message.waitingApproval")
              : t("message.thinking")}
        </p>
      )}
    </article>
  );
}

/** Which model answered: the chain's model the answer moved to, else the agent's first model. */
function ModelLabel({ parts, model }: { parts: readonly MessagePart[]; model: string | undefined }) {
  const answered = answeringModelOf(parts) ?? model?.split(",")[0]?.trim();
  if (!answered) return null;
  return (
    <span
      class="msg-model muted"
      data-testid="message-model"
      title={t("message.answeredBy", { model: answered })}
    >
      {answered}
    </span>
  );
}
