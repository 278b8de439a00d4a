/**
 * Schedules as people (and agents granted `manage_schedule`) see them: members manage their own,
 * owners and admins all; guests none. A schedule may only target a channel its owner can see, and an
 * agent target must be in that channel (the agent of a direct chat). The API, the tool and the UI go
 * through here; the scheduler does the timing.
 */
import { randomUUID } from "node:crypto";
import { forbidden, invalid, notFound } from "../errors.js";
import { isAdmin } from "../team/access.js";
import type { Actor, Team } from "../team/types.js";
import type { ScheduleStore } from "./schedule-store.js";
import { firstRunAt, validateTiming } from "./timing.js";
import type {
  Clock,
  ScheduleInput,
  SchedulePatch,
  ScheduleRecord,
  ScheduleRunRecord,
  ScheduleTarget,
} from "./types.js";

/** Most schedules one person may own. */
export const MAX_SCHEDULES_PER_OWNER = 100;

/** What the service needs of the scheduler (the CLI, with no scheduler running, passes its own). */
export interface ScheduleEngine {
  readonly clock: Clock;
  /** A schedule was created, changed or deleted: re-check when the next one is due. */
  wake(): void;
  isRunning(scheduleId: string): boolean;
  runNow(scheduleId: string): Promise<ScheduleRunRecord>;
}

/** Where targets are looked up, with the owner's access checked (the team facade fits). */
export type TargetDirectory = Pick<Team, "getChannel" | "getAgent">;

export interface ScheduleServiceDeps {
  store: ScheduleStore;
  scheduler: ScheduleEngine;
  team: TargetDirectory;
  /** The current account behind a user id (roles change; deleted users have none). */
  actorOf: (userId: string) => Actor | undefined | Promise<Actor | undefined>;
}

/** A schedule with whether a run of it is in progress. */
export type ScheduleView = ScheduleRecord & { running: boolean };

/** Actor-checked schedule management. */
export class ScheduleService {
  readonly #deps: ScheduleServiceDeps;

  constructor(deps: ScheduleServiceDeps) {
    this.#deps = deps;
  }

  #now(): number {
    return this.#deps.scheduler.clock.now();
  }

  #view(schedule: ScheduleRecord): ScheduleView {
    return { ...schedule, running: this.#deps.scheduler.isRunning(schedule.id) };
  }

  /** The schedule if the actor may manage it; the same 404 when missing or someone else's. */
  async #mine(actor: Actor, id: string): Promise<ScheduleRecord> {
    const schedule = await this.#deps.store.get(id);
    if (!schedule || (!isAdmin(actor) && schedule.ownerId !== actor.userId)) {
      throw notFound(`No schedule with id "${id}".`);
    }
    return schedule;
  }

  /** Checks that the owner may run the target: the channel is theirs to see, the agent is in it. */
  async #checkTarget(owner: Actor, target: ScheduleTarget): Promise<void> {
    const { team } = this.#deps;
    const channel = await team.getChannel(owner, target.channelId);
    if (target.type === "agent") {
      await team.getAgent(owner, target.agentId);
      const inChannel =
        channel.kind === "direct"
          ? channel.leaderAgentId === target.agentId
          : channel.members.some((m) => m.type === "agent" && m.id === target.agentId);
      if (!inChannel) {
        throw invalid(
          `@${target.agentId} is not ${channel.kind === "direct" ? "the agent of" : "in"} the channel "${channel.name}".`,
          channel.kind === "direct"
            ? "pick the agent of this direct chat, or a group"
            : "add the agent to the channel first",
        );
      }
    } else {
      if (channel.kind !== "group") throw invalid("Collaboration chains exist only in group channels.");
      if (channel.chain.length === 0) {
        throw invalid(
          `The group "${channel.name}" has no collaboration chain.`,
          "set its chain in the group settings first",
        );
      }
    }
  }

  async #ownerActor(schedule: ScheduleRecord, editor: Actor): Promise<Actor> {
    if (schedule.ownerId === editor.userId) return editor;
    const owner = await this.#deps.actorOf(schedule.ownerId);
    if (!owner) throw invalid(`The schedule's owner "${schedule.ownerId}" no longer has an account.`);
    return owner;
  }

  /** The schedules the actor may manage (admins: everyone's), oldest first. */
  async list(actor: Actor): Promise<ScheduleView[]> {
    const { store } = this.#deps;
    return (await (isAdmin(actor) ? store.list() : store.list(actor.userId))).map((s) => this.#view(s));
  }

  /** One schedule. */
  async get(actor: Actor, id: string): Promise<ScheduleView> {
    return this.#view(await this.#mine(actor, id));
  }

  /** Creates a schedule owned by the actor. */
  async create(actor: Actor, input: ScheduleInput): Promise<ScheduleView> {
    if (actor.role === "guest")
      throw forbidden("Guests cannot create schedules.", "ask a member or an admin");
    const { store, scheduler } = this.#deps;
    if ((await store.countByOwner(actor.userId)) >= MAX_SCHEDULES_PER_OWNER) {
      throw invalid(
        `You already have ${MAX_SCHEDULES_PER_OWNER} schedules.`,
        "delete some you no longer need",
      );
    }
    const now = this.#now();
    const timing = validateTiming(input.timing, now);
    await this.#checkTarget(actor, input.target);
    const enabled = input.enabled ?? true;
    const schedule: ScheduleRecord = {
      id: `sch_${randomUUID()}`,
      name: input.name.trim(),
      ownerId: actor.userId,
      enabled,
      timing,
      target: input.target,
      missedPolicy: input.missedPolicy ?? "skip",
      createdAt: now,
      updatedAt: now,
    };
    const next = enabled ? firstRunAt(timing, now) : undefined;
    if (next !== undefined) schedule.nextRunAt = next;
    await store.insert(schedule);
    scheduler.wake();
    return this.#view(schedule);
  }

  /** Changes a schedule; a new timing or re-enabling computes the next run from now. */
  async update(actor: Actor, id: string, patch: SchedulePatch): Promise<ScheduleView> {
    const { store, scheduler } = this.#deps;
    const current = await this.#mine(actor, id);
    const now = this.#now();
    const next: ScheduleRecord = { ...current, updatedAt: now };
    if (patch.name !== undefined) next.name = patch.name.trim();
    if (patch.missedPolicy !== undefined) next.missedPolicy = patch.missedPolicy;
    if (patch.target !== undefined) {
      await this.#checkTarget(await this.#ownerActor(current, actor), patch.target);
      next.target = patch.target;
    }
    const retimed = patch.timing !== undefined;
    if (patch.timing !== undefined) next.timing = validateTiming(patch.timing, now);
    if (patch.enabled !== undefined) next.enabled = patch.enabled;
    const reenabled = next.enabled && !current.enabled;
    if (!next.enabled) delete next.nextRunAt;
    else if (retimed || reenabled) {
      const first = firstRunAt(next.timing, now);
      if (first === undefined) delete next.nextRunAt;
      else next.nextRunAt = first;
    }
    // Unless the timing changed, the next run stays what the scheduler made it.
    const moved = !next.enabled || retimed || reenabled;
    if (!(await store.update(next, moved))) throw notFound(`No schedule with id "${id}".`);
    scheduler.wake();
    return this.#view(next);
  }

  /** Turns a schedule on or off. */
  setEnabled(actor: Actor, id: string, enabled: boolean): Promise<ScheduleView> {
    return this.update(actor, id, { enabled });
  }

  /** Deletes a schedule and its run history (a run in progress finishes but is not recorded). */
  async remove(actor: Actor, id: string): Promise<void> {
    await this.#mine(actor, id);
    await this.#deps.store.delete(id);
    this.#deps.scheduler.wake();
  }

  /** Starts a run now; the returned record is `running`, or `skipped` when one is in progress. */
  async runNow(actor: Actor, id: string): Promise<ScheduleRunRecord> {
    await this.#mine(actor, id);
    return this.#deps.scheduler.runNow(id);
  }

  /** A schedule's recent runs, newest first. */
  async runs(actor: Actor, id: string, limit = 20): Promise<ScheduleRunRecord[]> {
    await this.#mine(actor, id);
    return this.#deps.store.listRuns(id, limit);
  }
}
