/**
 * The chat's answers to MCP servers' requests: elicitation as a prompt on the terminal (each field
 * validated and asked again until it fits; `/decline` and `/cancel` at any question), URL-mode
 * elicitation as a link the person opens, and sampling after the person approves it.
 */
import type {
  CreateMessageResult,
  ElicitParams,
  ElicitResult,
  McpClientHandlers,
  SamplingParams,
} from "../../mcp/client-handlers.js";
import { type FormValue, formFields, parseFieldInput } from "../../mcp/elicitation-form.js";

/** Asks one question; resolves to the answer, or undefined when input ended or the signal fired. */
export type Ask = (question: string, signal: AbortSignal) => Promise<string | undefined>;

export interface TerminalRequestOptions {
  ask: Ask;
  out: NodeJS.WritableStream;
  /** Runs an approved sampling request with the agent's model. */
  sample?: (params: SamplingParams, signal: AbortSignal) => Promise<CreateMessageResult>;
}

const DECLINE = "/decline";
const CANCEL = "/cancel";

export function terminalMcpHandlers(options: TerminalRequestOptions): Omit<McpClientHandlers, "roots"> {
  const handlers: Omit<McpClientHandlers, "roots"> = {
    elicit: (server, params, signal) => elicitOnTerminal(server, params, signal, options),
  };
  const { sample } = options;
  if (sample) {
    handlers.sample = async (server, params, signal) => {
      const last = params.messages.at(-1);
      const preview = last ? JSON.stringify(last.content).slice(0, 160) : "";
      options.out.write(
        `\nMCP server "${server}" asks to use your model (up to ${params.maxTokens} tokens): ${preview}\n`,
      );
      const answer = await options.ask("Allow? [y/N] ", signal);
      if (!/^y(es)?$/i.test(answer?.trim() ?? "")) throw new Error("the person refused the sampling request");
      return sample(params, signal);
    };
  }
  return handlers;
}

async function elicitOnTerminal(
  server: string,
  params: ElicitParams,
  signal: AbortSignal,
  { ask, out }: TerminalRequestOptions,
): Promise<ElicitResult> {
  out.write(`\nMCP server "${server}" asks: ${params.message}\n`);
  if (params.mode === "url") {
    out.write(`  open: ${params.url}\n`);
    const answer = await ask("Opened it and done? [y]es / [n]o (decline) / [c]ancel: ", signal);
    if (answer === undefined) return { action: "cancel" };
    if (/^y(es)?$/i.test(answer.trim())) return { action: "accept" };
    return /^c(ancel)?$/i.test(answer.trim()) ? { action: "cancel" } : { action: "decline" };
  }
  out.write(`  (empty keeps the default; ${DECLINE} to refuse, ${CANCEL} to stop)\n`);
  const content: Record<string, FormValue> = {};
  for (const field of formFields(params.requestedSchema)) {
    const hints = [
      field.options ? field.options.map((o, i) => `${i + 1}=${o.value}`).join(" ") : "",
      field.type === "boolean" ? "y/n" : "",
      field.default !== undefined ? `default ${String(field.default)}` : "",
      field.required ? "required" : "",
    ].filter(Boolean);
    const question = `${field.label}${field.description ? ` (${field.description})` : ""}${hints.length ? ` [${hints.join(", ")}]` : ""}: `;
    for (;;) {
      const answer = await ask(question, signal);
      if (answer === undefined || answer.trim() === CANCEL) return { action: "cancel" };
      if (answer.trim() === DECLINE) return { action: "decline" };
      const parsed = parseFieldInput(field, answer);
      if (parsed.ok) {
        if (parsed.value !== undefined) content[field.name] = parsed.value;
        break;
      }
      out.write(`  ${parsed.error}\n`);
    }
  }
  return { action: "accept", content };
}
