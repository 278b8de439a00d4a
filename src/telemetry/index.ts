/**
 * OpenTelemetry GenAI export, loaded only when configured: without an OTLP endpoint nothing of the
 * OpenTelemetry SDK is imported (the CLI's cold start does not pay for it).
 */
import type { ObserveRun } from "../agent/run-observer.js";
import type { TelemetryConfig } from "../config/telemetry.js";

/** A server instance's queue of answers, read each time metrics are collected (see RunQueueStats). */
export interface RunQueueReading {
  live: number;
  queued: number;
  oldestWaitMs: number;
  waitP99Ms: number;
  load: { loopDelayMs: number; heapShare: number };
}

export interface Telemetry {
  /** Opens the spans of one run; hand it to the run (`observe`). */
  observe: ObserveRun;
  /**
   * Exports the run queue as gauges (with a metrics endpoint): `dimsum.runs.live`, `dimsum.runs.queued`,
   * `dimsum.runs.queue.oldest_wait` and `dimsum.runs.queue.wait_p99` (s), `dimsum.event_loop.delay` (s)
   * and `dimsum.heap.share`.
   */
  gaugeRunQueue(read: () => RunQueueReading): void;
  /** Sends what is buffered and stops; await it before the process exits. */
  shutdown(): Promise<void>;
}

/** Starts export when `config` is set (see `telemetryConfigFromEnv`); undefined otherwise. */
export async function startTelemetry(
  config: TelemetryConfig | undefined,
  warn: (message: string) => void,
): Promise<Telemetry | undefined> {
  if (!config) return undefined;
  const { startOtelExport } = await import("./otel-export.js");
  return startOtelExport(config, warn);
}
