/**
 * The A2A server: each agent a person may use, published as an A2A agent. `/.well-known/agent-card.json`
 * is the server's own A2A card: its endpoint `POST /a2a` answers with the caller's default agent (or
 * the agent a message starts with `@id` for), and its skills are the caller's agents. `GET /a2a` lists
 * those agents with their URLs; `/a2a/<agentId>/.well-known/agent-card.json` is an agent's card and
 * `POST /a2a/<agentId>` its JSON-RPC endpoint (send, stream over SSE, get and cancel
 * a task) in A2A 1.0 and, by method name or `A2A-Version: 0.3`, in 0.3. Authenticated by Dimsum API
 * tokens: the agent runs as the token's person, as `/v1/chat/completions` runs it.
 */
import { A2A_VERSION_HEADER } from "@a2a-js/sdk";
import { isLegacyJsonRpcMethod } from "@a2a-js/sdk/compat/v0_3";
import { LegacyJsonRpcTransportHandler } from "@a2a-js/sdk/compat/v0_3/server";
import {
  DefaultExecutionEventBusManager,
  DefaultRequestHandler,
  InMemoryTaskStore,
  JsonRpcTransportHandler,
  ServerCallContext,
  type TaskStore,
  validateVersion,
} from "@a2a-js/sdk/server";
import type { Context } from "hono";
import { Hono } from "hono";
import {
  agentCardJson,
  agentCardOf,
  type PublishedAgent,
  type PublishedSkill,
  wantsLegacy,
} from "../../a2a/agent-card.js";
import { A2A_CALL, type AgentCall, DimsumTaskExecutor } from "../../a2a/task-executor.js";
import { TASK_SCOPE, taskOwnerOf } from "../../a2a/task-store.js";
import { DimsumError, forbidden, notFound } from "../../errors.js";
import type { Actor, AgentRecord, Team } from "../../team/types.js";
import { apiTokenAuth } from "../auth/middleware.js";
import { type AppEnv, actorOf, type DimsumApp } from "../context.js";

const encoder = new TextEncoder();

/** The agent the server's own card answers with when the caller has it (the starter assistant). */
const DEFAULT_AGENT_ID = "assistant";
/** The task scope of the server's card (tasks are kept per person and agent, this one included). */
const TEAM_SCOPE = "@team";

function published(c: Context<AppEnv>, agent: AgentRecord): PublishedAgent {
  const origin = new URL(c.req.url).origin;
  return {
    id: agent.id,
    name: agent.name,
    description: `${agent.emoji} ${agent.name}, a Dimsum agent (@${agent.id}).`.trim(),
    url: `${origin}/a2a/${agent.id}`,
  };
}

/** The agent for this caller: 404 when it does not exist (or is not theirs to use), 403 for guests. */
async function agentFor(team: Team, actor: Actor, id: string): Promise<AgentRecord> {
  if (actor.role === "guest") throw forbidden("guests cannot talk to agents through the API");
  return team.getAgent(actor, id).catch((err: unknown) => {
    if (err instanceof DimsumError && err.code === "not_found") {
      throw notFound(`There is no agent "${id}": GET /a2a lists yours.`);
    }
    throw err;
  });
}

function isStream(value: unknown): value is AsyncGenerator<unknown, void, undefined> {
  return typeof (value as { [Symbol.asyncIterator]?: unknown })?.[Symbol.asyncIterator] === "function";
}

/** A JSON-RPC stream as SSE; a failure mid-stream is sent as an `error` event. */
function sse(events: AsyncGenerator<unknown, void, undefined>, id: unknown): ReadableStream<Uint8Array> {
  return new ReadableStream<Uint8Array>({
    async pull(out) {
      try {
        const next = await events.next();
        if (next.done) out.close();
        else out.enqueue(encoder.encode(`data: ${JSON.stringify(next.value)}\n\n`));
      } catch (err) {
        const message = err instanceof Error ? err.message : String(err);
        const body = { jsonrpc: "2.0", id: id ?? null, error: { code: -32603, message } };
        out.enqueue(encoder.encode(`event: error\ndata: ${JSON.stringify(body)}\n\n`));
        out.close();
      }
    },
    async cancel() {
      // The client went away: the task goes on (get it later with GetTask).
      await events.return(undefined);
    },
  });
}

/** Mounts the A2A routes on the app (after its guards; before the SPA fallback). */
export function mountA2aRoutes(
  team: Team,
  /** Where tasks are kept (`dimsum serve`: the server's database); none: this process's memory. */
  tasks?: TaskStore,
): (app: DimsumApp) => void {
  // Tasks and their live event buses are kept per person and agent (one person never sees another's).
  const store = tasks ?? new InMemoryTaskStore(taskOwnerOf);
  const buses = new DefaultExecutionEventBusManager(taskOwnerOf);
  const executor = new DimsumTaskExecutor();

  return (app) => {
    /** The caller's agents with their URLs and cards (what this path listed before it served a card). */
    const agentList = async (c: Context<AppEnv>) => {
      const actor = actorOf(c);
      const agents = actor.role === "guest" ? [] : await team.listAgents(actor);
      const origin = new URL(c.req.url).origin;
      return {
        name: "Dimsum",
        description: "The Dimsum agents this API token's person may use, each an A2A agent of its own.",
        url: origin,
        card: `${origin}/.well-known/agent-card.json`,
        agents: agents.map((agent) => {
          const p = published(c, agent);
          return {
            id: p.id,
            name: p.name,
            description: p.description,
            url: p.url,
            card: `${p.url}/.well-known/agent-card.json`,
          };
        }),
      };
    };

    /** The server's card for this caller: endpoint `/a2a`, answered by their default agent. */
    const teamCard = async (c: Context<AppEnv>, actor: Actor) => {
      if (actor.role === "guest") throw forbidden("guests cannot talk to agents through the API");
      const agents = await team.listAgents(actor);
      const fallback = agents.find((a) => a.id === DEFAULT_AGENT_ID) ?? agents[0];
      if (!fallback) throw notFound("You may use no agent here: ask an admin to give you one.");
      const origin = new URL(c.req.url).origin;
      const agent: PublishedAgent = {
        id: "dimsum",
        name: "Dimsum",
        description: `A Dimsum team. A message goes to ${fallback.name} (@${fallback.id}); start it with @id to ask another of the agents listed as skills.`,
        url: `${origin}/a2a`,
      };
      const skills: PublishedSkill[] = agents.map((a) => ({
        id: a.id,
        name: a.name,
        description: published(c, a).description,
      }));
      return { card: { agent, skills }, agents, fallback: fallback.id };
    };

    app.get("/.well-known/agent-card.json", apiTokenAuth, async (c) => {
      const { card } = await teamCard(c, actorOf(c));
      c.header("Vary", A2A_VERSION_HEADER);
      return c.json(agentCardJson(card.agent, wantsLegacy(c.req.header(A2A_VERSION_HEADER)), card.skills));
    });

    const a2a = new Hono<AppEnv>();
    a2a.use("*", apiTokenAuth);
    a2a.get("/:agentId/.well-known/agent-card.json", async (c) => {
      const agent = await agentFor(team, actorOf(c), c.req.param("agentId"));
      c.header("Vary", A2A_VERSION_HEADER);
      return c.json(agentCardJson(published(c, agent), wantsLegacy(c.req.header(A2A_VERSION_HEADER))));
    });
    /** Answers one JSON-RPC request for `card`, each task's conversation going to `agentFor(conversation)`. */
    const rpc = async (
      c: Context<AppEnv>,
      actor: Actor,
      scope: string,
      card: ReturnType<typeof agentCardOf>,
      pick: (conversation: Parameters<AgentCall>[0]) => string,
    ) => {
      let body: Record<string, unknown>;
      try {
        body = (await c.req.json()) as Record<string, unknown>;
      } catch {
        return c.json({
          jsonrpc: "2.0",
          id: null,
          error: { code: -32700, message: "Parse error: send JSON" },
        });
      }
      const method = typeof body?.method === "string" ? body.method : "";
      const header = c.req.header(A2A_VERSION_HEADER);
      // 0.3 clients are known by their method names (`message/send`) or their version header.
      const legacy = method ? isLegacyJsonRpcMethod(method) : wantsLegacy(header);
      const call: AgentCall = (conversation, options) =>
        team.complete(actor, pick(conversation), conversation, {
          signal: options.signal,
          onDelta: options.onDelta,
        });
      const context = new ServerCallContext({
        user: { isAuthenticated: true, userName: actor.userId },
        requestedVersion: legacy ? "0.3" : header?.trim() || "1.0",
        state: new Map<string, unknown>([
          [A2A_CALL, call],
          [TASK_SCOPE, `${actor.userId}/${scope}`],
        ]),
      });
      const handler = new DefaultRequestHandler(card, store, executor, buses);
      const transport = legacy
        ? new LegacyJsonRpcTransportHandler(handler)
        : new JsonRpcTransportHandler(handler);
      try {
        validateVersion(context.requestedVersion, card, "JSONRPC");
      } catch (err) {
        const error = legacy
          ? LegacyJsonRpcTransportHandler.mapToLegacyJSONRPCError(err)
          : JsonRpcTransportHandler.mapToJSONRPCError(err);
        return c.json({ jsonrpc: "2.0", id: body.id ?? null, error });
      }
      const result = await transport.handle(body, context);
      if (!isStream(result)) return c.json(result);
      return c.body(sse(result, body.id), 200, {
        "content-type": "text/event-stream; charset=utf-8",
        "cache-control": "no-cache",
        "x-accel-buffering": "no",
      });
    };

    // The server's card: its endpoint is the caller's default agent, the caller's agents its skills.
    a2a.get("/", async (c) => c.json(await agentList(c)));
    a2a.post("/", async (c) => {
      const actor = actorOf(c);
      const { card, agents, fallback } = await teamCard(c, actor);
      const ids = new Set(agents.map((a) => a.id));
      return rpc(c, actor, TEAM_SCOPE, agentCardOf(card.agent, card.skills), (conversation) => {
        const last = conversation.filter((t) => t.role === "user").at(-1)?.content;
        const text = typeof last === "string" ? last : "";
        const named = /^\s*@([a-z0-9][a-z0-9_-]*)\b/i.exec(text)?.[1]?.toLowerCase();
        return named && ids.has(named) ? named : fallback;
      });
    });
    a2a.post("/:agentId", async (c) => {
      const actor = actorOf(c);
      const agent = await agentFor(team, actor, c.req.param("agentId"));
      return rpc(c, actor, agent.id, agentCardOf(published(c, agent)), () => agent.id);
    });
    app.route("/a2a", a2a);
  };
}
