/**
 * Budget notices in the messengers: when a budget passes its soft limit, the person it limits and
 * the owners and admins who linked a messenger account (`/link <code>` in a private chat with a bot)
 * get a message there, queued in that connector's outbox like answers. Only notices emitted on this
 * instance are sent (each instance hears its own), so several instances never send one twice.
 */
import { isAdmin } from "../team/access.js";
import type { BudgetNotice, Team, TeamEvent } from "../team/types.js";
import { ChatBindings } from "./store/chat-bindings.js";
import type { MappingRepo } from "./store/mapping-repo.js";
import type { ConnectorUsers, OutboundMessage } from "./types.js";

/** Hears every budget notice (admins are told of every budget). */
const LISTENER = { userId: "connector:budgets", role: "admin" } as const;

export interface BudgetMessagesDeps {
  team: Team;
  mappings: MappingRepo;
  users: ConnectorUsers;
  /** Every connector's id. */
  connectorIds(): Promise<string[]>;
  enqueue(connectorId: string, messages: OutboundMessage[]): Promise<void>;
  onError(err: unknown): void;
}

function amount(notice: BudgetNotice, value: number): string {
  if (notice.unit === "tokens") return `${Math.round(value).toLocaleString("en-US")} tokens`;
  return `$${value.toFixed(value < 1 ? 4 : 2).replace(/\.?0+$/, "")}`;
}

/** What the message says to `userId` (`name`: whose budget it is, as others read it). */
export function budgetMessageText(notice: BudgetNotice, userId: string, name: string): string {
  const period = notice.period === "day" ? "daily" : "monthly";
  const whose = notice.scope === "person" && notice.scopeId === userId ? "Your" : `${name}'s`;
  const used = `${amount(notice, notice.softLimit)} (${amount(notice, notice.spent)} used)`;
  const next = notice.cheaperModel ? ` The next answers use ${notice.cheaperModel}.` : "";
  const hard =
    notice.hardLimit !== null
      ? ` New answers are refused at ${amount(notice, notice.hardLimit)}; an owner or admin can change that in Settings → Spend.`
      : "";
  return `⚠️ ${whose} ${period} budget passed its soft limit of ${used}.${next}${hard}`;
}

/** Sends budget notices to linked people's private chats. */
export class BudgetMessages {
  readonly #deps: BudgetMessagesDeps;
  #unsubscribe: (() => void) | undefined;

  constructor(deps: BudgetMessagesDeps) {
    this.#deps = deps;
  }

  start(): void {
    this.#unsubscribe ??= this.#deps.team.subscribe(
      LISTENER,
      (event) => {
        if (event.type === "budget_notice") this.#send(event).catch((err) => this.#deps.onError(err));
      },
      { local: true },
    );
  }

  stop(): void {
    this.#unsubscribe?.();
    this.#unsubscribe = undefined;
  }

  /** Whose budget it is, as the admins read it: a person's name, `@agent` or the group's name. */
  async #name(notice: BudgetNotice): Promise<string> {
    if (notice.scope === "person")
      return (await this.#deps.users.get(notice.scopeId))?.username ?? notice.scopeId;
    if (notice.scope === "agent") return `@${notice.scopeId}`;
    try {
      return `group "${(await this.#deps.team.getChannel(LISTENER, notice.scopeId)).name}"`;
    } catch {
      return `group "${notice.scopeId}"`;
    }
  }

  async #send(event: Extract<TeamEvent, { type: "budget_notice" }>): Promise<void> {
    const { notice } = event;
    const name = await this.#name(notice);
    const told = new Map<string, boolean>();
    const tells = async (userId: string): Promise<boolean> => {
      let yes = told.get(userId);
      if (yes === undefined) {
        if (notice.scope === "person" && notice.scopeId === userId) yes = true;
        else {
          const user = await this.#deps.users.get(userId);
          yes = user !== undefined && isAdmin({ userId: user.id, role: user.role });
        }
        told.set(userId, yes);
      }
      return yes;
    };
    for (const connectorId of await this.#deps.connectorIds()) {
      const bindings = new ChatBindings(this.#deps.mappings.stateOf(connectorId));
      const messages: OutboundMessage[] = [];
      for (const { link } of await bindings.links()) {
        if (!link.privateChatId || !(await tells(link.userId))) continue;
        messages.push({
          chatId: link.privateChatId,
          text: budgetMessageText(notice, link.userId, name),
          part: 1,
          parts: 1,
        });
      }
      await this.#deps.enqueue(connectorId, messages);
    }
  }
}
