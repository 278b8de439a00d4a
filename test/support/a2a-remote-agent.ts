/**
 * A remote A2A agent for tests, built on the official `@a2a-js/sdk` server parts (its request handler
 * and JSON-RPC transport) over a plain node:http server: it answers "Remote says: <task>" in three
 * streamed artifact chunks, and only to requests carrying its bearer token.
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

export interface RemoteA2aAgent {
  url: string;
  server: Server;
  /** The tasks it was asked, in order. */
  asked: string[];
  /** The Authorization header of every request. */
  authorizations: Array<string | undefined>;
  close(): Promise<void>;
}

/** The remote agent: answers "Remote says: <task>" in three streamed chunks. */
function executorFor(remote: Pick<RemoteA2aAgent, "asked">, chunkDelayMs: number): AgentExecutor {
  return {
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
      for (const [i, text] of pieces.entries()) {
        if (chunkDelayMs > 0) await new Promise((r) => setTimeout(r, chunkDelayMs));
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
      }
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
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString();
}

/** Starts the remote agent on 127.0.0.1; `token` is the bearer it accepts. */
export async function startRemoteA2aAgent(token: string, chunkDelayMs = 0): Promise<RemoteA2aAgent> {
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
    if (req.headers.authorization !== `Bearer ${token}`) {
      res.writeHead(401).end();
      return;
    }
    if (req.method === "GET" && req.url === "/.well-known/agent-card.json") {
      res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(AgentCard.toJSON(card)));
      return;
    }
    const handler = new JsonRpcTransportHandler(
      new DefaultRequestHandler(card, new InMemoryTaskStore(), executorFor(state, chunkDelayMs)),
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
  return {
    url: `http://127.0.0.1:${port}`,
    server,
    ...state,
    close: () => new Promise((r) => server.close(() => r())),
  };
}
