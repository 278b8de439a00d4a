/**
 * Dimsum agents as A2A agents, spoken to by the official `@a2a-js/sdk` client (1.0) and by raw 0.3
 * JSON-RPC: cards, send, stream, get, cancel; API-token auth (401 without, 403 for guests).
 */
import { randomUUID } from "node:crypto";
import { type Message, Role, type SendMessageRequest, TaskState } from "@a2a-js/sdk";
import {
  ClientFactory,
  ClientFactoryOptions,
  DefaultAgentCardResolver,
  JsonRpcTransportFactory,
} from "@a2a-js/sdk/client";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { type FakeLlmServer, startFakeLlmServer } from "../../src/testing/fake-llm-server.js";
import { call, withUsers } from "../server/helpers.js";
import { startTeamServer, type TeamServer } from "../server/team-helpers.js";
import { AgentScripts, agentOf, lastUserText, systemOf } from "../team/harness.js";

let llm: FakeLlmServer;
const scripts = new AgentScripts();

beforeAll(async () => {
  llm = await startFakeLlmServer({ defaultTurn: scripts.turn });
});
afterAll(async () => llm.close());
beforeEach(() => {
  llm.reset();
  scripts.clear();
});

async function setUp(): Promise<{ s: TeamServer; token: string; guestToken: string }> {
  const s = await startTeamServer({ llmUrl: llm.url });
  const { owner, users } = await withUsers(s.url, ["guest"]);
  const token = async (session: typeof owner) =>
    (
      (await (await call(s.url, "/api/tokens", { session, body: { name: "a2a" } })).json()) as {
        token: string;
      }
    ).token;
  return { s, token: await token(owner), guestToken: await token(users.guest!) };
}

/** An SDK client for an agent's card, sending the token (if any) on every request. */
function clientFor(cardUrl: string, token?: string, path: string | null = "") {
  const fetchImpl: typeof fetch = (input, init) => {
    const headers = new Headers(init?.headers);
    if (token) headers.set("authorization", `Bearer ${token}`);
    return fetch(input, { ...init, headers });
  };
  const factory = new ClientFactory(
    ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
      transports: [new JsonRpcTransportFactory({ fetchImpl })],
      cardResolver: new DefaultAgentCardResolver({ fetchImpl }),
    }),
  );
  // `null`: the SDK's own default path (/.well-known/agent-card.json) under a base URL.
  return path === null ? factory.createFromUrl(cardUrl) : factory.createFromUrl(cardUrl, path);
}

function userMessage(text: string): SendMessageRequest {
  const message: Message = {
    messageId: randomUUID(),
    contextId: "",
    taskId: "",
    role: Role.ROLE_USER,
    parts: [
      { content: { $case: "text", value: text }, metadata: undefined, filename: "", mediaType: "text/plain" },
    ],
    metadata: undefined,
    extensions: [],
    referenceTaskIds: [],
  };
  return { tenant: "", message, configuration: undefined, metadata: undefined };
}

function textOf(message: Message | undefined): string {
  return (message?.parts ?? []).map((p) => (p.content?.$case === "text" ? p.content.value : "")).join("");
}

describe("A2A server", () => {
  it("lists the caller's agents and serves each one's card; 401 without a token", async () => {
    const { s, token } = await setUp();
    expect((await fetch(`${s.url}/.well-known/agent-card.json`)).status).toBe(401);
    expect((await fetch(`${s.url}/a2a`)).status).toBe(401);
    expect((await fetch(`${s.url}/a2a/writer/.well-known/agent-card.json`)).status).toBe(401);
    // The list of agents lives at /a2a (the well-known path is the server's own card).
    const list = (await (
      await fetch(`${s.url}/a2a`, { headers: { authorization: `Bearer ${token}` } })
    ).json()) as { agents: Array<{ id: string; url: string; card: string }> };
    const writer = list.agents.find((a) => a.id === "writer");
    expect(writer?.url).toBe(`${s.url}/a2a/writer`);
    expect(writer?.card).toBe(`${s.url}/a2a/writer/.well-known/agent-card.json`);

    // A 0.3 client (no A2A-Version) gets 0.3's card shape; a 1.0 client the 1.0 card.
    const legacy = (await (
      await fetch(writer?.card ?? "", { headers: { authorization: `Bearer ${token}` } })
    ).json()) as Record<string, unknown>;
    expect(legacy).toMatchObject({
      url: `${s.url}/a2a/writer`,
      protocolVersion: "0.3.0",
      preferredTransport: "JSONRPC",
    });
    const v1 = (await (
      await fetch(writer?.card ?? "", { headers: { authorization: `Bearer ${token}`, "A2A-Version": "1.0" } })
    ).json()) as { supportedInterfaces: Array<{ url: string; protocolVersion: string }> };
    expect(v1.supportedInterfaces.map((i) => i.protocolVersion).sort()).toEqual(["0.3", "1.0"]);
  });

  it("serves the server's own A2A card at /.well-known/agent-card.json: an SDK client given the base URL talks to the default agent", async () => {
    const { s, token, guestToken } = await setUp();
    scripts.add("assistant", { text: "Hello from the default agent." });
    scripts.add("coder", { text: "Hello from the coder." });
    // Given only the server's base URL, the official client finds and validates the card.
    const client = await clientFor(s.url, token, null);
    const card = await client.getAgentCard();
    expect(card.name).toBe("Dimsum");
    expect(card.supportedInterfaces.map((i) => i.url)).toContain(`${s.url}/a2a`);
    const skills = card.skills.map((skill) => skill.id);
    expect(skills).toEqual(expect.arrayContaining(["assistant", "coder", "writer"]));
    expect(card.description).toContain("@assistant");

    const sent = await client.sendMessage(userMessage("Who answers here?"));
    const task = "status" in sent ? sent : undefined;
    expect(task?.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(textOf(task?.status?.message)).toBe("Hello from the default agent.");
    expect(agentOf(llm.requests.at(-1))).toBe("assistant");

    // A message that starts with @id goes to that agent (one of the card's skills).
    const routed = await client.sendMessage(userMessage("@coder say hello"));
    expect(textOf(("status" in routed ? routed : undefined)?.status?.message)).toBe("Hello from the coder.");
    expect(agentOf(llm.requests.at(-1))).toBe("coder");

    // A 0.3 client (no A2A-Version) gets 0.3's shape of the same card; guests get 403.
    const legacy = (await (
      await fetch(`${s.url}/.well-known/agent-card.json`, { headers: { authorization: `Bearer ${token}` } })
    ).json()) as Record<string, unknown>;
    expect(legacy).toMatchObject({ name: "Dimsum", url: `${s.url}/a2a`, protocolVersion: "0.3.0" });
    const guest = await fetch(`${s.url}/.well-known/agent-card.json`, {
      headers: { authorization: `Bearer ${guestToken}` },
    });
    expect(guest.status).toBe(403);
  });

  it("the SDK client reads the card and streams an answer, as the token's person", async () => {
    const { s, token } = await setUp();
    scripts.add("writer", { text: "Dumplings are folded by hand, one pleat at a time." });
    const client = await clientFor(`${s.url}/a2a/writer/.well-known/agent-card.json`, token);
    const card = await client.getAgentCard();
    expect(card.name).toBe("Writer");

    const chunks: string[] = [];
    let final: TaskState | undefined;
    let finalText = "";
    for await (const event of client.sendMessageStream(userMessage("How are dumplings made?"))) {
      const payload = event.payload;
      if (payload?.$case === "artifactUpdate") {
        for (const part of payload.value.artifact?.parts ?? [])
          if (part.content?.$case === "text" && part.content.value !== "") chunks.push(part.content.value);
      }
      if (payload?.$case === "statusUpdate") {
        final = payload.value.status?.state;
        finalText = textOf(payload.value.status?.message);
      }
    }
    expect(chunks.length).toBeGreaterThan(1);
    expect(chunks.join("")).toBe("Dumplings are folded by hand, one pleat at a time.");
    expect(final).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(finalText).toBe("Dumplings are folded by hand, one pleat at a time.");
    // The agent ran with its persona, on the person's message.
    expect(agentOf(llm.requests[0])).toBe("writer");
    expect(systemOf(llm.requests[0])).toContain("Writer");
    expect(lastUserText(llm.requests[0])).toBe("How are dumplings made?");
  });

  it("sends (blocking) and gets a task; a 0.3 client uses message/send and tasks/get", async () => {
    const { s, token } = await setUp();
    scripts.add("coder", { text: "print('hi')" }, { text: "old-style answer" });
    const client = await clientFor(`${s.url}/a2a/coder/.well-known/agent-card.json`, token);
    const sent = await client.sendMessage(userMessage("say hi in Python"));
    const task = "status" in sent ? sent : undefined;
    expect(task?.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    const got = await client.getTask({ tenant: "", id: task?.id ?? "" });
    expect(got.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(textOf(got.status?.message)).toBe("print('hi')");

    const rpc = (body: unknown) =>
      fetch(`${s.url}/a2a/coder`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer ${token}` },
        body: JSON.stringify(body),
      }).then((r) => r.json() as Promise<{ result?: Record<string, unknown>; error?: unknown }>);
    const legacy = await rpc({
      jsonrpc: "2.0",
      id: 1,
      method: "message/send",
      params: {
        message: {
          kind: "message",
          messageId: randomUUID(),
          role: "user",
          parts: [{ kind: "text", text: "hi" }],
        },
      },
    });
    expect(legacy.error).toBeUndefined();
    expect(legacy.result).toMatchObject({ kind: "task", status: { state: "completed" } });
    const fetched = await rpc({
      jsonrpc: "2.0",
      id: 2,
      method: "tasks/get",
      params: { id: legacy.result?.id },
    });
    expect(fetched.result).toMatchObject({ id: legacy.result?.id, status: { state: "completed" } });
    expect(JSON.stringify(fetched)).toContain("old-style answer");
  });

  it("cancels a running task", async () => {
    const { s, token } = await setUp();
    scripts.add("writer", {
      text: "a very long answer that stalls",
      stall: { afterChunks: 2, mode: "silent" },
    });
    const client = await clientFor(`${s.url}/a2a/writer/.well-known/agent-card.json`, token);
    const stream = client.sendMessageStream(userMessage("write a saga"));
    let taskId = "";
    let last: TaskState | undefined;
    for await (const event of stream) {
      const payload = event.payload;
      if (payload?.$case === "task") taskId = payload.value.id;
      if (payload?.$case === "statusUpdate") last = payload.value.status?.state;
      if (payload?.$case === "artifactUpdate" && taskId) {
        const cancelled = await client.cancelTask({ tenant: "", id: taskId, metadata: undefined });
        expect(cancelled.status?.state).toBe(TaskState.TASK_STATE_CANCELED);
      }
    }
    expect(last).toBe(TaskState.TASK_STATE_CANCELED);
  });

  it("refuses callers without a token (401) and guests (403)", async () => {
    const { s, guestToken } = await setUp();
    await expect(clientFor(`${s.url}/a2a/writer/.well-known/agent-card.json`)).rejects.toThrow(/401/);
    const res = await fetch(`${s.url}/a2a/writer`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "SendMessage", params: {} }),
    });
    expect(res.status).toBe(401);
    const guest = await fetch(`${s.url}/a2a/writer`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${guestToken}` },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "SendMessage", params: {} }),
    });
    expect(guest.status).toBe(403);
    expect(llm.requests).toHaveLength(0);
  });
});
