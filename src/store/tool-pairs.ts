/**
 * Every provider rejects a history where an assistant tool call is not followed by its result, or a
 * tool result answers no call. These checks find both.
 */
import type { Message, ToolCallPart } from "../llm/types.js";

export interface UnansweredCalls {
  /** Index of the assistant message that made the calls. */
  index: number;
  calls: ToolCallPart[];
}

export interface ToolPairIssues {
  unanswered: UnansweredCalls[];
  /** Indexes of tool results that answer no call of the assistant message before them. */
  orphans: number[];
}

/** Finds tool calls without results and results without calls; results must directly follow their call. */
export function findToolPairIssues(messages: readonly Message[]): ToolPairIssues {
  const issues: ToolPairIssues = { unanswered: [], orphans: [] };
  let open: UnansweredCalls | undefined;
  const close = () => {
    if (open && open.calls.length > 0) issues.unanswered.push(open);
    open = undefined;
  };
  messages.forEach((message, index) => {
    if (message.role === "tool") {
      const at = open?.calls.findIndex((c) => c.id === message.toolCallId) ?? -1;
      if (open && at >= 0) open.calls.splice(at, 1);
      else issues.orphans.push(index);
      return;
    }
    close();
    if (message.role === "assistant") {
      const calls = message.content.filter((p): p is ToolCallPart => p.type === "tool_call");
      if (calls.length > 0) open = { index, calls: [...calls] };
    }
  });
  close();
  return issues;
}

/** One line describing the first pairing problem, or undefined when the messages pair up. */
export function describeToolPairIssues(messages: readonly Message[]): string | undefined {
  const { unanswered, orphans } = findToolPairIssues(messages);
  const first = unanswered[0];
  if (first) {
    const ids = first.calls.map((c) => `${c.name} (${c.id})`).join(", ");
    return `the assistant message at position ${first.index} has tool calls without results: ${ids}`;
  }
  const orphan = orphans[0];
  if (orphan !== undefined) {
    const message = messages[orphan] as Extract<Message, { role: "tool" }>;
    return `the tool result at position ${orphan} (${message.toolCallId}) does not answer a call of the assistant message before it`;
  }
  return undefined;
}
