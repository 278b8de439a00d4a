/**
 * Approvals from the external chat. When a run of a connector channel asks a person's approval for a
 * tool call, the chat gets a prompt (the tool, what will happen, why) with Approve / Always / Reject
 * buttons, queued in the outbox like answers. Each prompt has a ticket: a random token stored in the
 * connector's state with the run and call it stands for and an expiry. Buttons carry only the token
 * and the choice, so nothing a presser sends names a run or a call: a press whose token has no live
 * ticket (or comes from another chat) is refused.
 *
 * A press is mapped to the Dimsum user the presser's messages post as (never creating one) and
 * answered through `team.answerApproval`, which decides who may (the person the run acts for; in a
 * group channel also its owner and admins). The presser is told the outcome, and the prompt is shown
 * settled, without buttons. Decisions taken elsewhere (the web UI) and runs that end while waiting
 * settle the prompt too, where the platform can edit it.
 */
import { randomBytes } from "node:crypto";
import type { AgentEvent } from "../agent/events.js";
import { isRefusal } from "../errors.js";
import { KeyedLock } from "../team/keyed-lock.js";
import type { Team, TeamEvent, TeamRun } from "../team/types.js";
import { REQUEST_NETWORK_TOOL } from "../tools/builtin/request-network.js";
import type { ChatRef } from "./answer-router.js";
import { mappedActor } from "./inbound-pipeline.js";
import { type AuditSink, auditPress } from "./press-audit.js";
import type { MappingRepo } from "./store/mapping-repo.js";
import type {
  ApprovalChoice,
  ApprovalPress,
  ApprovalPressResult,
  ApprovalPrompt,
  CardChoice,
  ConnectorDriver,
  ConnectorRecord,
  ConnectorUsers,
  DriverState,
  FlowChoice,
  OutboundMessage,
} from "./types.js";

/** How long a prompt's buttons work at most (the team ends unanswered runs earlier, by default after 24 h). */
export const DEFAULT_TICKET_TTL_MS = 7 * 24 * 60 * 60 * 1000;

export const NOT_YOURS = "Only the person who asked can approve or reject this.";
export const NOT_OPEN = "This approval request is no longer open.";
export const LINK_FIRST =
  "Only linked members can decide here. Link your account first: send /link <code> (Settings → Account) to the bot in a private chat.";
const FAILED = "Dimsum could not take this answer; try again.";
const DECIDE_ON_WEB = "Approve or reject it in the Dimsum web UI (the chat's run waits for it).";

const TICKET_PREFIX = "approval:";
const CALL_PREFIX = "approval-call:";
const TOKEN_PATTERN = /^[A-Za-z0-9_-]{22}$/;
/** Compact choice codes for button data (approvals, and flow cards' actions). */
const CODES: Record<CardChoice, string> = {
  approve: "a",
  always: "w",
  reject: "r",
  pause: "p",
  resume: "u",
  skip: "s",
  retry: "y",
};
const BUTTON_DATA = /^dap:([awrpusy]):([A-Za-z0-9_-]{22})$/;

/** Whether a press acts on a flow card rather than an approval prompt. */
export function isFlowChoice(choice: CardChoice): choice is FlowChoice {
  return choice === "pause" || choice === "resume" || choice === "skip" || choice === "retry";
}

const LIMITS = { tool: 100, summary: 1500, reason: 500, note: 300 } as const;

type ApprovalRequest = Extract<AgentEvent, { type: "approval" }>;
type ApprovalEvent = Extract<TeamEvent, { type: "approval" }>;
type Decision = NonNullable<ApprovalPrompt["decision"]>;

/** What a ticket remembers (stored as JSON under `approval:<token>`). */
interface Ticket {
  runId: string;
  callId: string;
  chatId: string;
  tool: string;
  summary: string;
  reason: string;
  expiresAt: number;
  /** The platform's id of the prompt message, once delivered. */
  messageId?: string;
  /** Decided before the prompt was delivered: shown once it is. */
  decision?: Decision;
}

/** A new ticket token: 16 random bytes, base64url (22 characters). */
export function newApprovalToken(): string {
  return randomBytes(16).toString("base64url");
}

/** Compact button data (at most 28 bytes; Telegram allows 64): `dap:<choice>:<token>`. */
export function encodeButtonData(token: string, choice: CardChoice): string {
  return `dap:${CODES[choice]}:${token}`;
}

/** The token and choice of button data; undefined for anything else. */
export function decodeButtonData(data: unknown): { token: string; choice: CardChoice } | undefined {
  if (typeof data !== "string") return undefined;
  const match = BUTTON_DATA.exec(data);
  if (!match) return undefined;
  const choice = (Object.keys(CODES) as CardChoice[]).find((c) => CODES[c] === match[1]);
  return choice && match[2] ? { token: match[2], choice } : undefined;
}

/** Whether a string can be a ticket token (checked before any lookup). */
export function isApprovalToken(token: unknown): token is string {
  return typeof token === "string" && TOKEN_PATTERN.test(token);
}

/** The button labels, in order. */
export const BUTTONS: ReadonlyArray<{ choice: ApprovalChoice; label: string }> = [
  { choice: "approve", label: "✅ Approve" },
  { choice: "always", label: "♾️ Always" },
  { choice: "reject", label: "❌ Reject" },
];

/**
 * The buttons of one prompt: no "Always" where an approval cannot become a lasting grant (network
 * asked for with request_network is for that run only; the server takes "always" as once there).
 */
export function approvalButtons(prompt: Pick<ApprovalPrompt, "tool">): typeof BUTTONS {
  return prompt.tool === REQUEST_NETWORK_TOOL ? BUTTONS.filter((b) => b.choice !== "always") : BUTTONS;
}

function clip(text: string, max: number): string {
  const trimmed = text.trim();
  return trimmed.length <= max ? trimmed : `${trimmed.slice(0, max - 1)}…`;
}

/** The title of a prompt. */
export function approvalTitle(prompt: ApprovalPrompt): string {
  return `🔐 Approval needed: ${prompt.tool}`;
}

/** The line saying how a settled prompt was decided. */
export function decisionLine(decision: Decision, tool: string): string {
  const by = decision.by ? ` by ${decision.by}` : "";
  switch (decision.state) {
    case "approved":
      return decision.always
        ? `✅ Approved${by}, also from now on for ${tool} in this chat.`
        : `✅ Approved${by}.`;
    case "rejected":
      return `❌ Rejected${by}${decision.note ? `: ${decision.note}` : "."}`;
    default:
      return "⌛ No longer waiting for an answer.";
  }
}

/** The body of a prompt below its title: what will happen, why, and (settled) the decision. */
export function approvalBody(prompt: ApprovalPrompt): string {
  const lines = [prompt.summary, `Why: ${prompt.reason}`];
  if (prompt.decision) lines.push("", decisionLine(prompt.decision, prompt.tool));
  return lines.join("\n");
}

/** A prompt as plain text. */
export function approvalText(prompt: ApprovalPrompt): string {
  return `${approvalTitle(prompt)}\n${approvalBody(prompt)}`;
}

function promptOf(token: string, ticket: Ticket, decision?: Decision): ApprovalPrompt {
  const prompt: ApprovalPrompt = {
    token,
    tool: ticket.tool,
    summary: ticket.summary,
    reason: ticket.reason,
  };
  const settled = decision ?? ticket.decision;
  if (settled) prompt.decision = settled;
  return prompt;
}

function summaryOf(event: ApprovalRequest): string {
  if (event.summary.trim() !== "") return event.summary;
  try {
    return JSON.stringify(event.args) ?? "";
  } catch {
    return "";
  }
}

const ticketKey = (token: string) => `${TICKET_PREFIX}${token}`;
const callKey = (runId: string, callId: string) => `${CALL_PREFIX}${runId}:${callId}`;

export interface ApprovalButtonsDeps {
  team: Team;
  mappings: MappingRepo;
  users: ConnectorUsers;
  now: () => number;
  /** How long a prompt's buttons work at most (default 7 days). */
  ttlMs?: number;
  /** Whether the connector's kind asks approvals with buttons (false once the connector is gone). */
  asks(connectorId: string): Promise<boolean>;
  /** Queues messages in the connector's outbox. */
  enqueue(connectorId: string, messages: OutboundMessage[]): Promise<void>;
  /** The prompt updater of the connector's driver running here (undefined: not running here). */
  updater(connectorId: string): ConnectorDriver["approvals"];
  onError(err: unknown): void;
  /** Where decisions taken here are audited (the server's audit log); none: not audited. */
  audit?: AuditSink;
}

/** Approval prompts with buttons in external chats. */
export class ApprovalButtons {
  readonly #deps: ApprovalButtonsDeps;
  /** Calls being answered by a press here: the press shows its own decision. */
  readonly #pressing = new Set<string>();
  readonly #lock = new KeyedLock();

  constructor(deps: ApprovalButtonsDeps) {
    this.#deps = deps;
  }

  /** Whether a press here is answering the call (its decision event needs no prompt update). */
  pressing(runId: string, callId: string): boolean {
    return this.#pressing.has(callKey(runId, callId));
  }

  /** A run of the chat's channel asks approval for a call: queue a prompt with a fresh ticket. */
  async ask(chat: ChatRef, event: ApprovalRequest): Promise<void> {
    if (event.state !== "requested") return;
    if (!(await this.#deps.asks(chat.connectorId))) {
      // A platform without buttons here: the chat still learns what waits, and where to decide it.
      const text = `${approvalText({
        token: "",
        tool: clip(event.tool, LIMITS.tool),
        summary: clip(summaryOf(event), LIMITS.summary) || event.tool,
        reason: clip(event.reason, LIMITS.reason) || "the tool asks first",
      })}\n${DECIDE_ON_WEB}`;
      await this.#deps.enqueue(chat.connectorId, [
        { chatId: chat.chatId, text, part: 1, parts: 1, runId: event.runId },
      ]);
      return;
    }
    const state = this.#deps.mappings.stateOf(chat.connectorId);
    await this.#prune(state);
    const token = newApprovalToken();
    const ticket: Ticket = {
      runId: event.runId,
      callId: event.callId,
      chatId: chat.chatId,
      tool: clip(event.tool, LIMITS.tool),
      summary: clip(summaryOf(event), LIMITS.summary) || event.tool,
      reason: clip(event.reason, LIMITS.reason) || "the tool asks first",
      expiresAt: this.#deps.now() + (this.#deps.ttlMs ?? DEFAULT_TICKET_TTL_MS),
    };
    await state.set(ticketKey(token), JSON.stringify(ticket));
    await state.set(callKey(ticket.runId, ticket.callId), token);
    const prompt = promptOf(token, ticket);
    await this.#deps.enqueue(chat.connectorId, [
      {
        chatId: chat.chatId,
        text: approvalText(prompt),
        part: 1,
        parts: 1,
        runId: event.runId,
        approval: prompt,
      },
    ]);
  }

  /** A prompt was delivered as platform message `messageId`: remember it (or settle it, if decided meanwhile). */
  async delivered(connectorId: string, prompt: ApprovalPrompt, messageId: string | undefined): Promise<void> {
    if (messageId === undefined || messageId === "") return;
    const state = this.#deps.mappings.stateOf(connectorId);
    await this.#lock.run(prompt.token, async () => {
      const ticket = await this.#ticket(state, prompt.token);
      if (!ticket) return;
      const next = { ...ticket, messageId };
      if (!next.decision) {
        await state.set(ticketKey(prompt.token), JSON.stringify(next));
        return;
      }
      await this.#show(connectorId, next, promptOf(prompt.token, next));
      await this.#forget(state, prompt.token, next);
    });
  }

  /** Decides a press; never rejects (failures are reported and told to the presser). */
  async press(connector: ConnectorRecord, press: ApprovalPress): Promise<ApprovalPressResult> {
    try {
      return await this.#press(connector, press);
    } catch (err) {
      this.#deps.onError(err);
      return { ok: false, notice: FAILED };
    }
  }

  async #press(connector: ConnectorRecord, press: ApprovalPress): Promise<ApprovalPressResult> {
    const { team, users, mappings, now } = this.#deps;
    const state = mappings.stateOf(connector.id);
    const token = press.token;
    if (isFlowChoice(press.choice)) return { ok: false, notice: NOT_OPEN };
    const ticket = isApprovalToken(token) ? await this.#ticket(state, token) : undefined;
    if (
      !ticket ||
      ticket.expiresAt <= now() ||
      (press.chatId !== undefined && press.chatId !== ticket.chatId)
    ) {
      return { ok: false, notice: NOT_OPEN };
    }
    const actor = await mappedActor(users, mappings, connector, press.user.id);
    if (!actor) return { ok: false, notice: NOT_YOURS };
    // Whether the presser may see the run, and whether it still waits on this call.
    let run: TeamRun;
    try {
      run = await team.getRun(actor, ticket.runId);
    } catch (err) {
      if (isRefusal(err) && (err.code === "not_found" || err.code === "forbidden"))
        return { ok: false, notice: NOT_YOURS };
      throw err;
    }
    // In a group bound to the chat, an unlinked guest never decides (anyone in the chat could press).
    if (actor.role === "guest" && (await team.getChannel(actor, run.channelId)).kind === "group") {
      return { ok: false, notice: LINK_FIRST };
    }
    if (run.status !== "waiting" || !run.pendingApprovals?.some((p) => p.callId === ticket.callId)) {
      return this.#stale(state, token, ticket);
    }
    const key = callKey(ticket.runId, ticket.callId);
    this.#pressing.add(key);
    try {
      await team.answerApproval(actor, ticket.runId, ticket.callId, {
        decision: press.choice === "reject" ? "reject" : "approve",
        ...(press.choice === "always" ? { always: true } : {}),
      });
      const account = (await users.get(actor.userId))?.username;
      const by = press.user.name ?? account;
      await auditPress(
        this.#deps.audit,
        connector,
        {
          action: press.choice === "always" ? "approval.grant" : "approval.decide",
          actor: { id: actor.userId, ...(account ? { name: account } : {}) },
          target: `${ticket.runId}/${ticket.callId}`,
          decision: press.choice === "reject" ? "reject" : "approve",
          tool: ticket.tool,
          chatId: ticket.chatId,
          externalUser: press.user,
        },
        this.#deps.onError,
      );
      const decision: Decision = {
        state: press.choice === "reject" ? "rejected" : "approved",
        ...(by ? { by } : {}),
        ...(press.choice === "always" ? { always: true } : {}),
      };
      await this.#lock.run(token, () => this.#forget(state, token, ticket));
      const notice =
        press.choice === "reject"
          ? "Rejected"
          : press.choice === "always"
            ? `Approved, also from now on for ${ticket.tool} in this chat`
            : "Approved";
      return { ok: true, notice, prompt: promptOf(token, ticket, decision) };
    } catch (err) {
      if (isRefusal(err) && err.code === "forbidden") return { ok: false, notice: NOT_YOURS };
      // Decided or ended meanwhile.
      if (isRefusal(err) && (err.code === "conflict" || err.code === "not_found"))
        return this.#stale(state, token, ticket);
      throw err;
    } finally {
      this.#pressing.delete(key);
    }
  }

  /** A press on a prompt whose call no longer waits: drop its ticket and show it settled. */
  async #stale(state: DriverState, token: string, ticket: Ticket): Promise<ApprovalPressResult> {
    await this.#lock.run(token, () => this.#forget(state, token, ticket));
    return { ok: false, notice: NOT_OPEN, prompt: promptOf(token, ticket, { state: "expired" }) };
  }

  /** A call was decided (here, not by a press here): settle its prompt. */
  async decided(chat: ChatRef, event: ApprovalEvent): Promise<void> {
    const state = this.#deps.mappings.stateOf(chat.connectorId);
    const token = await state.get(callKey(event.runId, event.callId));
    if (token === undefined) return;
    let by: string | undefined;
    if (event.by) by = (await this.#deps.users.get(event.by))?.username ?? event.by;
    const decision: Decision = {
      state: event.state,
      ...(by ? { by } : {}),
      ...(event.always ? { always: true } : {}),
      ...(event.note ? { note: clip(event.note, LIMITS.note) } : {}),
    };
    await this.#settle(chat.connectorId, state, token, decision);
  }

  /** A run ended: settle the prompts it left open (cancelled, timed out). */
  async runEnded(chat: ChatRef, run: TeamRun): Promise<void> {
    if (run.status !== "done" && run.status !== "error" && run.status !== "cancelled") return;
    const state = this.#deps.mappings.stateOf(chat.connectorId);
    for (const entry of await state.list(`${CALL_PREFIX}${run.id}:`)) {
      await this.#settle(chat.connectorId, state, entry.value, { state: "expired" });
      await state.delete(entry.key);
    }
  }

  async #settle(connectorId: string, state: DriverState, token: string, decision: Decision): Promise<void> {
    await this.#lock.run(token, async () => {
      const ticket = await this.#ticket(state, token);
      if (!ticket) return;
      if (ticket.messageId === undefined) {
        // Not delivered yet: shown settled once it is (see `delivered`).
        if (ticket.expiresAt > this.#deps.now()) {
          await state.set(ticketKey(token), JSON.stringify({ ...ticket, decision }));
          return;
        }
      } else {
        await this.#show(connectorId, ticket, promptOf(token, ticket, decision));
      }
      await this.#forget(state, token, ticket);
    });
  }

  /** Edits a delivered prompt (best effort: a failure only leaves its buttons, which then say it is closed). */
  async #show(connectorId: string, ticket: Ticket, prompt: ApprovalPrompt): Promise<void> {
    const updater = this.#deps.updater(connectorId);
    if (!updater || ticket.messageId === undefined) return;
    try {
      await updater.update(ticket.chatId, ticket.messageId, prompt);
    } catch (err) {
      this.#deps.onError(err);
    }
  }

  async #ticket(state: DriverState, token: string): Promise<Ticket | undefined> {
    const raw = await state.get(ticketKey(token));
    if (raw === undefined) return undefined;
    try {
      return JSON.parse(raw) as Ticket;
    } catch {
      return undefined;
    }
  }

  async #forget(state: DriverState, token: string, ticket: Ticket): Promise<void> {
    await state.delete(ticketKey(token));
    await state.delete(callKey(ticket.runId, ticket.callId));
  }

  /** Drops expired tickets of a connector. */
  async #prune(state: DriverState): Promise<void> {
    const now = this.#deps.now();
    for (const entry of await state.list(TICKET_PREFIX)) {
      let ticket: Ticket | undefined;
      try {
        ticket = JSON.parse(entry.value) as Ticket;
      } catch {
        ticket = undefined;
      }
      if (ticket && ticket.expiresAt > now) continue;
      await state.delete(entry.key);
      if (ticket) await state.delete(callKey(ticket.runId, ticket.callId));
    }
  }
}
