/**
 * Asks a remote A2A agent with the official `@a2a-js/sdk` client: reads its card, sends the task as a
 * streaming message (or a blocking one when the card says it does not stream) and yields the answer's
 * text as it arrives. Returns the whole answer; a failed, rejected or cancelled task throws.
 */
import { randomUUID } from "node:crypto";
import { type Message, Role, type SendMessageRequest, type StreamResponse, TaskState } from "@a2a-js/sdk";
import {
  type Client,
  ClientFactory,
  ClientFactoryOptions,
  DefaultAgentCardResolver,
  JsonRpcTransportFactory,
  RestTransportFactory,
} from "@a2a-js/sdk/client";
import { DimsumError } from "../errors.js";
import type { RemoteAgentConfig } from "./remote-config.js";
import { textOfA2aParts } from "./task-executor.js";

export type RemoteProgress = { type: "text"; text: string } | { type: "state"; state: string };

/** Where the card is: the URL itself when it names a .json file, else `<url>/.well-known/agent-card.json`. */
export function cardUrlOf(url: string): string {
  if (/\.json(\?|$)/.test(url)) return url;
  return new URL(".well-known/agent-card.json", url.endsWith("/") ? url : `${url}/`).href;
}

function clientFor(remote: RemoteAgentConfig): Promise<Client> {
  const fetchImpl: typeof fetch = (input, init) => {
    const headers = new Headers(init?.headers);
    for (const [key, value] of Object.entries(remote.headers)) headers.set(key, value);
    return fetch(input, { ...init, headers });
  };
  const factory = new ClientFactory(
    ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
      transports: [new JsonRpcTransportFactory({ fetchImpl }), new RestTransportFactory({ fetchImpl })],
      cardResolver: new DefaultAgentCardResolver({ fetchImpl }),
    }),
  );
  return factory.createFromUrl(cardUrlOf(remote.url), "");
}

/** What a remote agent's card says of it, for Settings' "Check". */
export interface RemoteCardSummary {
  name: string;
  description: string;
  skills: Array<{ name: string; description: string }>;
  streaming: boolean;
}

/** Reads the remote agent's card (with its token); throws the reason it could not. */
export async function readRemoteCard(remote: RemoteAgentConfig): Promise<RemoteCardSummary> {
  try {
    const card = await (await clientFor(remote)).getAgentCard();
    return {
      name: card.name,
      description: card.description,
      // A card read over the wire may leave out empty lists.
      skills: (Array.isArray(card.skills) ? card.skills : []).map((s) => ({
        name: s.name,
        description: s.description,
      })),
      streaming: card.capabilities?.streaming !== false,
    };
  } catch (err) {
    throw unreachable(remote, err);
  }
}

function request(task: string): SendMessageRequest {
  const message: Message = {
    messageId: randomUUID(),
    contextId: "",
    taskId: "",
    role: Role.ROLE_USER,
    parts: [
      { content: { $case: "text", value: task }, metadata: undefined, filename: "", mediaType: "text/plain" },
    ],
    metadata: undefined,
    extensions: [],
    referenceTaskIds: [],
  };
  return { tenant: "", message, configuration: undefined, metadata: undefined };
}

const STATE_NAMES: Partial<Record<TaskState, string>> = {
  [TaskState.TASK_STATE_SUBMITTED]: "submitted",
  [TaskState.TASK_STATE_WORKING]: "working",
  [TaskState.TASK_STATE_COMPLETED]: "completed",
  [TaskState.TASK_STATE_FAILED]: "failed",
  [TaskState.TASK_STATE_CANCELED]: "cancelled",
  [TaskState.TASK_STATE_REJECTED]: "rejected",
  [TaskState.TASK_STATE_INPUT_REQUIRED]: "input required",
  [TaskState.TASK_STATE_AUTH_REQUIRED]: "auth required",
};

function unreachable(remote: RemoteAgentConfig, err: unknown): DimsumError {
  return new DimsumError(
    "tool_failed",
    `The A2A agent "${remote.name}" at ${remote.url} could not be reached: ${(err as Error).message ?? err}`,
    { hint: `check its url and token in ${remote.source}` },
  );
}

/** Streams the remote agent's answer to `task`; returns it whole. */
export async function* askRemoteAgent(
  remote: RemoteAgentConfig,
  task: string,
  signal: AbortSignal,
): AsyncGenerator<RemoteProgress, string> {
  let client: Client;
  try {
    client = await clientFor(remote);
  } catch (err) {
    throw unreachable(remote, err);
  }
  const card = await client.getAgentCard();
  let streamed = "";
  let finalText = "";
  let finalState: TaskState | undefined;
  const read = (event: StreamResponse): RemoteProgress[] => {
    const payload = event.payload;
    const out: RemoteProgress[] = [];
    switch (payload?.$case) {
      case "message": {
        finalText = textOfA2aParts(payload.value.parts);
        finalState = TaskState.TASK_STATE_COMPLETED;
        if (streamed === "" && finalText !== "") out.push({ type: "text", text: finalText });
        break;
      }
      case "task":
        finalState = payload.value.status?.state;
        break;
      case "artifactUpdate": {
        const text = textOfA2aParts(payload.value.artifact?.parts ?? []);
        if (text !== "") {
          streamed += text;
          out.push({ type: "text", text });
        }
        break;
      }
      case "statusUpdate": {
        const state = payload.value.status?.state;
        finalState = state;
        const text = textOfA2aParts(payload.value.status?.message?.parts ?? []);
        if (text !== "") finalText = text;
        if (state !== undefined) out.push({ type: "state", state: STATE_NAMES[state] ?? "unknown" });
        break;
      }
    }
    return out;
  };
  try {
    if (card.capabilities?.streaming === false) {
      const result = await client.sendMessage(request(task), { signal });
      if ("status" in result) {
        finalState = result.status?.state;
        finalText = textOfA2aParts(result.status?.message?.parts ?? []);
        const artifacts = result.artifacts.map((a) => textOfA2aParts(a.parts)).join("");
        if (artifacts !== "") finalText = artifacts;
      } else {
        finalState = TaskState.TASK_STATE_COMPLETED;
        finalText = textOfA2aParts(result.parts);
      }
      if (finalText !== "") yield { type: "text", text: finalText };
    } else {
      for await (const event of client.sendMessageStream(request(task), { signal })) yield* read(event);
    }
  } catch (err) {
    if (signal.aborted) throw err;
    throw unreachable(remote, err);
  }
  const answer = streamed !== "" ? streamed : finalText;
  if (finalState !== undefined && finalState !== TaskState.TASK_STATE_COMPLETED) {
    const state = STATE_NAMES[finalState] ?? "ended";
    throw new DimsumError(
      "tool_failed",
      `The A2A agent "${remote.name}" ${state}: ${finalText || "(no message)"}`,
    );
  }
  return answer;
}
