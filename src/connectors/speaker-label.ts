/**
 * Who speaks, in a chat bound to a group of several agents: the agent's emoji and name (or the
 * person a web message is from), rendered as each platform shows a title best.
 */
import type { OutboundMessage } from "./types.js";

type Speaker = NonNullable<OutboundMessage["speaker"]>;

/** Room kept in each part of a split answer for the label. */
export const SPEAKER_ROOM = 120;

/** `🧑‍💻 Coder`. */
export function speakerTitle(speaker: Speaker): string {
  return `${speaker.emoji ? `${speaker.emoji} ` : ""}${speaker.name}`.trim().slice(0, 80);
}

/** Markdown with the speaker as a heading (DingTalk, WeCom). */
export function speakerMarkdown(speaker: Speaker | undefined, text: string): string {
  return speaker ? `**${speakerTitle(speaker)}**\n\n${text}` : text;
}

/** Plain text with the speaker on its own first line, and the bold entity for it (Telegram). */
export function speakerPlain(
  speaker: Speaker | undefined,
  text: string,
): { text: string; entities?: Array<{ type: "bold"; offset: number; length: number }> } {
  if (!speaker) return { text };
  const title = speakerTitle(speaker);
  // Telegram counts offsets in UTF-16 code units, as JavaScript strings do.
  return { text: `${title}\n${text}`, entities: [{ type: "bold", offset: 0, length: title.length }] };
}

/** A Feishu card with the speaker in its header and the answer as Markdown. */
export function speakerCard(speaker: Speaker, text: string): Record<string, unknown> {
  return {
    config: { wide_screen_mode: true, update_multi: true },
    header: { template: "blue", title: { tag: "plain_text", content: speakerTitle(speaker) } },
    elements: [{ tag: "div", text: { tag: "lark_md", content: text } }],
  };
}
