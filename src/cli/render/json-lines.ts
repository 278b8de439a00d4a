/** `--json` output: one agent event per line, each with a `type`. */
import type { AgentEvent } from "../../agent/events.js";

/** Writes an event as one JSON line. */
export function writeJsonLine(
  out: NodeJS.WritableStream,
  event: AgentEvent | { type: "error"; code: string; message: string; hint?: string },
): void {
  out.write(`${JSON.stringify(event)}\n`);
}
