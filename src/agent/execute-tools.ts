/**
 * Phase: validate and execute one turn's tool calls. Concurrency-safe calls run together; a call that
 * is not safe runs alone. Events are yielded as calls start and finish (execution order); the result
 * messages come back in call order, which every provider requires.
 */
import type { ImagePart, TextPart, ToolCall, ToolResultMessage } from "../llm/types.js";
import type { ToolRegistry } from "../tools/registry.js";
import type { Tool, ToolContext, ToolResult } from "../tools/types.js";
import { AsyncQueue } from "./async-queue.js";
import { truncateToolOutput } from "./context/truncate.js";
import type { AgentEvent } from "./events.js";
import type { RepeatedCallGuard } from "./stop-conditions.js";

export interface ExecuteToolsOptions {
  runId: string;
  registry: ToolRegistry;
  context: ToolContext;
  guard: RepeatedCallGuard;
  /** Tool output beyond this many characters is cut, with a note saying how much. */
  maxResultChars: number;
}

type Planned =
  | { call: ToolCall; tool: Tool; args: unknown; safe: boolean }
  | { call: ToolCall; error: string; safe: true };

/** Executes the calls; yields tool_call/tool_result events, returns result messages in call order. */
export async function* executeTools(
  calls: ToolCall[],
  options: ExecuteToolsOptions,
): AsyncGenerator<AgentEvent, ToolResultMessage[]> {
  const planned = calls.map((call) => plan(call, options));
  const results: ToolResultMessage[] = new Array(calls.length);
  for (const batch of batches(planned)) {
    const queue = new AsyncQueue<AgentEvent>();
    let pending = batch.length;
    for (const { item, index } of batch) {
      queue.push({
        type: "tool_call",
        runId: options.runId,
        id: item.call.id,
        name: item.call.name,
        args: argsOf(item),
      });
      runOne(item, options)
        .then(({ message, event }) => {
          results[index] = message;
          queue.push(event);
        })
        .finally(() => {
          pending -= 1;
          if (pending === 0) queue.close();
        });
    }
    yield* queue;
  }
  return results;
}

function plan(call: ToolCall, options: ExecuteToolsOptions): Planned {
  const repeated = options.guard.check(call);
  if (repeated) return { call, error: repeated, safe: true };
  const prepared = options.registry.prepareCall(call.name, call.arguments);
  if (!prepared.ok) return { call, error: prepared.error, safe: true };
  return { call, tool: prepared.tool, args: prepared.args, safe: prepared.tool.concurrencySafe !== false };
}

/** Groups calls: runs of concurrency-safe calls together, each unsafe call on its own. */
function batches(planned: Planned[]): Array<Array<{ item: Planned; index: number }>> {
  const out: Array<Array<{ item: Planned; index: number }>> = [];
  let current: Array<{ item: Planned; index: number }> = [];
  planned.forEach((item, index) => {
    if (item.safe) {
      current.push({ item, index });
      return;
    }
    if (current.length > 0) out.push(current);
    out.push([{ item, index }]);
    current = [];
  });
  if (current.length > 0) out.push(current);
  return out;
}

function argsOf(item: Planned): unknown {
  if ("tool" in item) return item.args;
  try {
    return JSON.parse(item.call.arguments || "{}");
  } catch {
    return item.call.arguments;
  }
}

async function runOne(
  item: Planned,
  options: ExecuteToolsOptions,
): Promise<{ message: ToolResultMessage; event: AgentEvent }> {
  const started = performance.now();
  let result: ToolResult;
  if ("tool" in item) {
    try {
      result = await options.registry.execute({ tool: item.tool, args: item.args }, options.context);
    } catch (err) {
      // The registry turns tool failures into results; this only catches bugs, which must not kill the run.
      result = {
        content: `internal error running ${item.call.name}: ${(err as Error).message}`,
        isError: true,
      };
    }
  } else {
    result = { content: item.error, isError: true };
  }
  const { content, cutChars } = limitContent(result.content, options.maxResultChars);
  const message: ToolResultMessage = {
    role: "tool",
    toolCallId: item.call.id,
    toolName: item.call.name,
    content,
  };
  if (result.isError) message.isError = true;
  const event: AgentEvent = {
    type: "tool_result",
    runId: options.runId,
    id: item.call.id,
    name: item.call.name,
    ok: !result.isError,
    output: renderContent(content),
    durationMs: Math.round((performance.now() - started) * 100) / 100,
  };
  if (cutChars > 0) event.truncatedChars = cutChars;
  return { message, event };
}

/** Applies the size budget to the text of a result; images pass through. */
function limitContent(
  content: ToolResult["content"],
  maxChars: number,
): { content: ToolResult["content"]; cutChars: number } {
  if (typeof content === "string") {
    const { text, cutChars } = truncateToolOutput(content, maxChars);
    return { content: text, cutChars };
  }
  let cut = 0;
  const parts = content.map((part): TextPart | ImagePart => {
    if (part.type !== "text") return part;
    const { text, cutChars } = truncateToolOutput(part.text, maxChars);
    cut += cutChars;
    return { ...part, text };
  });
  return { content: parts, cutChars: cut };
}

/** Tool output as one string, for events and terminals. */
export function renderContent(content: ToolResult["content"]): string {
  if (typeof content === "string") return content;
  return content
    .map((part) =>
      part.type === "text"
        ? part.text
        : `[image ${part.mimeType}, ${Math.round((part.data.length * 3) / 4)} bytes]`,
    )
    .join("\n");
}
