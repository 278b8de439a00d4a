/**
 * Human output for a run: the answer streams to stdout; reasoning (dimmed), tool activity, retries and
 * usage go to stderr so that `dimsum run ... > answer.txt` captures only the answer.
 */

import type { AgentEvent } from "../../agent/events.js";
import { plural } from "./plural.js";
import { oneLine, type Painter } from "./style.js";

export interface HumanRendererOptions {
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream;
  paintOut: Painter;
  paintErr: Painter;
  showReasoning?: boolean;
  /**
   * The run answers with JSON held to a schema: the streamed text (which may be an invalid first try)
   * is not shown; the validated value is printed alone on stdout at the end.
   */
  structured?: boolean;
}

/** Returns a function that renders each event as it arrives. */
export function createHumanRenderer(options: HumanRendererOptions): (event: AgentEvent) => void {
  const { stdout, stderr, paintErr } = options;
  let answerOpen = false;
  let reasoningOpen = false;

  const closeReasoning = () => {
    if (reasoningOpen) {
      stderr.write("\n");
      reasoningOpen = false;
    }
  };
  const closeAnswer = () => {
    if (answerOpen) {
      stdout.write("\n");
      answerOpen = false;
    }
  };

  return (event) => {
    switch (event.type) {
      case "reasoning_delta":
        if (options.showReasoning === false) return;
        reasoningOpen = true;
        stderr.write(paintErr("dim", event.text));
        return;
      case "text_delta":
        if (options.structured) return;
        closeReasoning();
        answerOpen = true;
        options.stdout.write(event.text);
        return;
      case "tool_call":
        closeReasoning();
        closeAnswer();
        stderr.write(
          paintErr("cyan", `→ ${event.name}`) +
            paintErr("dim", ` ${oneLine(JSON.stringify(event.args), 80)}\n`),
        );
        return;
      case "tool_result": {
        const mark = event.ok ? paintErr("green", "✓") : paintErr("red", "✗");
        const cut = event.truncatedChars ? paintErr("yellow", ` (${event.truncatedChars} chars cut)`) : "";
        stderr.write(
          `${mark} ${event.name} ${paintErr("dim", `${Math.round(event.durationMs)}ms`)} ${oneLine(event.output, 100)}${cut}\n`,
        );
        return;
      }
      case "context": {
        const parts: string[] = [];
        if (event.skills.length > 0) parts.push(`skills: ${event.skills.join(", ")}`);
        if (event.memories.length > 0)
          parts.push(`memories: ${event.memories.length}${event.memoryMode ? ` (${event.memoryMode})` : ""}`);
        if (parts.length > 0) stderr.write(paintErr("dim", `[${parts.join(" · ")}]\n`));
        return;
      }
      case "compaction":
        closeReasoning();
        closeAnswer();
        stderr.write(
          paintErr(
            "dim",
            `[context ${event.method}: ${event.messagesRemoved} messages, ~${event.tokensBefore} → ~${event.tokensAfter} tokens${event.note ? `; ${event.note}` : ""}]\n`,
          ),
        );
        return;
      case "retry":
        stderr.write(
          paintErr("yellow", `… ${event.reason}; retry ${event.attempt} in ${Math.round(event.delayMs)}ms\n`),
        );
        return;
      case "model_fallback":
        stderr.write(
          paintErr(
            "yellow",
            `… ${event.skipped ? `skipping ${event.from}` : `${event.from} failed`} (${event.reason}); answering with ${event.to}\n`,
          ),
        );
        return;
      case "done": {
        closeReasoning();
        closeAnswer();
        if (options.structured && event.output !== undefined)
          stdout.write(`${JSON.stringify(event.output, null, 2)}\n`);
        const cap = event.capReached ? paintErr("yellow", " (iteration cap reached)") : "";
        const cost = event.costUsd !== undefined ? ` · $${event.costUsd.toFixed(4)}` : "";
        const u = event.usage;
        stderr.write(
          paintErr(
            "dim",
            `[${plural(event.iterations, "model call")} · ${u.inputTokens} in / ${u.outputTokens} out tokens${cost}]`,
          ) +
            cap +
            "\n",
        );
        return;
      }
      case "error":
        closeReasoning();
        closeAnswer();
        stderr.write(paintErr("red", `error: ${event.message}${event.hint ? ` (${event.hint})` : ""}\n`));
        return;
      default:
        return;
    }
  };
}
