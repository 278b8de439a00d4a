/**
 * A Dimsum agent calls a remote A2A agent: an `@a2a-js/sdk` server (its request handler and JSON-RPC
 * transport on a plain node:http server) started here, configured like a2a.json says. The remote
 * agent's streamed answer shows as a nested run in the calling answer and comes back as the tool result.
 */
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { AgentCard, TaskState } from "@a2a-js/sdk";
import {
  AgentEvent as A2AEvent,
  type AgentExecutor,
  DefaultRequestHandler,
  InMemoryTaskStore,
  JsonRpcTransportHandler,
  ServerCallContext,
} from "@a2a-js/sdk/server";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { parseA2aConfig, type RemoteAgentConfig } from "../../src/a2a/remote-config.js";
import type { ChannelRecord } from "../../src/team/types.js";
import { type FakeLlmServer, startFakeLlmServer } from "../../src/testing/fake-llm-server.js";
import { AgentScripts, alice, lastToolResult, TeamHarness } from "./../team/harness.js";

const REMOTE_TOKEN = "remote-secret-token-123";
let llm: FakeLlmServer;
let remote: { url: string; server: Server; asked: string[]; authorizations: Array<string | undefined> };
const scripts = new AgentScripts();
let h: TeamHarness;
let group: ChannelRecord;

/** The remote agent: answers "Remote says: <task>" in three streamed chunks. */
const executor: AgentExecutor = {
  async execute(context, bus) {
    const { taskId, contextId } = context;
    const task = context.userMessage.parts
      .map((p) => (p.content?.$case === "text" ? p.content.value : ""))
      .join("");
    remote.asked.push(task);
    bus.publish(
      A2AEvent.task({
        id: taskId,
        contextId,
        status: { state: TaskState.TASK_STATE_WORKING, message: undefined, timestamp: undefined },
        artifacts: [],
        history: [context.userMessage],
        metadata: undefined,
      }),
    );
    const pieces = ["Remote ", "says: ", task];
    pieces.forEach((text, i) => {
      bus.publish(
        A2AEvent.artifactUpdate({
          taskId,
          contextId,
          artifact: {
            artifactId: "a",
            name: "answer",
            description: "",
            parts: [
              {
                content: { $case: "text", value: text },
                metadata: undefined,
                filename: "",
                mediaType: "text/plain",
              },
            ],
            metadata: undefined,
            extensions: [],
          },
          append: i > 0,
          lastChunk: i === pieces.length - 1,
          metadata: undefined,
        }),
      );
    });
    bus.publish(
      A2AEvent.statusUpdate({
        taskId,
        contextId,
        status: { state: TaskState.TASK_STATE_COMPLETED, message: undefined, timestamp: undefined },
        metadata: undefined,
      }),
    );
  },
  async cancelTask() {},
};

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString();
}

async function startRemote(): Promise<typeof remote> {
  const state = { asked: [] as string[], authorizations: [] as Array<string | undefined> };
  const server = createServer(async (req, res) => {
    const { port } = server.address() as AddressInfo;
    const url = `http://127.0.0.1:${port}`;
    const card = AgentCard.fromJSON({
      name: "Remote Helper",
      description: "A helper on another system",
      supportedInterfaces: [{ url: `${url}/rpc`, protocolBinding: "JSONRPC", protocolVersion: "1.0" }],
      version: "1.0.0",
      capabilities: { streaming: true },
      defaultInputModes: ["text/plain"],
      defaultOutputModes: ["text/plain"],
      skills: [],
    });
    state.authorizations.push(req.headers.authorization);
    if (req.headers.authorization !== `Bearer ${REMOTE_TOKEN}`) {
      res.writeHead(401).end();
      return;
    }
    if (req.method === "GET" && req.url === "/.well-known/agent-card.json") {
      res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(AgentCard.toJSON(card)));
      return;
    }
    const handler = new JsonRpcTransportHandler(
      new DefaultRequestHandler(card, new InMemoryTaskStore(), executor),
    );
    const result = await handler.handle(
      await readBody(req),
      new ServerCallContext({ requestedVersion: String(req.headers["a2a-version"] ?? "1.0") }),
    );
    if (typeof (result as AsyncGenerator)[Symbol.asyncIterator] === "function") {
      res.writeHead(200, { "content-type": "text/event-stream" });
      for await (const event of result as AsyncGenerator) res.write(`data: ${JSON.stringify(event)}\n\n`);
      res.end();
      return;
    }
    res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(result));
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}`, server, ...state };
}

beforeAll(async () => {
  llm = await startFakeLlmServer({ defaultTurn: scripts.turn });
  remote = await startRemote();
});
afterAll(async () => {
  await llm.close();
  await new Promise((r) => remote.server.close(r));
});

function remoteConfig(): RemoteAgentConfig[] {
  // As a2a.json gives it: the token from the environment.
  const file = JSON.stringify({
    agents: {
      "remote-helper": {
        url: remote.url,
        token: "$" + "{HELPER_TOKEN}",
        description: "Knows the other system.",
      },
    },
  });
  return parseA2aConfig(file, "a2a.json", { HELPER_TOKEN: REMOTE_TOKEN });
}

beforeEach(async () => {
  llm.reset();
  scripts.clear();
  remote.asked.length = 0;
  remote.authorizations.length = 0;
  h = new TeamHarness(llm, { remoteAgents: remoteConfig() });
  group = await h.team.createChannel(alice, {
    kind: "group",
    name: "Remote",
    leaderAgentId: "assistant",
    agentIds: ["assistant"],
    userIds: [],
  });
});
afterEach(async () => h.close());

describe("remote A2A agents", () => {
  it("an agent calls the remote agent; its streamed answer is a nested run and the tool result", async () => {
    scripts.add(
      "assistant",
      { toolCalls: [{ name: "a2a_remote_helper", args: { task: "status of order 42" } }] },
      (request) => ({ text: `The helper said: ${lastToolResult(request)}` }),
    );
    const { runs } = await h.team.postMessage(alice, group.id, "ask the helper about order 42");
    const parent = await h.finished(runs[0]!.id);
    expect(parent.status).toBe("done");

    expect(remote.asked).toEqual(["status of order 42"]);
    expect(remote.authorizations.every((a) => a === `Bearer ${REMOTE_TOKEN}`)).toBe(true);

    const nested = h.events.find(
      (e) => e.type === "run" && e.run.agentId === "a2a:remote-helper" && e.run.status === "done",
    );
    const nestedRun = nested?.type === "run" ? nested.run : undefined;
    expect(nestedRun).toMatchObject({ depth: 1, parentRunId: parent.id, channelId: group.id });
    // The remote answer streamed as the nested run's own text.
    expect(h.streamedText(nestedRun?.id ?? "")).toBe("Remote says: status of order 42");

    const messages = await h.team.listMessages(alice, group.id);
    const answer = messages.at(-1);
    expect(answer?.text).toBe("The helper said: Remote says: status of order 42");
    expect(answer?.parts.map((p) => p.type)).toEqual(["tool", "agent_run", "text"]);
    expect(answer?.parts[1]).toMatchObject({
      type: "agent_run",
      runId: nestedRun?.id,
      agentId: "a2a:remote-helper",
      status: "done",
      parts: [{ type: "text", text: "Remote says: status of order 42" }],
    });
    // The token never reached the model.
    expect(JSON.stringify(llm.requests)).not.toContain(REMOTE_TOKEN);
  });

  it("a remote agent that refuses the call is an error result the model can act on", async () => {
    await h.close();
    const broken = remoteConfig().map((r) => ({ ...r, headers: { authorization: "Bearer wrong-token" } }));
    h = new TeamHarness(llm, { remoteAgents: broken });
    group = await h.team.createChannel(alice, {
      kind: "group",
      name: "Remote",
      leaderAgentId: "assistant",
      agentIds: ["assistant"],
      userIds: [],
    });
    scripts.add(
      "assistant",
      { toolCalls: [{ name: "a2a_remote_helper", args: { task: "anything" } }] },
      (request) => ({ text: `Failed: ${lastToolResult(request)}` }),
    );
    const { runs } = await h.team.postMessage(alice, group.id, "ask the helper");
    expect((await h.finished(runs[0]!.id)).status).toBe("done");
    const answer = (await h.team.listMessages(alice, group.id)).at(-1);
    expect(answer?.text).toContain('The A2A agent "remote-helper"');
    expect(answer?.text).toContain("401");
    expect(answer?.parts[1]).toMatchObject({
      type: "agent_run",
      agentId: "a2a:remote-helper",
      status: "error",
    });
  });
});
