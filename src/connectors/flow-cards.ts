/**
 * A collaboration flow's progress in the external chat as ONE card updated in place: when a flow of
 * a chat's channel starts, a card (step k of n, who is working, the steps) is queued in the outbox
 * like an answer; each later transition of the flow edits that card on the platform, never posting
 * another message. While the flow can take them the card has buttons (Pause / Resume, Skip, Retry),
 * which carry a ticket token and the choice only, as approval buttons do (see `approval-buttons.ts`):
 * a press is taken only from a person linked to an account that may manage the channel.
 *
 * The card's platform id and its ticket live in the connector's state, so an instance that did not
 * send the card still updates it. Updates are best effort: a failed one leaves the card as it was,
 * and the next transition shows the whole state again.
 */
import { isRefusal } from "../errors.js";
import { KeyedLock } from "../team/keyed-lock.js";
import type { FlowAction, FlowRecord, Team } from "../team/types.js";
import type { ChatRef } from "./answer-router.js";
import { isApprovalToken, LINK_FIRST, NOT_OPEN, NOT_YOURS, newApprovalToken } from "./approval-buttons.js";
import { mappedActor } from "./inbound-pipeline.js";
import { type AuditSink, auditPress } from "./press-audit.js";
import type { MappingRepo } from "./store/mapping-repo.js";
import type {
  ApprovalPress,
  ApprovalPressResult,
  ConnectorDriver,
  ConnectorRecord,
  ConnectorUsers,
  DriverState,
  FlowCard,
  FlowChoice,
  OutboundMessage,
} from "./types.js";

/** Reads every flow and channel (an admin sees all). */
const LISTENER = { userId: "connector:flow-cards", role: "admin" } as const;

const CARD_PREFIX = "flow-card:";
const TOKEN_PREFIX = "flow-token:";

/** What the connector remembers of a flow's card (JSON under `flow-card:<flowId>`). */
interface CardEntry {
  token: string;
  chatId: string;
  /** The platform's id of the card, once delivered. */
  messageId?: string;
  /** The title and lines last shown, so an unchanged state is not sent again. */
  shown?: string;
}

export const FLOW_BUTTONS: Readonly<Record<FlowChoice, string>> = {
  pause: "⏸ Pause",
  resume: "▶️ Resume",
  skip: "⏭ Skip",
  retry: "🔁 Retry",
};

const STEP_MARKS = { waiting: "◻️", running: "⏳", completed: "✅", error: "⚠️", skipped: "⏭" } as const;

export interface FlowCardsDeps {
  team: Team;
  mappings: MappingRepo;
  users: ConnectorUsers;
  /** Whether the connector's kind shows flow cards (false once the connector is gone). */
  shows(connectorId: string): Promise<boolean>;
  enqueue(connectorId: string, messages: OutboundMessage[]): Promise<void>;
  /** The card updater of the connector's driver running here (undefined: not running here). */
  updater(connectorId: string): ConnectorDriver["flowCards"];
  onError(err: unknown): void;
  /** Where approvals of flow steps taken here are audited (the server's audit log). */
  audit?: AuditSink;
}

/** Done or stopped: nothing more can happen to it (a failed step can still be retried or skipped). */
const ended = (flow: FlowRecord) => flow.status === "done" || flow.status === "stopped";

/** The step a Skip press skips: the current one when it failed or waits, else the next waiting one. */
function skippable(flow: FlowRecord): number | undefined {
  const current = flow.steps[flow.currentStep];
  if (current && (current.status === "error" || current.status === "waiting")) return flow.currentStep;
  const next = flow.steps.findIndex((s, i) => i > flow.currentStep && s.status === "waiting");
  return next >= 0 ? next : undefined;
}

/** The buttons a flow in this state can take. */
export function flowButtons(flow: FlowRecord): FlowChoice[] {
  const skip = skippable(flow) !== undefined ? (["skip"] as const) : [];
  switch (flow.status) {
    case "idle":
    case "running":
      return ["pause", ...skip];
    case "paused":
      return ["resume", ...skip];
    case "error":
      return ["retry", ...skip];
    default:
      return [];
  }
}

/** The card of a flow in its present state; `label` names an agent (emoji and name). */
export function flowCardOf(flow: FlowRecord, token: string, label: (agentId: string) => string): FlowCard {
  const n = flow.steps.length;
  const k = Math.min(flow.currentStep + 1, n);
  const who = flow.steps[flow.currentStep];
  const name = who ? label(who.agentId) : "";
  const heads: Record<FlowRecord["status"], string> = {
    idle: `🔗 Flow: step ${k} of ${n}, starting`,
    running: `🔗 Flow: step ${k} of ${n}, ${name} is working`,
    paused: `⏸ Flow paused at step ${k} of ${n} (${name})`,
    error: `⚠️ Flow failed at step ${k} of ${n} (${name})`,
    done: `✅ Flow done: ${n} of ${n} steps`,
    stopped: `⏹ Flow stopped at step ${k} of ${n}`,
  };
  const lines = flow.steps.map((step, i) => {
    const error = step.status === "error" && step.error ? `: ${step.error.slice(0, 200)}` : "";
    return `${STEP_MARKS[step.status]} ${i + 1}. ${label(step.agentId)}${error}`;
  });
  return { token, title: heads[flow.status], lines, buttons: flowButtons(flow), ended: ended(flow) };
}

/** A flow card as plain text: the title, then a line per step. */
export function flowCardText(card: FlowCard): string {
  return [card.title, ...card.lines].join("\n");
}

/** What a card shows, buttons included (to tell an unchanged state). */
function signature(card: FlowCard): string {
  return `${flowCardText(card)}\n[${card.buttons.join(",")}]`;
}

/** Progress cards of flows in external chats. */
export class FlowCards {
  readonly #deps: FlowCardsDeps;
  readonly #lock = new KeyedLock();
  readonly #labels = new Map<string, string>();

  constructor(deps: FlowCardsDeps) {
    this.#deps = deps;
  }

  /** A flow of the chat's channel changed: queue its card (first time) or update it in place. */
  async changed(chat: ChatRef, flow: FlowRecord): Promise<void> {
    const state = this.#deps.mappings.stateOf(chat.connectorId);
    await this.#lock.run(flow.id, async () => {
      const entry = await this.#entry(state, flow.id);
      if (!entry) {
        if (ended(flow) || !(await this.#deps.shows(chat.connectorId))) return;
        const token = newApprovalToken();
        const card = flowCardOf(flow, token, await this.#labeller(flow));
        const shown = signature(card);
        await state.set(`${TOKEN_PREFIX}${token}`, flow.id);
        await state.set(`${CARD_PREFIX}${flow.id}`, JSON.stringify({ token, chatId: chat.chatId, shown }));
        await this.#deps.enqueue(chat.connectorId, [
          { chatId: chat.chatId, text: flowCardText(card), part: 1, parts: 1, flow: card },
        ]);
        return;
      }
      // Not delivered yet: `delivered` shows the state it then finds.
      if (entry.messageId === undefined) return;
      await this.#show(chat.connectorId, state, flow, entry);
    });
  }

  /** A card was delivered as platform message `messageId`: remember it, and show what changed meanwhile. */
  async delivered(connectorId: string, card: FlowCard, messageId: string | undefined): Promise<void> {
    if (messageId === undefined || messageId === "") return;
    const state = this.#deps.mappings.stateOf(connectorId);
    const flowId = await state.get(`${TOKEN_PREFIX}${card.token}`);
    if (flowId === undefined) return;
    await this.#lock.run(flowId, async () => {
      const entry = await this.#entry(state, flowId);
      if (!entry) return;
      const next = { ...entry, messageId };
      await state.set(`${CARD_PREFIX}${flowId}`, JSON.stringify(next));
      let flow: FlowRecord;
      try {
        flow = await this.#deps.team.getFlow(LISTENER, flowId);
      } catch {
        return;
      }
      await this.#show(connectorId, state, flow, next);
    });
  }

  /** Decides a press of a card's button; never rejects. */
  async press(connector: ConnectorRecord, press: ApprovalPress): Promise<ApprovalPressResult> {
    try {
      return await this.#press(connector, press);
    } catch (err) {
      this.#deps.onError(err);
      return { ok: false, notice: "Dimsum could not take this; try again." };
    }
  }

  async #press(connector: ConnectorRecord, press: ApprovalPress): Promise<ApprovalPressResult> {
    const { team, users, mappings } = this.#deps;
    const state = mappings.stateOf(connector.id);
    const flowId = isApprovalToken(press.token)
      ? await state.get(`${TOKEN_PREFIX}${press.token}`)
      : undefined;
    const entry = flowId ? await this.#entry(state, flowId) : undefined;
    if (!flowId || !entry || (press.chatId !== undefined && press.chatId !== entry.chatId)) {
      return { ok: false, notice: NOT_OPEN };
    }
    const actor = await mappedActor(users, mappings, connector, press.user.id);
    if (!actor) return { ok: false, notice: NOT_YOURS };
    if (actor.role === "guest") return { ok: false, notice: LINK_FIRST };
    let flow: FlowRecord;
    try {
      flow = await team.getFlow(actor, flowId);
    } catch (err) {
      if (isRefusal(err) && (err.code === "not_found" || err.code === "forbidden"))
        return { ok: false, notice: NOT_YOURS };
      throw err;
    }
    const action = this.#action(flow, press.choice as FlowChoice);
    if (!action) return { ok: false, notice: "The flow cannot do that now." };
    try {
      await team.flowAction(actor, flowId, action);
    } catch (err) {
      if (isRefusal(err) && err.code === "forbidden") return { ok: false, notice: NOT_YOURS };
      if (isRefusal(err) && (err.code === "conflict" || err.code === "not_found"))
        return { ok: false, notice: err.message.slice(0, 200) };
      throw err;
    }
    if (action.action === "approve") {
      const account = (await users.get(actor.userId))?.username;
      await auditPress(
        this.#deps.audit,
        connector,
        {
          action: "approval.decide",
          actor: { id: actor.userId, ...(account ? { name: account } : {}) },
          target: `flow:${flowId}`,
          decision: "approve",
          chatId: entry.chatId,
          externalUser: press.user,
        },
        this.#deps.onError,
      );
    }
    const done: Record<FlowChoice, string> = {
      pause: "Paused",
      resume: "Resumed",
      skip: "Skipped",
      retry: "Retrying",
    };
    return { ok: true, notice: done[press.choice as FlowChoice] };
  }

  #action(flow: FlowRecord, choice: FlowChoice): FlowAction | undefined {
    switch (choice) {
      case "pause":
        return { action: "pause" };
      case "resume": {
        // A paused step that needs approval goes on by approving it.
        const current = flow.steps[flow.currentStep];
        return current?.status === "completed" && current.requiresApproval
          ? { action: "approve", stepIndex: flow.currentStep }
          : { action: "resume" };
      }
      case "retry":
        return { action: "retry", stepIndex: flow.currentStep };
      case "skip": {
        const index = skippable(flow);
        return index === undefined ? undefined : { action: "skip", stepIndex: index };
      }
    }
  }

  /** Edits the delivered card to the flow's state (unchanged states are not sent again). */
  async #show(connectorId: string, state: DriverState, flow: FlowRecord, entry: CardEntry): Promise<void> {
    const card = flowCardOf(flow, entry.token, await this.#labeller(flow));
    const shown = signature(card);
    if (card.ended) {
      await state.delete(`${TOKEN_PREFIX}${entry.token}`);
      await state.delete(`${CARD_PREFIX}${flow.id}`);
    } else if (shown !== entry.shown) {
      await state.set(`${CARD_PREFIX}${flow.id}`, JSON.stringify({ ...entry, shown }));
    }
    if (shown === entry.shown) return;
    const updater = this.#deps.updater(connectorId);
    if (!updater || entry.messageId === undefined) return;
    try {
      await updater.update(entry.chatId, entry.messageId, card);
    } catch (err) {
      this.#deps.onError(err);
    }
  }

  async #entry(state: DriverState, flowId: string): Promise<CardEntry | undefined> {
    const raw = await state.get(`${CARD_PREFIX}${flowId}`);
    if (raw === undefined) return undefined;
    try {
      return JSON.parse(raw) as CardEntry;
    } catch {
      return undefined;
    }
  }

  /** Labels the flow's agents by emoji and name (looked up once each). */
  async #labeller(flow: FlowRecord): Promise<(agentId: string) => string> {
    for (const step of flow.steps) {
      if (this.#labels.has(step.agentId)) continue;
      try {
        const agent = await this.#deps.team.getAgent(LISTENER, step.agentId);
        this.#labels.set(step.agentId, `${agent.emoji ? `${agent.emoji} ` : ""}${agent.name}`);
      } catch {
        this.#labels.set(step.agentId, `@${step.agentId}`);
      }
    }
    return (agentId) => this.#labels.get(agentId) ?? `@${agentId}`;
  }
}
