/** Shows the last few turns of a reopened session. */

import { isTurnContext } from "../../agent/turn-context.js";
import type { Message } from "../../llm/types.js";
import type { StoredMessage } from "../../store/types.js";
import { oneLine, type Painter } from "../render/style.js";

function textOf(message: Message): string {
  if (typeof message.content === "string") return message.content;
  return message.content
    .map((p) => (p.type === "text" ? p.text : p.type === "tool_call" ? `[called ${p.name}]` : ""))
    .filter(Boolean)
    .join(" ");
}

/** Lines for the last `turns` user turns: the user's words and the assistant's final text. */
export function recentTurns(messages: StoredMessage[], turns: number, paint: Painter): string[] {
  const lines: string[] = [];
  let shown = 0;
  for (let i = messages.length - 1; i >= 0 && shown < turns; i--) {
    const m = messages[i]?.message;
    if (!m || isTurnContext(m)) continue;
    if (m.role === "user") {
      lines.unshift(paint("bold", `you› ${oneLine(textOf(m), 200)}`));
      shown++;
    } else if (m.role === "assistant") {
      const text = textOf(m);
      if (text) lines.unshift(`${paint("dim", "dimsum›")} ${oneLine(text, 200)}`);
    }
  }
  return lines;
}
