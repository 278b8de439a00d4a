/**
 * Turns a run's events into its stored trace: everything except the token-by-token deltas, plus one
 * `model_call` record per model call with its latency and usage. Known secrets are scrubbed first.
 */
import type { RunEventInput, SessionRef, SessionStore } from "../store/types.js";
import type { AgentEvent } from "./events.js";

export class TraceRecorder {
  private buffer: RunEventInput[] = [];
  private turnStarted = 0;
  private firstTokenAt: number | undefined;
  private iteration = 0;
  private deltaChars = { text: 0, reasoning: 0 };

  constructor(
    private readonly store: SessionStore,
    private readonly ref: SessionRef,
    private readonly runId: string,
    private readonly secrets: string[],
  ) {}

  record(event: AgentEvent): void {
    const now = performance.now();
    switch (event.type) {
      case "text_delta":
      case "reasoning_delta":
        this.firstTokenAt ??= now;
        this.deltaChars[event.type === "text_delta" ? "text" : "reasoning"] += event.text.length;
        return;
      case "turn_start":
        this.turnStarted = now;
        this.firstTokenAt = undefined;
        this.iteration = event.iteration;
        this.deltaChars = { text: 0, reasoning: 0 };
        break;
      case "usage":
        this.push({
          type: "model_call",
          iteration: this.iteration,
          latencyMs: Math.round(now - this.turnStarted),
          firstTokenMs:
            this.firstTokenAt === undefined ? undefined : Math.round(this.firstTokenAt - this.turnStarted),
          textChars: this.deltaChars.text,
          reasoningChars: this.deltaChars.reasoning,
          usage: event.usage,
          ...(event.model !== undefined ? { model: event.model } : {}),
        });
        return;
      case "messages":
        // Messages are stored in full in the session; the trace keeps only their shape.
        this.push({ type: "messages", roles: event.messages.map((m) => m.role) });
        return;
      case "checkpoint":
        // Stored as the run's checkpoint; the trace need not repeat it.
        return;
      case "waiting":
        this.push({ type: "waiting", approvals: event.approvals.map((a) => a.callId) });
        return;
    }
    this.push({ ...event });
  }

  private push(event: RunEventInput & Record<string, unknown>): void {
    this.buffer.push(this.scrub(event));
  }

  /** Writes buffered events in one transaction. */
  async flush(): Promise<void> {
    const batch = this.take();
    if (batch.length > 0) await this.store.appendRunEvents(this.ref, this.runId, batch);
  }

  /** Hands over the buffered events, for the caller to write with the rest of a run's step. */
  take(): RunEventInput[] {
    const batch = this.buffer;
    this.buffer = [];
    return batch;
  }

  private scrub(event: RunEventInput): RunEventInput {
    if (this.secrets.length === 0) return event;
    let json = JSON.stringify(event);
    let changed = false;
    for (const secret of this.secrets) {
      if (json.includes(secret)) {
        json = json.split(secret).join("[redacted]");
        changed = true;
      }
    }
    return changed ? (JSON.parse(json) as RunEventInput) : event;
  }
}

/** Values worth scrubbing: API keys and tokens from the environment, 8+ characters long. */
export function secretsFrom(
  env: Readonly<Record<string, string | undefined>>,
  extra: Array<string | undefined> = [],
): string[] {
  const out = new Set<string>();
  for (const [key, value] of Object.entries(env)) {
    if (value && value.length >= 8 && /(_API_KEY|_TOKEN|_SECRET|PASSWORD)$/i.test(key)) out.add(value);
  }
  for (const value of extra) if (value && value.length >= 8) out.add(value);
  return [...out];
}
