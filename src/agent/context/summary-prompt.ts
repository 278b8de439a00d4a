/**
 * The request that asks the model to fold older messages into the session summary. The transcript is
 * rendered as plain text so any model can summarise it, whatever tools the original run had.
 */
import type { Context, Message, UserContentPart } from "../../llm/types.js";
import { truncateToolOutput } from "./truncate.js";

export interface SummaryPromptOptions {
  /** Each tool result is cut to this many characters in the transcript. */
  maxToolResultChars?: number;
  /** Each tool call's arguments are cut to this many characters. */
  maxArgumentChars?: number;
}

export const SUMMARY_SYSTEM_PROMPT = `You maintain the running summary of a conversation between a user and an AI agent that uses tools.
Older messages are being removed from the agent's context; your summary is all the agent will remember of them.

Write ONE updated summary that folds the previous summary (if any) together with the new transcript. Keep:
- facts learned and results of tool calls that still matter;
- decisions made, and why;
- the user's goals, constraints and preferences;
- open tasks, unfinished work and next steps;
- exact file paths, commands, identifiers, URLs, numbers and names;
- errors met and how they were resolved.
Drop greetings, repetition and tool output that no longer matters. When the transcript contradicts the
previous summary, the transcript wins. Be dense: short sections with bullet points. Write in the
language the user writes in. Output only the summary: do not answer the user or continue the conversation.`;

/** Builds the summarisation request from the previous summary and the messages being compacted away. */
export function buildSummaryPrompt(
  previousSummary: string | undefined,
  toSummarize: readonly Message[],
  options: SummaryPromptOptions = {},
): Context {
  const limits = { tool: options.maxToolResultChars ?? 2000, args: options.maxArgumentChars ?? 2000 };
  const sections: string[] = [];
  if (previousSummary?.trim()) {
    sections.push(`<previous_summary>\n${previousSummary.trim()}\n</previous_summary>`);
  } else {
    sections.push("There is no previous summary yet.");
  }
  sections.push(`<transcript>\n${renderTranscript(toSummarize, limits)}\n</transcript>`);
  sections.push("Write the updated summary now.");
  return { system: SUMMARY_SYSTEM_PROMPT, messages: [{ role: "user", content: sections.join("\n\n") }] };
}

/** Renders messages as labelled plain text; reasoning is omitted, tool output shortened. */
export function renderTranscript(
  messages: readonly Message[],
  limits: { tool: number; args: number },
): string {
  const blocks: string[] = [];
  for (const message of messages) {
    switch (message.role) {
      case "system":
        blocks.push(`System: ${message.content}`);
        break;
      case "user":
        blocks.push(`User: ${partsText(message.content)}`);
        break;
      case "assistant":
        for (const part of message.content) {
          if (part.type === "text" && part.text.trim()) blocks.push(`Assistant: ${part.text}`);
          else if (part.type === "tool_call") {
            blocks.push(
              `Assistant called: ${part.name}(${truncateToolOutput(part.arguments, limits.args).text})`,
            );
          }
        }
        break;
      case "tool": {
        const label = message.isError
          ? `Tool error (${message.toolName})`
          : `Tool result (${message.toolName})`;
        blocks.push(`${label}: ${truncateToolOutput(partsText(message.content), limits.tool).text}`);
        break;
      }
    }
  }
  return blocks.join("\n\n");
}

function partsText(content: string | UserContentPart[]): string {
  if (typeof content === "string") return content;
  return content.map(partText).join("\n");
}

/** Attachments are named, not inlined: the summary says what was shown without its bytes. */
function partText(part: UserContentPart): string {
  if (part.type === "text") return part.text;
  if (part.type === "image") return part.name ? `[image ${part.name}]` : "[image]";
  return `[file ${part.name}]`;
}
