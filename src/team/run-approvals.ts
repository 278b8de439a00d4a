/**
 * Answers to tool calls a team run waits on. A waiting run is a stored run nobody holds: its pending
 * calls are in its checkpoint (session store), its card in its answer message. A decision is recorded
 * in the checkpoint and on the card; once every pending call of the turn is decided, the run is
 * claimed from `waiting` (exactly once) and resumed from its checkpoint. Runs nobody answers within
 * the timeout end with that reason. "Always" answers become grants of the agent in the chat.
 */
import type { ApprovalDecision, PendingApproval } from "../agent/approvals.js";
import { allDecided, parseCheckpoint, type RunCheckpoint } from "../agent/checkpoint.js";
import { conflict, forbidden, notFound } from "../errors.js";
import type { SessionStore } from "../store/types.js";
import { REQUEST_NETWORK_TOOL } from "../tools/builtin/request-network.js";
import { isAdmin } from "./access.js";
import type { AgentRunner } from "./agent-runner.js";
import { KeyedLock } from "./keyed-lock.js";
import { decideApproval, endParts, failurePart } from "./message-parts.js";
import type { NamesFor } from "./team-prompt.js";
import type { StoredRun, TeamStore } from "./team-store.js";
import type { Actor, ChannelRecord, MessagePart, TeamEvent, TeamRun } from "./types.js";

/** Default wait before an unanswered run ends: 24 hours. */
export const DEFAULT_APPROVAL_TIMEOUT_MS = 24 * 60 * 60 * 1000;

export interface ApprovalAnswerInput {
  decision: "approve" | "reject";
  always?: boolean;
  reason?: string;
}

export interface RunApprovalsDeps {
  store: TeamStore;
  sessions: SessionStore;
  runner: AgentRunner;
  emit: (event: TeamEvent) => void;
  now: () => number;
  onError: (err: unknown) => void;
  /** People's display names, shown on the card with who decided. */
  nameOf?: NamesFor;
  timeoutMs?: number;
}

export class RunApprovals {
  readonly #deps: RunApprovalsDeps;
  readonly #lock = new KeyedLock();

  constructor(deps: RunApprovalsDeps) {
    this.#deps = deps;
  }

  /** Whether the actor may decide the run's approvals: the person it acts for; in a group, its managers. */
  static mayDecide(actor: Actor, stored: StoredRun, channel: ChannelRecord | undefined): boolean {
    if (actor.userId === stored.requestedBy) return true;
    if (channel?.kind !== "group") return false;
    return isAdmin(actor) || channel.createdBy === actor.userId;
  }

  /** The calls the run waits on (none when it is not waiting). */
  async pending(stored: StoredRun): Promise<PendingApproval[]> {
    if (stored.run.status !== "waiting") return [];
    const checkpoint = await this.#checkpoint(stored);
    const turn = checkpoint?.turn;
    return turn ? turn.pending.filter((p) => turn.decisions[p.callId] === undefined) : [];
  }

  /** Records the actor's decision on one call; resumes the run once every call is decided. */
  async answer(
    actor: Actor,
    stored: StoredRun,
    callId: string,
    input: ApprovalAnswerInput,
  ): Promise<TeamRun> {
    const { store, sessions, emit, now } = this.#deps;
    const channel = await store.channels.get(stored.run.channelId);
    if (!RunApprovals.mayDecide(actor, stored, channel)) {
      throw forbidden(
        "Only the person this answer is for can approve its tool calls (in a group, also the chat's owner and admins).",
      );
    }
    return this.#lock.run(stored.run.id, async () => {
      const current = (await store.runs.get(stored.run.id)) ?? stored;
      if (current.run.status !== "waiting") {
        throw conflict(
          `This run is not waiting for approval (it is ${current.run.status}).`,
          "reload the chat",
        );
      }
      const checkpoint = await this.#checkpoint(current);
      const turn = checkpoint?.turn;
      const pending = turn?.pending.find((p) => p.callId === callId);
      if (!checkpoint || !turn || !pending)
        throw notFound(`The run does not wait for a tool call "${callId}".`);
      if (turn.decisions[callId]) throw conflict("This tool call was decided already.", "reload the chat");
      const decision: ApprovalDecision = { decision: input.decision, by: actor.userId };
      // Network granted through request_network is for one run: "always" is taken as once.
      if (input.always && input.decision === "approve" && pending.tool !== REQUEST_NETWORK_TOOL)
        decision.always = true;
      if (input.reason?.trim()) decision.reason = input.reason.trim();
      turn.decisions[callId] = decision;
      await sessions.saveCheckpoint(current.ref, current.run.id, checkpoint, { waiting: true });
      if (decision.always && channel) {
        await store.grants.add({
          channelId: channel.id,
          agentId: current.run.agentId,
          tool: pending.tool,
          grantedBy: actor.userId,
          grantedAt: now(),
        });
      }
      const state = input.decision === "approve" ? "approved" : "rejected";
      const byName = (await this.#deps.nameOf?.([actor.userId]))?.(actor.userId);
      await this.#showDecision(current, callId, {
        state,
        by: actor.userId,
        ...(byName ? { byName } : {}),
        ...(decision.always ? { always: true } : {}),
        ...(decision.reason ? { note: decision.reason } : {}),
      });
      emit({
        type: "approval",
        channelId: current.run.channelId,
        runId: current.run.id,
        callId,
        tool: pending.tool,
        state,
        by: actor.userId,
        ...(decision.always ? { always: true } : {}),
        ...(decision.reason ? { note: decision.reason } : {}),
      });
      if (!allDecided(checkpoint)) return current.run;
      return this.#resume(current, turn.decisions);
    });
  }

  /** Resumes a waiting run whose calls are all decided (e.g. left so by a restart). */
  async #resume(stored: StoredRun, decisions: Record<string, ApprovalDecision>): Promise<TeamRun> {
    const { store, runner, now } = this.#deps;
    // Exactly one resumer moves it out of `waiting`: another instance or answer may have been first.
    if (!(await store.runs.claimWaiting(stored.run.id, now()))) return stored.run;
    const handle = await runner.resumeChannelRun(stored, decisions);
    return handle.run;
  }

  /** Ends a waiting run as cancelled (stopped, or interrupted by a new message); false when it was not waiting. */
  async cancelWaiting(stored: StoredRun, reason: string): Promise<TeamRun | undefined> {
    return this.#end(stored, "cancelled", reason);
  }

  async #end(stored: StoredRun, status: "cancelled" | "error", reason: string): Promise<TeamRun | undefined> {
    const { store, sessions, emit, now } = this.#deps;
    if (!(await store.runs.claimWaiting(stored.run.id, stored.run.startedAt))) return undefined;
    const saved = await sessions.loadCheckpoint(stored.ref, stored.run.id);
    const pending = parseCheckpoint(saved?.checkpoint)?.turn?.pending ?? [];
    await this.#showEnd(stored, pending, status, reason);
    const run: TeamRun = { ...stored.run, status, error: reason, endedAt: now() };
    await store.runs.update(run);
    await sessions.finishRun(stored.ref, stored.run.id, { status, iterations: 0, error: reason });
    emit({ type: "run", channelId: run.channelId, run });
    return run;
  }

  /** Ends runs that waited longer than the timeout; call on a timer. */
  async expire(): Promise<void> {
    const { store, sessions, now } = this.#deps;
    const timeoutMs = this.#deps.timeoutMs ?? DEFAULT_APPROVAL_TIMEOUT_MS;
    for (const stored of await store.runs.listWaiting()) {
      try {
        const saved = await sessions.loadCheckpoint(stored.ref, stored.run.id);
        const since = saved?.waitingSince ?? stored.run.startedAt;
        if (now() - since < timeoutMs) continue;
        await this.#end(
          stored,
          "error",
          `No one answered the approval request within ${duration(timeoutMs)}, so the run ended. Ask again to retry.`,
        );
      } catch (err) {
        this.#deps.onError(err);
      }
    }
  }

  async #checkpoint(stored: StoredRun): Promise<RunCheckpoint | undefined> {
    return parseCheckpoint((await this.#deps.sessions.loadCheckpoint(stored.ref, stored.run.id))?.checkpoint);
  }

  /** Shows the decision on the call's card in the run's answer message. */
  async #showDecision(stored: StoredRun, callId: string, decision: Parameters<typeof decideApproval>[2]) {
    await this.#editParts(stored, (parts) => decideApproval(parts, callId, decision));
  }

  /** Shows how a waiting run ended: its open cards expired, and the reason. */
  async #showEnd(
    stored: StoredRun,
    pending: PendingApproval[],
    status: "cancelled" | "error",
    reason: string,
  ) {
    await this.#editParts(stored, (parts) => {
      let next = parts;
      for (const p of pending) next = decideApproval(next, p.callId, { state: "expired" });
      const end =
        status === "cancelled" ? failurePart("aborted", reason) : failurePart("approval_timeout", reason);
      return endParts(next, end);
    });
  }

  async #editParts(stored: StoredRun, update: (parts: MessagePart[]) => MessagePart[]): Promise<void> {
    const { store, emit } = this.#deps;
    const message = await store.messages.byRun(stored.run.id);
    if (!message) return;
    // An update of the run's answer, not an edit: it keeps no "edited" mark.
    const edited = await store.messages.edit(message.id, message.text, null, update(message.parts));
    if (edited) emit({ type: "message", channelId: edited.channelId, message: edited });
  }
}

/** A wait in the largest whole unit that fits: "24 hours", "90 minutes", "20 seconds". */
function duration(ms: number): string {
  const units: Array<[number, string]> = [
    [3_600_000, "hour"],
    [60_000, "minute"],
    [1000, "second"],
  ];
  for (const [size, name] of units) {
    if (ms >= size) {
      const n = Math.round((ms / size) * 10) / 10;
      return `${n} ${name}${n === 1 ? "" : "s"}`;
    }
  }
  return `${ms} ms`;
}
