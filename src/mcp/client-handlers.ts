/**
 * What Dimsum answers when a server asks the client something: elicitation (form or URL), sampling
 * (a completion from the agent's own model) and roots (the workspace). Front ends supply the
 * interactive parts; without them (headless runs) elicitation is declined and sampling refused,
 * and the reason is kept so the tool result (and so the trace) says what happened.
 */

import type {
  Client,
  CreateMessageRequest,
  CreateMessageResult,
  ElicitRequest,
  ElicitResult,
} from "@modelcontextprotocol/client";
import { ProtocolError, ProtocolErrorCode } from "@modelcontextprotocol/client";
import type { ElicitPerson, SamplePerson, SamplingRequest } from "../tools/types.js";

export type ElicitParams = ElicitRequest["params"];
export type SamplingParams = CreateMessageRequest["params"];
export type { CreateMessageResult, ElicitResult };

export interface McpRoot {
  uri: string;
  name?: string;
}

/** The front end's side of the client features; every member is optional. */
export interface McpClientHandlers {
  /** Asks the person; resolves to accept (with content), decline or cancel. Absent: declined. */
  elicit?: (server: string, params: ElicitParams, signal: AbortSignal) => Promise<ElicitResult>;
  /** Runs a completion with the agent's model after the person approves. Absent: refused. */
  sample?: (server: string, params: SamplingParams, signal: AbortSignal) => Promise<CreateMessageResult>;
  /** The roots announced to servers (the workspace). */
  roots?: McpRoot[];
}

/** A thing the client did on its own during a call, reported with the call's result. */
export type NoteSink = (note: string) => void;

export const HEADLESS_REASON = "this run has no one to ask (headless)";

/** The capabilities matching `handlers`: elicitation and sampling are always declared, so servers get an answer. */
export function clientCapabilities(handlers: McpClientHandlers) {
  return {
    elicitation: { form: { applyDefaults: true }, url: {} },
    sampling: {},
    ...(handlers.roots ? { roots: { listChanged: false } } : {}),
  };
}

/**
 * Who answers a request for input arriving now: the person of the tool call in flight (a team run),
 * a reason to decline (e.g. calls of several runs in flight), or undefined for `handlers.elicit`.
 */
export type ElicitRoute = () => ElicitPerson | { declined: string } | undefined;

/** The same for a sampling request: the person of the call in flight, a refusal, or `handlers.sample`. */
export type SampleRoute = () => SamplePerson | { declined: string } | undefined;

/** Who answers requests arriving during calls (team runs); absent: the front end's handlers. */
export interface ClientRoutes {
  elicit?: ElicitRoute;
  sample?: SampleRoute;
}

/** MCP's code for a sampling request the person rejected. */
const USER_REJECTED = -1;

/** Installs the request handlers on `client` before it connects. */
export function installClientHandlers(
  client: Client,
  server: string,
  handlers: McpClientHandlers,
  note: NoteSink,
  routes: ClientRoutes = {},
): void {
  client.setRequestHandler("elicitation/create", async (request, ctx) => {
    const { params } = request;
    const routed = routes.elicit?.();
    if (routed && typeof routed === "object") {
      note(`declined the server's request for input ("${oneLine(params.message)}"): ${routed.declined}`);
      return { action: "decline" };
    }
    if (routed) {
      const answer = await routed(server, params, ctx.mcpReq.signal);
      note(
        `asked the person for input ("${oneLine(params.message)}"): ${answer.action}${answer.reason ? ` (${answer.reason})` : ""}`,
      );
      return answer.action === "accept" && answer.content
        ? { action: "accept", content: answer.content }
        : { action: answer.action };
    }
    if (!handlers.elicit) {
      note(`declined the server's request for input ("${oneLine(params.message)}"): ${HEADLESS_REASON}`);
      return { action: "decline" };
    }
    const result = await handlers.elicit(server, params, ctx.mcpReq.signal);
    note(`asked you for input ("${oneLine(params.message)}"): ${result.action}`);
    return result;
  });
  client.setRequestHandler("sampling/createMessage", async (request, ctx) => {
    const routed = routes.sample?.();
    if (routed && typeof routed === "object") {
      note(`refused the server's sampling request: ${routed.declined}`);
      throw new ProtocolError(ProtocolErrorCode.InvalidRequest, `Sampling refused: ${routed.declined}`);
    }
    if (routed) {
      let outcome: Awaited<ReturnType<SamplePerson>>;
      try {
        outcome = await routed(server, request.params as SamplingRequest, ctx.mcpReq.signal);
      } catch (err) {
        const reason = err instanceof Error ? err.message : String(err);
        note(`the server's sampling request failed: ${reason}`);
        throw new ProtocolError(ProtocolErrorCode.InternalError, `Sampling failed: ${reason}`);
      }
      if (!outcome.approved) {
        note(`refused the server's sampling request: ${outcome.reason}`);
        throw new ProtocolError(USER_REJECTED, `User rejected sampling request: ${outcome.reason}`);
      }
      note(
        `served the server's sampling request with the agent's model (${outcome.result.model}), as the person approved`,
      );
      const result: CreateMessageResult = { ...outcome.result };
      return result;
    }
    if (!handlers.sample) {
      note(`refused the server's sampling request: ${HEADLESS_REASON}`);
      throw new ProtocolError(ProtocolErrorCode.InvalidRequest, `Sampling refused: ${HEADLESS_REASON}`);
    }
    return handlers.sample(server, request.params, ctx.mcpReq.signal);
  });
  if (handlers.roots) {
    const roots = handlers.roots;
    client.setRequestHandler("roots/list", async () => ({ roots: roots.map((r) => ({ ...r })) }));
  }
}

function oneLine(text: string): string {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length > 120 ? `${flat.slice(0, 117)}...` : flat;
}
