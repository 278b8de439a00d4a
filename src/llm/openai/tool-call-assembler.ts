/** Assembles streamed `tool_calls` deltas into complete calls, keyed by the delta's `index`. */
import { randomUUID } from "node:crypto";
import type { ToolCall } from "../types.js";
import { asNumber, asRecord, asString, type JsonRecord } from "./json.js";

interface PendingCall {
  id: string;
  name: string;
  arguments: string;
  emitted: boolean;
}

export class ToolCallAssembler {
  private readonly calls = new Map<number, PendingCall>();
  private lastKey: number | undefined;

  /** Number of calls seen so far, emitted or not. */
  get count(): number {
    let n = 0;
    for (const call of this.calls.values()) if (isReal(call)) n++;
    return n;
  }

  /** Folds one element of `delta.tool_calls` into its call. */
  add(delta: JsonRecord): void {
    const id = asString(delta.id) ?? "";
    const fn = asRecord(delta.function);
    const name = asString(fn?.name) ?? "";
    const args = asString(fn?.arguments) ?? "";
    const key = this.keyFor(asNumber(delta.index), id);
    const call = this.calls.get(key);
    if (!call) {
      this.calls.set(key, { id, name, arguments: args, emitted: false });
    } else {
      // Later deltas may repeat the header with `name: ""` or drop the id; those must not overwrite.
      if (call.id === "" && id !== "") call.id = id;
      if (call.name === "" && name !== "") call.name = name;
      call.arguments += args;
    }
    this.lastKey = key;
  }

  /** Completes and returns the calls not returned before, in index order. */
  drain(): ToolCall[] {
    const out: ToolCall[] = [];
    for (const key of [...this.calls.keys()].sort((a, b) => a - b)) {
      const call = this.calls.get(key)!;
      if (call.emitted || !isReal(call)) continue;
      call.emitted = true;
      out.push({
        id: call.id === "" ? `call_${randomUUID().replaceAll("-", "").slice(0, 24)}` : call.id,
        name: call.name,
        // A call without arguments means "no arguments"; `{}` keeps it valid JSON for the validator.
        arguments: call.arguments.trim() === "" ? "{}" : call.arguments,
      });
    }
    return out;
  }

  // Non-streaming bodies (xAI) and some servers omit `index`: a new id opens a call, no id continues the last.
  private keyFor(index: number | undefined, id: string): number {
    if (index !== undefined) return index;
    if (id !== "") {
      for (const [key, call] of this.calls) if (call.id === id) return key;
      return this.calls.size === 0 ? 0 : Math.max(...this.calls.keys()) + 1;
    }
    return this.lastKey ?? 0;
  }
}

// A header-less fragment with neither a name nor arguments carries nothing to run.
function isReal(call: PendingCall): boolean {
  return call.name !== "" || call.arguments !== "";
}
