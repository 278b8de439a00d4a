/**
 * OpenTelemetry export settings from the standard `OTEL_*` variables, resolved once at the edge.
 * Undefined (nothing exported, nothing of OpenTelemetry loaded) unless an OTLP endpoint is set.
 */
import { DimsumError } from "../errors.js";
import type { EnvMap } from "./env.js";

export type OtlpProtocol = "http/protobuf" | "http/json";

export interface TelemetryConfig {
  /** Full URL spans are POSTed to (`…/v1/traces`). */
  tracesUrl: string;
  /** Full URL metrics are POSTed to (`…/v1/metrics`); absent when only a traces endpoint is set. */
  metricsUrl: string | undefined;
  protocol: OtlpProtocol;
  /** `OTEL_EXPORTER_OTLP_HEADERS` (e.g. an API key of the backend). */
  headers: Record<string, string>;
  /** Prompts, answers, tool arguments and results on spans (`OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true`). */
  captureContent: boolean;
  /** `OTEL_SERVICE_NAME`, default `dimsum`. */
  serviceName: string;
  /** How often metrics are sent, ms (`OTEL_METRIC_EXPORT_INTERVAL`, default 60000). */
  metricIntervalMs: number;
}

function joinPath(base: string, path: string): string {
  return `${base.replace(/\/+$/, "")}/${path}`;
}

function protocolOf(value: string | undefined, name: string): OtlpProtocol {
  const v = value?.trim() || "http/protobuf";
  if (v === "http/protobuf" || v === "http/json") return v;
  throw new DimsumError("config", `${name}=${v} is not supported`, {
    hint: "use http/protobuf or http/json (OTLP over HTTP)",
  });
}

/** `k1=v1,k2=v2` with URL-encoded values, as the OTLP exporter spec says. */
export function parseOtlpHeaders(value: string | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const pair of (value ?? "").split(",")) {
    const at = pair.indexOf("=");
    if (at <= 0) continue;
    const key = pair.slice(0, at).trim();
    const raw = pair.slice(at + 1).trim();
    try {
      out[key] = decodeURIComponent(raw);
    } catch {
      out[key] = raw;
    }
  }
  return out;
}

/** The export settings, or undefined when no OTLP endpoint is set (or `OTEL_SDK_DISABLED=true`). */
export function telemetryConfigFromEnv(env: EnvMap): TelemetryConfig | undefined {
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === "true") return undefined;
  const base = env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim() || undefined;
  const traces = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim() || undefined;
  if (!base && !traces) return undefined;
  const metrics = env.OTEL_EXPORTER_OTLP_METRICS_ENDPOINT?.trim() || undefined;
  const interval = Number(env.OTEL_METRIC_EXPORT_INTERVAL);
  return {
    tracesUrl: traces ?? joinPath(base as string, "v1/traces"),
    metricsUrl: metrics ?? (base ? joinPath(base, "v1/metrics") : undefined),
    protocol: protocolOf(
      env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL ?? env.OTEL_EXPORTER_OTLP_PROTOCOL,
      env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL
        ? "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"
        : "OTEL_EXPORTER_OTLP_PROTOCOL",
    ),
    headers: parseOtlpHeaders(env.OTEL_EXPORTER_OTLP_HEADERS),
    captureContent: env.OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT?.trim().toLowerCase() === "true",
    serviceName: env.OTEL_SERVICE_NAME?.trim() || "dimsum",
    metricIntervalMs: Number.isFinite(interval) && interval > 0 ? interval : 60_000,
  };
}
