/**
 * The OpenAI-compatible endpoint: `POST /v1/chat/completions` (streaming and not) and `GET /v1/models`,
 * where a model is an agent id. Authenticated by API tokens; errors in OpenAI's shape. A client that
 * goes away aborts the agent's run.
 */

import { randomUUID } from "node:crypto";
import { type ErrorHandler, Hono } from "hono";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import { OutputChecker, type OutputSpec } from "../../agent/structured-output.js";
import { DimsumError, forbidden, notFound } from "../../errors.js";
import type { Usage } from "../../llm/types.js";
import type { Actor, Team } from "../../team/types.js";
import { apiTokenAuth } from "../auth/middleware.js";
import { type AppEnv, actorOf, type ServerLog } from "../context.js";
import { internalError, statusOf, toApiError } from "../http/errors.js";
import { jsonBody } from "../http/validate.js";
import { messageRateLimit } from "../security/rate-limit.js";
import { type ChatCompletionRequest, type ChatMessageInput, chatCompletionSchema } from "./team-schemas.js";

type CompletionMessage = { role: "system" | "user" | "assistant"; content: string };

interface OpenAiError {
  error: { message: string; type: string; code: string; param: string | null };
}

const ERROR_TYPES: Record<number, { type: string; code?: string }> = {
  400: { type: "invalid_request_error" },
  401: { type: "invalid_request_error", code: "invalid_api_key" },
  403: { type: "permission_error" },
  404: { type: "invalid_request_error", code: "model_not_found" },
  409: { type: "invalid_request_error" },
  413: { type: "invalid_request_error" },
  429: { type: "rate_limit_error", code: "rate_limit_exceeded" },
};

/** The status and OpenAI-shaped body for anything thrown while serving a completion. */
function openAiErrorOf(err: unknown): {
  status: ContentfulStatusCode;
  body: OpenAiError;
  known?: DimsumError;
} {
  const known = toApiError(err);
  const aborted = err instanceof DimsumError && err.code === "aborted";
  const status: ContentfulStatusCode = known ? statusOf(known.code) : 500;
  const kind = ERROR_TYPES[status] ?? { type: "server_error" };
  // Unexpected errors show no internals (the server log has them).
  const message = known?.toLine() ?? internalError().message;
  const issue = known?.issues?.[0];
  const body: OpenAiError = {
    error: {
      message: issue ? `${message}: ${issue.path || "body"}: ${issue.message}` : message,
      type: kind.type,
      code: kind.code ?? known?.code ?? (aborted ? "aborted" : "internal"),
      param: issue?.path || null,
    },
  };
  return known ? { status, body, known } : { status, body };
}

const openAiErrorHandler: ErrorHandler<AppEnv> = (err, c) => {
  const { status, body, known } = openAiErrorOf(err);
  if (status >= 500 && body.error.code !== "aborted") {
    c.get("services").log.error(`${c.req.method} ${c.req.path} failed`, err);
  }
  if (known?.retryAfterSeconds !== undefined) c.header("Retry-After", String(known.retryAfterSeconds));
  return c.json(body, status);
};

function textOf(message: ChatMessageInput): string {
  const { content } = message;
  if (typeof content === "string") return content;
  if (!content) return "";
  return content
    .map((part) => (part.type === "text" && typeof part.text === "string" ? part.text : ""))
    .join("");
}

/**
 * OpenAI messages → the facade's conversation; tool turns are refused (the agent runs its own tools),
 * and so is a message without text (missing, null, empty or blank content, or parts without text):
 * the agent never runs on an empty prompt.
 */
function toConversation(messages: ChatCompletionRequest["messages"]): CompletionMessage[] {
  if (messages.length === 0) {
    throw new DimsumError("invalid", "the conversation is empty; send at least one user message", {
      issues: [{ path: "messages", message: "send at least one message" }],
    });
  }
  return messages.map((message, index) => {
    if (message.role === "tool" || message.role === "function") {
      throw new DimsumError("invalid", "tool messages are not supported: the agent runs its own tools", {
        issues: [{ path: `messages.${index}.role`, message: `"${message.role}" is not accepted` }],
      });
    }
    if (Array.isArray(message.content) && message.content.some((p) => p.type !== "text")) {
      throw new DimsumError("invalid", "only text content is supported", {
        issues: [{ path: `messages.${index}.content`, message: "use text parts only" }],
      });
    }
    const role = message.role === "developer" ? "system" : message.role;
    const content = textOf(message);
    if (content.trim() === "") {
      const what =
        message.content === undefined || message.content === null ? "has no content" : "has empty content";
      throw new DimsumError(
        "invalid",
        `message ${index} (${message.role}) ${what}; every message needs text`,
        {
          issues: [{ path: `messages.${index}.content`, message: "send non-empty text" }],
        },
      );
    }
    return { role, content };
  });
}

function usageOf(usage: Usage | undefined) {
  return {
    prompt_tokens: usage?.inputTokens ?? 0,
    completion_tokens: usage?.outputTokens ?? 0,
    total_tokens: usage?.totalTokens ?? 0,
  };
}

const encoder = new TextEncoder();

/** One completion being served: who asks which agent what, and how to stop it. */
interface Completion {
  team: Team;
  actor: Actor;
  agentId: string;
  conversation: CompletionMessage[];
  id: string;
  created: number;
  abort: AbortController;
  includeUsage: boolean;
  /** `response_format`: the answer is JSON valid against this schema, sent whole once validated. */
  output?: OutputSpec;
  log: ServerLog;
  /** Called once the run has settled (success, failure or disconnect). */
  onSettled: () => void;
}

/**
 * The SSE body: a role chunk, one chunk per text delta, a stop chunk, the usage chunk when asked for,
 * then `[DONE]`. A failure after the first byte is sent as an error chunk (OpenAI clients read those).
 */
function completionStream(job: Completion): ReadableStream<Uint8Array> {
  const chunk = (delta: Record<string, string>, finishReason: string | null) => ({
    id: job.id,
    object: "chat.completion.chunk",
    created: job.created,
    model: job.agentId,
    choices: [{ index: 0, delta, finish_reason: finishReason, logprobs: null }],
    ...(job.includeUsage ? { usage: null } : {}),
  });
  let open = true;
  return new ReadableStream<Uint8Array>({
    start(out) {
      const send = (data: unknown) => {
        if (!open) return;
        out.enqueue(encoder.encode(`data: ${typeof data === "string" ? data : JSON.stringify(data)}\n\n`));
      };
      send(chunk({ role: "assistant", content: "" }, null));
      job.team
        .complete(job.actor, job.agentId, job.conversation, {
          signal: job.abort.signal,
          // A structured answer is sent once validated: an invalid first try is never streamed.
          ...(job.output
            ? { output: job.output }
            : { onDelta: (text: string) => send(chunk({ content: text }, null)) }),
        })
        .then((result) => {
          if (job.output) send(chunk({ content: result.text }, null));
          send(chunk({}, "stop"));
          if (!job.includeUsage) return;
          const { id, created, agentId } = job;
          send({
            id,
            object: "chat.completion.chunk",
            created,
            model: agentId,
            choices: [],
            usage: usageOf(result.usage),
          });
        })
        .catch((err: unknown) => {
          if (job.abort.signal.aborted) return;
          const { status, body } = openAiErrorOf(err);
          if (status >= 500) job.log.error("a streamed completion failed", err);
          send(body);
        })
        .finally(() => {
          job.onSettled();
          if (!open) return;
          send("[DONE]");
          open = false;
          out.close();
        });
    },
    cancel() {
      open = false;
      job.abort.abort(new Error("the client disconnected"));
    },
  });
}

/** The non-streaming answer. */
async function completionObject(job: Completion) {
  try {
    const result = await job.team.complete(job.actor, job.agentId, job.conversation, {
      signal: job.abort.signal,
      ...(job.output ? { output: job.output } : {}),
    });
    return {
      id: job.id,
      object: "chat.completion",
      created: job.created,
      model: job.agentId,
      choices: [
        {
          index: 0,
          message: { role: "assistant", content: result.text, refusal: null },
          finish_reason: "stop",
          logprobs: null,
        },
      ],
      usage: usageOf(result.usage),
    };
  } finally {
    job.onSettled();
  }
}

/**
 * `response_format` → the answer's schema: `json_schema` as given, `json_object` any JSON object,
 * `text` (or none) free text. A schema that does not compile is the caller's mistake (400).
 */
function outputOf(format: ChatCompletionRequest["response_format"]): { output?: OutputSpec } {
  if (!format || format.type === "text") return {};
  const spec: OutputSpec =
    format.type === "json_object"
      ? { schema: { type: "object" } }
      : { schema: format.json_schema.schema ?? { type: "object" }, name: format.json_schema.name };
  try {
    new OutputChecker(spec);
  } catch (err) {
    throw new DimsumError("invalid", err instanceof Error ? err.message : String(err), {
      issues: [
        {
          path: "response_format",
          message: "send a valid JSON Schema and a name of letters, digits, _ or -",
        },
      ],
    });
  }
  return { output: spec };
}

/** The OpenAI-compatible routes, mounted at `/v1`. */
export function openAiRoutes(team: Team): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  app.onError(openAiErrorHandler);
  app.use("*", apiTokenAuth);

  app.get("/models", async (c) => {
    const agents = await team.listAgents(actorOf(c));
    return c.json({
      object: "list",
      data: agents.map((agent) => ({
        id: agent.id,
        object: "model",
        created: Math.floor(agent.createdAt / 1000),
        owned_by: "dimsum",
        name: agent.name,
      })),
    });
  });

  app.post("/chat/completions", messageRateLimit, jsonBody(chatCompletionSchema), async (c) => {
    const body = c.req.valid("json");
    const actor = actorOf(c);
    // Checked before any byte is sent, so these still get a proper status.
    const agent = await team.getAgent(actor, body.model).catch((err: unknown) => {
      if (err instanceof DimsumError && err.code === "not_found") {
        throw notFound(`The model "${body.model}" does not exist: it must be an agent id.`);
      }
      throw err;
    });
    if (actor.role === "guest") {
      throw forbidden("guests cannot talk to agents through the API");
    }
    const conversation = toConversation(body.messages);
    if (conversation.at(-1)?.role !== "user") {
      throw new DimsumError("invalid", "the conversation must end with a user message", {
        issues: [{ path: `messages.${body.messages.length - 1}.role`, message: 'expected "user"' }],
      });
    }
    // The run stops when the client goes away (the request's signal aborts on a closed socket).
    const abort = new AbortController();
    const requestSignal = c.req.raw.signal;
    const onGone = () => abort.abort(new Error("the client disconnected"));
    if (requestSignal.aborted) onGone();
    else requestSignal.addEventListener("abort", onGone, { once: true });
    const job: Completion = {
      team,
      actor,
      agentId: agent.id,
      conversation,
      id: `chatcmpl-${randomUUID().replaceAll("-", "")}`,
      created: Math.floor(Date.now() / 1000),
      abort,
      includeUsage: body.stream_options?.include_usage === true,
      ...outputOf(body.response_format),
      log: c.get("services").log,
      onSettled: () => requestSignal.removeEventListener("abort", onGone),
    };
    if (!body.stream) return c.json(await completionObject(job));
    return c.body(completionStream(job), 200, {
      "content-type": "text/event-stream; charset=utf-8",
      "cache-control": "no-cache",
      "x-accel-buffering": "no",
    });
  });

  return app;
}
