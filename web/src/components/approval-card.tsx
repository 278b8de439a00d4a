/**
 * A tool call waiting for a person's approval, inline in the answer where the call happened: what
 * will happen (the command line for the shell), why it asks, and Approve / Always allow / Reject
 * (with an optional reason) for those who may decide; the others see whose approval it waits for.
 * Once decided, the tool card says how (`ApprovalOutcome`).
 */
import { useEffect, useRef, useState } from "preact/hooks";
import { ApiError, errorText } from "../api.js";
import { formatJson } from "../format.js";
import { useSelector, useServices } from "../hooks.js";
import { t } from "../i18n/index.js";
import type { ToolCallView } from "../state/chat.js";
import type { ApprovalDecisionInput, ApprovalView, ChannelRecord, SessionUser } from "../types.js";
import { useMe, usePersonName } from "./people.js";

type Choice = "approve" | "always" | "reject";

/**
 * Whether `me` may decide: the person the run acts for; in a group also the chat's creator and
 * admins (owners included).
 */
export function mayDecide(
  asker: string | undefined,
  me: SessionUser | undefined,
  channel: ChannelRecord | undefined,
): boolean {
  if (!me) return false;
  if (asker !== undefined && asker === me.id) return true;
  if (channel?.kind !== "group") return false;
  return channel.createdBy === me.id || me.role === "admin" || me.role === "owner";
}

/** A sentence from the server's reason ("it matches the confirm rule …"). */
function because(reason: string): string {
  const text = reason.trim();
  if (text === "") return "";
  const sentence = /^it\b/i.test(text) ? t("approval.asksBecause", { reason: text }) : text;
  return /[.!?]$/.test(sentence) ? sentence : `${sentence}.`;
}

/** "Waiting for mia's approval", or without a name the reader may not know. */
function waitingFor(name: string | undefined): string {
  return name === undefined ? t("approval.waitingAsker") : t("approval.waitingFor", { name });
}

/** Who decided, in words: their name when known, else their part in the chat. */
function deciderOf(approval: ApprovalView, name: string | undefined): string | undefined {
  if (approval.by === undefined) return undefined;
  if (name !== undefined) return name;
  return approval.by === approval.askedOf ? t("approval.theAsker") : t("approval.aManager");
}

/** Whether the arguments say more than the summary (the shell's are just its command line). */
function argsAddTo(args: unknown, summary: string): boolean {
  if (summary === "" || args === undefined || args === null) return false;
  if (typeof args !== "object") return String(args) !== summary;
  const values = Object.values(args as Record<string, unknown>);
  return !(values.length === 1 && values[0] === summary);
}

/** What a failed decision means, in words. */
function problemText(err: unknown): string {
  if (err instanceof ApiError) {
    if (err.status === 403) return t("approval.forbidden");
    if (err.status === 409) return t("approval.conflict", { message: err.message });
    if (err.status === 404) return t("approval.gone");
  }
  return t("approval.notSent", { error: errorText(err) });
}

/** The inline approval card of one waiting tool call. */
export function ApprovalCard({
  call,
  approval,
  runId,
}: {
  call: ToolCallView;
  approval: ApprovalView;
  runId: string | undefined;
}) {
  const { api, store } = useServices();
  const me = useMe();
  const nameOf = usePersonName();
  const channelId = useSelector((s) => s.chat?.channelId);
  const channel = useSelector((s) => s.channels.list.find((c) => c.id === s.chat?.channelId));
  // Until the stored answer names the asker, the author of the message the run answers.
  const triggerAuthor = useSelector((s) => {
    const run = runId !== undefined ? s.chat?.runs[runId]?.run : undefined;
    const trigger = run ? s.chat?.messages.find((m) => m.id === run.triggerMessageId) : undefined;
    return trigger?.author.type === "user" ? trigger.author.id : undefined;
  });
  // The card can show a moment before the run is stored as waiting; answers are taken only then.
  const runStatus = useSelector((s) => (runId !== undefined ? s.chat?.runs[runId]?.run?.status : undefined));
  const settling = runStatus === "queued" || runStatus === "running";
  const asker = approval.askedOf ?? triggerAuthor;
  const canDecide = runId !== undefined && mayDecide(asker, me, channel);
  const [sending, setSending] = useState<Choice | undefined>(undefined);
  const [problem, setProblem] = useState<string | undefined>(undefined);
  const [rejecting, setRejecting] = useState(false);
  const [reason, setReason] = useState("");
  const reasonInput = useRef<HTMLInputElement>(null);
  const card = useRef<HTMLElement>(null);
  useEffect(() => {
    if (!rejecting) return;
    reasonInput.current?.focus();
    card.current?.scrollIntoView?.({ block: "nearest" });
  }, [rejecting]);

  const decide = async (choice: Choice) => {
    if (runId === undefined || sending) return;
    const note = reason.trim();
    const body: ApprovalDecisionInput =
      choice === "reject"
        ? { decision: "reject", ...(note ? { reason: note } : {}) }
        : { decision: "approve", ...(choice === "always" ? { always: true as const } : {}) };
    setSending(choice);
    setProblem(undefined);
    try {
      const run = await api.decideApproval(runId, call.callId, body);
      store.dispatch({ type: "run", run });
      if (channelId !== undefined) {
        // The server says so too (and edits the stored answer); the card need not wait for it.
        store.dispatch({
          type: "event",
          event: {
            type: "approval",
            channelId,
            runId,
            callId: call.callId,
            tool: call.name,
            state: choice === "reject" ? "rejected" : "approved",
            ...(me ? { by: me.id } : {}),
            ...(choice === "always" ? { always: true } : {}),
            ...(choice === "reject" && note ? { note } : {}),
          },
        });
      }
    } catch (err) {
      setProblem(problemText(err));
    } finally {
      setSending(undefined);
    }
  };

  const args = formatJson(call.args);
  const shell = call.name === "execute_command";
  return (
    <section
      ref={card}
      class="approval"
      data-testid="approval-card"
      data-state="pending"
      data-call-id={call.callId}
      data-tool={call.name}
      aria-label={t("approval.label", { tool: call.name })}
    >
      <div class="approval-head">
        <span class="tool-dot dot-waiting" aria-hidden="true" />
        <span class="tool-name" data-testid="approval-tool">
          {call.name}
        </span>
        <span class="approval-asks muted">
          {shell ? t("approval.wantsCommand") : t("approval.wantsRun")}
          {canDecide ? t("approval.needsYou") : ""}
        </span>
      </div>
      <pre class="approval-summary" data-testid="approval-summary">
        {approval.summary || args}
      </pre>
      {approval.reason && (
        <p class="approval-reason muted" data-testid="approval-reason">
          {because(approval.reason)}
        </p>
      )}
      {argsAddTo(call.args, approval.summary) && (
        <details class="approval-args">
          <summary>{t("tools.arguments")}</summary>
          <pre class="tool-pre" data-testid="approval-args">
            {args}
          </pre>
        </details>
      )}
      {problem && (
        <p class="elicit-error" role="alert" data-testid="approval-problem">
          {problem}
        </p>
      )}
      {!canDecide && (
        <p class="approval-waiting" data-testid="approval-waiting">
          <span aria-hidden="true">⏳ </span>
          {waitingFor(nameOf(asker) ?? (asker === approval.askedOf ? approval.askedOfName : undefined))}
        </p>
      )}
      {canDecide && !rejecting && (
        <div class="elicit-actions approval-actions">
          <button
            type="button"
            class="btn btn-small btn-primary"
            disabled={sending !== undefined || settling}
            onClick={() => void decide("approve")}
            data-testid="approval-approve"
          >
            {sending === "approve" ? t("approval.approving") : t("approval.approve")}
          </button>
          {/* Network asked for with request_network is granted for the run only: no "Always". */}
          {call.name !== "request_network" && (
            <button
              type="button"
              class="btn btn-small"
              disabled={sending !== undefined || settling}
              title={t("approval.alwaysTitle", { tool: call.name })}
              onClick={() => void decide("always")}
              data-testid="approval-always"
            >
              {sending === "always" ? t("approval.approving") : t("approval.alwaysAllow")}
            </button>
          )}
          <button
            type="button"
            class="btn btn-small btn-danger"
            disabled={sending !== undefined || settling}
            onClick={() => setRejecting(true)}
            data-testid="approval-reject"
          >
            {t("approval.reject")}
          </button>
        </div>
      )}
      {canDecide && rejecting && (
        <form
          class="approval-reject"
          data-testid="approval-reject-form"
          onSubmit={(e) => {
            e.preventDefault();
            void decide("reject");
          }}
        >
          <label class="elicit-field">
            <span>{t("approval.whyNot")}</span>
            <input
              ref={reasonInput}
              value={reason}
              maxLength={500}
              placeholder={shell ? t("approval.whyNotShell") : t("approval.whyNotOther")}
              onInput={(e) => setReason(e.currentTarget.value)}
              onKeyDown={(e) => {
                if (e.key === "Escape") setRejecting(false);
              }}
              data-testid="approval-reject-reason"
            />
          </label>
          <div class="elicit-actions">
            <button
              type="submit"
              class="btn btn-small btn-danger"
              disabled={sending !== undefined || settling}
              data-testid="approval-reject-confirm"
            >
              {sending === "reject" ? t("approval.rejecting") : t("approval.reject")}
            </button>
            <button
              type="button"
              class="btn btn-small"
              disabled={sending !== undefined}
              onClick={() => setRejecting(false)}
              data-testid="approval-reject-cancel"
            >
              {t("common.cancel")}
            </button>
          </div>
        </form>
      )}
    </section>
  );
}

/** How a call's approval was decided, under its tool card. */
export function ApprovalOutcome({ approval, ended }: { approval: ApprovalView; ended: boolean }) {
  const nameOf = usePersonName();
  const by = deciderOf(approval, nameOf(approval.by) ?? approval.byName);
  let icon = "✓";
  let text: string;
  switch (approval.state) {
    case "approved":
      text = approval.always
        ? by
          ? t("approval.alwaysBy", { by })
          : t("approval.always")
        : by
          ? t("approval.approvedBy", { by })
          : t("approval.approved");
      break;
    case "rejected":
      icon = "✕";
      text = `${by ? t("approval.rejectedBy", { by }) : t("approval.rejected")}${approval.note ? t("approval.note", { note: approval.note }) : ""}`;
      break;
    case "expired":
      icon = "⌛";
      text = t("approval.expired");
      break;
    case "pending":
      icon = "⌛";
      text = ended ? t("approval.never") : t("approval.waiting");
      break;
  }
  return (
    <p
      class={`approval-outcome approval-${approval.state}`}
      data-testid="approval-outcome"
      data-state={approval.state}
    >
      <span aria-hidden="true">{icon} </span>
      {text}
    </p>
  );
}
