/**
 * OpenTelemetry GenAI export, loaded only when configured: without an OTLP endpoint nothing of the
 * OpenTelemetry SDK is imported (the CLI's cold start does not pay for it).
 */
import type { ObserveRun } from "../agent/run-observer.js";
import type { TelemetryConfig } from "../config/telemetry.js";

export interface Telemetry {
  /** Opens the spans of one run; hand it to the run (`observe`). */
  observe: ObserveRun;
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
