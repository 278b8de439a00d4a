/**
 * Requests for input (MCP elicitation) and for approval of sampling during team runs, put to the
 * person the run acts for: each request goes out as a team event only to that person, waits for
 * their answer through the HTTP route, and ends as cancelled when nobody answers in time or the
 * run stops.
 */
import { randomUUID } from "node:crypto";
import { invalid, notFound } from "../errors.js";
import { formatMs } from "../mcp/connection-errors.js";
import { type RequestedSchema, validateForm } from "../mcp/elicitation-form.js";
import type { InputAnswer, InputRequest } from "../tools/types.js";
import type { Actor, ElicitationView, SamplingView, TeamEvent } from "./types.js";

/** How long a person has to answer (default five minutes). */
export const DEFAULT_ELICITATION_TIMEOUT_MS = 300_000;

export interface ElicitationScope {
  channelId: string;
  runId: string;
  /** The person the run acts for: the only one who sees and answers the request. */
  userId: string;
  /** The run whose answer shows the request, when not `runId` (call_agent: the outermost run). */
  shownIn?: string;
}

interface Pending {
  view: ElicitationView;
  finish: (answer: InputAnswer) => void;
}

export interface ElicitationOptions {
  emit: (event: TeamEvent) => void;
  timeoutMs?: number;
  now?: () => number;
}

/** The open requests for input of every run. */
export class Elicitations {
  readonly #pending = new Map<string, Pending>();
  readonly #options: ElicitationOptions;

  constructor(options: ElicitationOptions) {
    this.#options = options;
  }

  /** Puts `request` to the scope's person; resolves with their answer, or cancel on timeout or stop. */
  ask(
    scope: ElicitationScope,
    server: string,
    request: InputRequest,
    signal: AbortSignal,
  ): Promise<InputAnswer> {
    return this.#put((id, expiresAt) => viewOf(id, scope, server, request, expiresAt), signal);
  }

  /** Asks the scope's person to approve a sampling request: accept, decline, or cancel (timeout, stop). */
  askSampling(
    scope: ElicitationScope,
    server: string,
    sampling: SamplingView,
    signal: AbortSignal,
  ): Promise<InputAnswer> {
    return this.#put(
      (id, expiresAt) => ({
        id,
        ...scope,
        server,
        message: `${server} asks to use the agent's model (${sampling.model}).`,
        mode: "sampling",
        sampling,
        expiresAt,
      }),
      signal,
    );
  }

  #put(make: (id: string, expiresAt: number) => ElicitationView, signal: AbortSignal): Promise<InputAnswer> {
    const timeoutMs = this.#options.timeoutMs ?? DEFAULT_ELICITATION_TIMEOUT_MS;
    const view = make(randomUUID(), (this.#options.now ?? Date.now)() + timeoutMs);
    const { emit } = this.#options;
    return new Promise<InputAnswer>((resolve) => {
      const finish = (answer: InputAnswer) => {
        if (!this.#pending.delete(view.id)) return;
        clearTimeout(timer);
        signal.removeEventListener("abort", onAbort);
        emit({ ...closedEvent(view), action: answer.action });
        resolve(answer);
      };
      const onAbort = () => finish({ action: "cancel", reason: "the run was stopped" });
      const timer = setTimeout(
        () => finish({ action: "cancel", reason: `no answer within ${formatMs(timeoutMs)}` }),
        timeoutMs,
      );
      this.#pending.set(view.id, { view, finish });
      if (signal.aborted) {
        onAbort();
        return;
      }
      signal.addEventListener("abort", onAbort, { once: true });
      emit({
        type: "elicitation",
        channelId: view.channelId,
        runId: view.runId,
        userId: view.userId,
        request: view,
      });
    });
  }

  /** Whether this process holds the open request (several instances: another may). */
  has(runId: string, id: string): boolean {
    return this.#pending.get(id)?.view.runId === runId;
  }

  /** The person's answer; a request that is not theirs (or is gone) is a 404 naming nothing. */
  answer(actor: Actor, runId: string, id: string, answer: InputAnswer): ElicitationView {
    const pending = this.#pending.get(id);
    if (!pending || pending.view.runId !== runId || pending.view.userId !== actor.userId) {
      throw notFound(`No open request for input with id "${id}" in run "${runId}".`);
    }
    const { view } = pending;
    if (answer.action === "accept" && view.mode === "form" && view.requestedSchema) {
      const content = answer.content ?? {};
      const problems = validateForm(view.requestedSchema, content);
      const names = Object.keys(problems);
      if (names.length > 0) {
        throw invalid(
          `The answer does not fit the form: ${names.map((n) => `${n}: ${problems[n]}`).join("; ")}.`,
          "fix the fields named and send again",
        );
      }
      pending.finish({ action: "accept", content: clean(view.requestedSchema, content) });
    } else if (answer.action === "accept") {
      pending.finish({ action: "accept" });
    } else {
      pending.finish({ action: answer.action, reason: `the person chose ${answer.action}` });
    }
    return view;
  }

  /** The open requests of `actor` in one channel (a page opened after they were asked). */
  openFor(actor: Actor, channelId: string): ElicitationView[] {
    return [...this.#pending.values()]
      .map((p) => p.view)
      .filter((v) => v.userId === actor.userId && v.channelId === channelId);
  }
}

function viewOf(
  id: string,
  scope: ElicitationScope,
  server: string,
  request: InputRequest,
  expiresAt: number,
): ElicitationView {
  const view: ElicitationView = {
    id,
    ...scope,
    server,
    message: request.message,
    mode: request.mode === "url" ? "url" : "form",
    expiresAt,
  };
  if (typeof request.url === "string") view.url = request.url;
  if (isRecord(request.requestedSchema)) view.requestedSchema = request.requestedSchema as RequestedSchema;
  return view;
}

function closedEvent(view: ElicitationView) {
  return {
    type: "elicitation_closed" as const,
    channelId: view.channelId,
    runId: view.runId,
    userId: view.userId,
    id: view.id,
  };
}

/** Only the schema's fields, numbers as numbers (a web form may send "3"). */
function clean(
  schema: RequestedSchema,
  content: Record<string, unknown>,
): NonNullable<InputAnswer["content"]> {
  const out: NonNullable<InputAnswer["content"]> = {};
  const properties = schema.properties as Record<string, { type?: string; default?: unknown }>;
  for (const [name, prop] of Object.entries(properties)) {
    const given = content[name];
    const value = given === undefined || given === null || given === "" ? prop.default : given;
    if (value === undefined || value === null || value === "") continue;
    if ((prop.type === "number" || prop.type === "integer") && typeof value === "string")
      out[name] = Number(value);
    else if (prop.type === "boolean" && typeof value === "string") out[name] = value === "true";
    else if (Array.isArray(value)) out[name] = value.map(String);
    else if (typeof value === "string" || typeof value === "number" || typeof value === "boolean")
      out[name] = value;
  }
  return out;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
