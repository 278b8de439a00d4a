/** Agent management: validated create/update/delete, and SOUL.md personas. */
import { OutputChecker } from "../agent/structured-output.js";
import { modelChainOf, parseModelString } from "../config/resolve-model.js";
import { conflict, DimsumError, forbidden, invalid, notFound } from "../errors.js";
import { isReasoningEffort } from "../llm/reasoning.js";
import {
  canChangeVisibility,
  canUseResource,
  checkVisibility,
  type Visibility,
} from "../shared/visibility.js";
import { assertCanManageAgents, assertNotGuest } from "./access.js";
import { assertMaySetNetwork } from "./agent-network.js";
import type { PersonaStore } from "./personas.js";
import type { TeamStore } from "./team-store.js";
import type { Actor, AgentInput, AgentPatch, AgentRecord, SoulFile } from "./types.js";

const AGENT_ID = /^[a-z0-9][a-z0-9_-]{0,39}$/;
/** Mention keywords cannot be agent ids. */
const RESERVED_IDS = new Set(["all", "chain", "system", "everyone", "here"]);
const MAX_SOUL_BYTES = 256 * 1024;

export interface AgentServiceDeps {
  store: TeamStore;
  personas: PersonaStore;
  /** Refuses tool names that are not in the catalogue, listing the known ones. */
  checkToolNames: (names: readonly string[]) => void;
  now: () => number;
  /** Called after an agent is deleted (the facade drops it from channels). */
  onDeleted: (agentId: string) => Promise<void>;
}

/** Agents and their personas. */
export class AgentService {
  readonly #deps: AgentServiceDeps;

  constructor(deps: AgentServiceDeps) {
    this.#deps = deps;
  }

  /** Every agent (those the actor may see, when given) with its persona status. */
  async list(actor?: Actor): Promise<AgentRecord[]> {
    const agents = await this.#deps.store.agents.list();
    const visible = actor ? agents.filter((a) => canUseResource(actor, a)) : agents;
    return Promise.all(visible.map((a) => this.#withStatus(a)));
  }

  /** The records of the agents the actor may see and use (no persona status: for routing). */
  async usable(actor: Actor): Promise<AgentRecord[]> {
    return (await this.#deps.store.agents.list()).filter((a) => canUseResource(actor, a));
  }

  /**
   * The agent, or `not_found` naming the known ids (those the actor may see, when given): an agent the
   * actor may not see gets the same answer as one that does not exist.
   */
  async require(id: string, actor?: Actor): Promise<AgentRecord> {
    const agent = await this.#deps.store.agents.get(id);
    if (agent && (!actor || canUseResource(actor, agent))) return agent;
    throw await agentNotFound(this.#deps.store, id, actor);
  }

  async get(id: string, actor?: Actor): Promise<AgentRecord> {
    return this.#withStatus(await this.require(id, actor));
  }

  /** Creates an agent (owner/admin), writing its SOUL.md when given; the creator owns it. */
  async create(actor: Actor, input: AgentInput): Promise<AgentRecord> {
    assertCanManageAgents(actor);
    assertMaySetNetwork(actor, input.network);
    return this.createUnchecked(input, actor.userId);
  }

  /** Creates an agent without an access check (starter agents, owned by nobody: everyone sees them). */
  async createUnchecked(input: AgentInput, ownerId?: string): Promise<AgentRecord> {
    checkVisibility(input.visibility, input.allowedUsers);
    const id = typeof input.id === "string" ? input.id : "";
    if (!AGENT_ID.test(id)) {
      throw invalid(
        `The agent id "${id}" is not allowed.`,
        "use 1 to 40 lower-case letters, digits, - or _, starting with a letter or digit",
      );
    }
    if (RESERVED_IDS.has(id)) throw invalid(`"${id}" is a mention keyword and cannot be an agent id.`);
    if (await this.#deps.store.agents.get(id)) throw conflict(`An agent with id "${id}" already exists.`);
    const now = this.#deps.now();
    const agent = this.#validated({
      id,
      name: input.name,
      emoji: input.emoji ?? "",
      toolsDeny: input.toolsDeny ?? [],
      memory: input.memory ?? true,
      skills: input.skills ?? [],
      askFirst: input.askFirst ?? [],
      createdAt: now,
      updatedAt: now,
      ...(ownerId !== undefined ? { ownerId } : {}),
      ...visibilityOf(input.visibility, input.allowedUsers),
      ...(input.model !== undefined ? { model: chainText(input.model) } : {}),
      ...(input.reasoning !== undefined ? { reasoning: input.reasoning } : {}),
      ...(input.toolsAllow !== undefined ? { toolsAllow: input.toolsAllow } : {}),
      ...(input.knowledgeBases !== undefined ? { knowledgeBases: input.knowledgeBases } : {}),
      ...(input.answerFormat !== undefined ? { answerFormat: input.answerFormat } : {}),
      ...(input.network !== undefined ? { network: input.network } : {}),
    });
    if (input.soul !== undefined) checkSoul(input.soul);
    await this.#deps.store.agents.insert(agent);
    if (input.soul !== undefined) await this.#deps.personas.write(id, input.soul);
    return this.#withStatus(agent);
  }

  /** Changes an agent's settings (owner/admin). `model: ""` or `toolsAllow: null`-like empties reset. */
  async update(actor: Actor, id: string, patch: AgentPatch): Promise<AgentRecord> {
    const current = await this.require(id, actor);
    assertCanManageAgents(actor);
    assertMaySetNetwork(actor, patch.network ?? undefined);
    const next: AgentRecord = { ...current, updatedAt: this.#deps.now() };
    if (patch.visibility !== undefined || patch.allowedUsers !== undefined) {
      checkVisibility(patch.visibility, patch.allowedUsers);
      if (!canChangeVisibility(actor, current)) {
        throw forbidden("Only the agent's owner or an admin can change who sees it.", "ask its owner");
      }
      delete next.visibility;
      delete next.allowedUsers;
      Object.assign(
        next,
        visibilityOf(patch.visibility ?? current.visibility, patch.allowedUsers ?? current.allowedUsers),
      );
    }
    if (patch.name !== undefined) next.name = patch.name;
    if (patch.emoji !== undefined) next.emoji = patch.emoji;
    if (patch.model !== undefined) {
      const model = chainText(patch.model);
      if (model === "") delete next.model;
      else next.model = model;
    }
    if (patch.reasoning !== undefined) {
      if (patch.reasoning === null) delete next.reasoning;
      else next.reasoning = patch.reasoning;
    }
    if ("toolsAllow" in patch) {
      if (patch.toolsAllow === undefined || patch.toolsAllow === null) delete next.toolsAllow;
      else next.toolsAllow = patch.toolsAllow;
    }
    if (patch.toolsDeny !== undefined) next.toolsDeny = patch.toolsDeny;
    if (patch.memory !== undefined) next.memory = patch.memory;
    if (patch.skills !== undefined) next.skills = patch.skills;
    if (patch.askFirst !== undefined) next.askFirst = patch.askFirst;
    if (patch.network === null) delete next.network;
    else if (patch.network !== undefined) next.network = patch.network;
    if (patch.answerFormat === null) delete next.answerFormat;
    else if (patch.answerFormat !== undefined) next.answerFormat = patch.answerFormat;
    if ("knowledgeBases" in patch) {
      if (patch.knowledgeBases === undefined || patch.knowledgeBases === null) delete next.knowledgeBases;
      else next.knowledgeBases = patch.knowledgeBases;
    }
    await this.#deps.store.agents.update(this.#validated(next));
    return this.#withStatus(next);
  }

  /** Deletes the agent and its persona folder (owner/admin). */
  async delete(actor: Actor, id: string): Promise<void> {
    await this.require(id, actor);
    assertCanManageAgents(actor);
    await this.#deps.onDeleted(id);
    await this.#deps.store.agents.delete(id);
    await this.#deps.personas.remove(id);
  }

  /** The SOUL.md of an agent (members and up). */
  async getSoul(actor: Actor, id: string): Promise<SoulFile> {
    assertNotGuest(actor, "read agent personas");
    await this.require(id, actor);
    return this.#deps.personas.read(id);
  }

  /** Replaces the SOUL.md of an agent (owner/admin). */
  async putSoul(actor: Actor, id: string, content: string): Promise<SoulFile> {
    await this.require(id, actor);
    assertCanManageAgents(actor);
    checkSoul(content);
    return this.#deps.personas.write(id, content);
  }

  async #withStatus(agent: AgentRecord): Promise<AgentRecord> {
    return { ...agent, soulStatus: (await this.#deps.personas.read(agent.id)).status };
  }

  #validated(agent: AgentRecord): AgentRecord {
    const name = typeof agent.name === "string" ? agent.name.trim() : "";
    if (name === "" || name.length > 80) throw invalid("An agent needs a name of 1 to 80 characters.");
    agent.name = name;
    if (typeof agent.emoji !== "string" || [...agent.emoji].length > 8) {
      throw invalid("The emoji must be a short string (at most 8 characters).");
    }
    if (agent.model !== undefined) {
      try {
        for (const item of modelChainOf(agent.model)) parseModelString(item);
      } catch (err) {
        throw invalid(
          err instanceof DimsumError ? err.message : String(err),
          "for example openai:gpt-4o, or a fallback chain openai:gpt-4o,deepseek:deepseek-chat",
        );
      }
    }
    if (agent.reasoning !== undefined && !isReasoningEffort(agent.reasoning)) {
      throw invalid("The reasoning effort must be off, low, medium or high.");
    }
    this.#deps.checkToolNames([...(agent.toolsAllow ?? []), ...agent.toolsDeny]);
    if (agent.knowledgeBases && !agent.knowledgeBases.every((s) => typeof s === "string")) {
      throw invalid("Knowledge bases must be a list of names.");
    }
    if (!agent.skills.every((s) => typeof s === "string")) throw invalid("Skills must be a list of names.");
    if (agent.answerFormat !== undefined) {
      try {
        new OutputChecker({ schema: agent.answerFormat });
      } catch (err) {
        throw invalid(
          `The answer format is not usable: ${err instanceof Error ? err.message : String(err)}`,
          'give a JSON Schema object, e.g. {"type": "object", "properties": {"title": {"type": "string"}}}',
        );
      }
    }
    return agent;
  }
}

/** The visibility fields a record holds: the defaults (everyone, nobody listed) left out. */
function visibilityOf(
  visibility: Visibility | undefined,
  allowedUsers: readonly string[] | undefined,
): Pick<AgentRecord, "visibility" | "allowedUsers"> {
  const people = [...new Set(allowedUsers ?? [])];
  return {
    ...(visibility !== undefined && visibility !== "everyone" ? { visibility } : {}),
    ...(people.length > 0 ? { allowedUsers: people } : {}),
  };
}

/**
 * The `not_found` for an agent id: the same for one that does not exist and one the actor may not
 * see, listing only the agents the actor may see.
 */
export async function agentNotFound(store: TeamStore, id: string, actor?: Actor): Promise<DimsumError> {
  const known = (await store.agents.list()).filter((a) => !actor || canUseResource(actor, a));
  return notFound(
    `No agent with id "${id}".`,
    `known agents: ${known.map((a) => a.id).join(", ") || "(none)"}`,
  );
}

function checkSoul(content: string): void {
  if (typeof content !== "string") throw invalid("SOUL.md content must be text.");
  if (Buffer.byteLength(content) > MAX_SOUL_BYTES) {
    throw invalid(`SOUL.md is larger than ${MAX_SOUL_BYTES / 1024} KB.`, "shorten the persona");
  }
}

/** A model setting as stored: one model, or a chain as a comma list (`a:x,b:y`). */
function chainText(value: string | readonly string[]): string {
  return modelChainOf(value).join(",");
}
