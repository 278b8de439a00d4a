/** Terminal styling that switches itself off for pipes and NO_COLOR. */
import { styleText } from "node:util";

type Style = Parameters<typeof styleText>[0];

export interface Painter {
  (style: Style, text: string): string;
  readonly enabled: boolean;
}

/** A painter for one output stream. */
export function painterFor(
  stream: NodeJS.WriteStream,
  env: Readonly<Record<string, string | undefined>>,
): Painter {
  const enabled = Boolean(stream.isTTY) && !env.NO_COLOR && env.TERM !== "dumb";
  const paint = ((style: Style, text: string) => (enabled ? styleText(style, text) : text)) as Painter;
  Object.defineProperty(paint, "enabled", { value: enabled });
  return paint;
}

/** Shortens text to one line of at most `max` characters. */
export function oneLine(text: string, max = 100): string {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}
