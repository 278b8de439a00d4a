/**
 * The OpenTelemetry SDK set up for GenAI export over OTLP/HTTP (protobuf or JSON): a tracer provider
 * with a batch processor, a meter provider with the two GenAI client histograms, and the run observer
 * that reads agent events into them. Only ever imported dynamically (see ./index.ts).
 */
import { OTLPMetricExporter as JsonMetricExporter } from "@opentelemetry/exporter-metrics-otlp-http";
import { OTLPMetricExporter as ProtoMetricExporter } from "@opentelemetry/exporter-metrics-otlp-proto";
import { OTLPTraceExporter as JsonTraceExporter } from "@opentelemetry/exporter-trace-otlp-http";
import { OTLPTraceExporter as ProtoTraceExporter } from "@opentelemetry/exporter-trace-otlp-proto";
import { resourceFromAttributes } from "@opentelemetry/resources";
import { MeterProvider, PeriodicExportingMetricReader } from "@opentelemetry/sdk-metrics";
import {
  BatchSpanProcessor,
  type ReadableSpan,
  type SpanExporter,
  TracerProvider,
} from "@opentelemetry/sdk-trace";
import type { ObserveRun } from "../agent/run-observer.js";
import type { TelemetryConfig } from "../config/telemetry.js";
import { GenAiRunSpans } from "./gen-ai-run-spans.js";
import type { RunQueueReading, Telemetry } from "./index.js";

/** The gauges of the run queue and the instance's load, each with how it is read from one reading. */
const RUN_QUEUE_GAUGES: readonly {
  name: string;
  unit: string;
  description: string;
  value: (q: RunQueueReading) => number;
}[] = [
  {
    name: "dimsum.runs.live",
    unit: "{run}",
    description: "Chat answers live on this instance (running or waiting on a model)",
    value: (q) => q.live,
  },
  {
    name: "dimsum.runs.queued",
    unit: "{run}",
    description: "Chat answers waiting to start on this instance",
    value: (q) => q.queued,
  },
  {
    name: "dimsum.runs.queue.oldest_wait",
    unit: "s",
    description: "How long the oldest queued answer has waited",
    value: (q) => q.oldestWaitMs / 1000,
  },
  {
    name: "dimsum.runs.queue.wait_p99",
    unit: "s",
    description: "99th percentile of the wait before starting, over the last answers started",
    value: (q) => q.waitP99Ms / 1000,
  },
  {
    name: "dimsum.event_loop.delay",
    unit: "s",
    description: "Median event-loop delay over the last quarter second",
    value: (q) => q.load.loopDelayMs / 1000,
  },
  {
    name: "dimsum.heap.share",
    unit: "1",
    description: "Heap used as a share of the V8 heap limit",
    value: (q) => q.load.heapShare,
  },
];

const SCOPE = "dimsum";
/** `ExportResultCode.SUCCESS` of @opentelemetry/core (not a direct dependency). */
const EXPORT_SUCCESS = 0;
/** Bucket boundaries the GenAI conventions advise for the two histograms. */
const TOKEN_BUCKETS = [
  1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864,
];
const DURATION_BUCKETS = [
  0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92,
];

/** Reports a failed export once per kind of failure, not on every batch. */
function reportingFailures(exporter: SpanExporter, warn: (message: string) => void): SpanExporter {
  let warned = false;
  return {
    export(spans: ReadableSpan[], done) {
      exporter.export(spans, (result) => {
        if (result.code !== EXPORT_SUCCESS && !warned) {
          warned = true;
          warn(`OpenTelemetry: spans could not be exported: ${result.error?.message ?? "unknown error"}`);
        }
        done(result);
      });
    },
    shutdown: () => exporter.shutdown(),
    ...(exporter.forceFlush ? { forceFlush: () => exporter.forceFlush?.() ?? Promise.resolve() } : {}),
  };
}

/** Starts export to the configured OTLP endpoints. */
export function startOtelExport(config: TelemetryConfig, warn: (message: string) => void): Telemetry {
  const resource = resourceFromAttributes({ "service.name": config.serviceName });
  const traceOptions = { url: config.tracesUrl, headers: config.headers };
  const spanExporter =
    config.protocol === "http/json"
      ? new JsonTraceExporter(traceOptions)
      : new ProtoTraceExporter(traceOptions);
  const tracerProvider = new TracerProvider({
    resource,
    spanProcessors: [
      new BatchSpanProcessor({ exporter: reportingFailures(spanExporter, warn), scheduledDelayMillis: 1000 }),
    ],
  });
  const meterProvider = config.metricsUrl
    ? new MeterProvider({
        resource,
        readers: [
          new PeriodicExportingMetricReader({
            exporter:
              config.protocol === "http/json"
                ? new JsonMetricExporter({ url: config.metricsUrl, headers: config.headers })
                : new ProtoMetricExporter({ url: config.metricsUrl, headers: config.headers }),
            exportIntervalMillis: config.metricIntervalMs,
          }),
        ],
      })
    : undefined;
  const meter = meterProvider?.getMeter(SCOPE);
  const noop = { record() {} };
  const instruments = {
    tracer: tracerProvider.getTracer(SCOPE),
    tokenUsage:
      meter?.createHistogram("gen_ai.client.token.usage", {
        unit: "{token}",
        description: "Number of input and output tokens used",
        advice: { explicitBucketBoundaries: TOKEN_BUCKETS },
      }) ?? noop,
    operationDuration:
      meter?.createHistogram("gen_ai.client.operation.duration", {
        unit: "s",
        description: "GenAI operation duration",
        advice: { explicitBucketBoundaries: DURATION_BUCKETS },
      }) ?? noop,
    captureContent: config.captureContent,
  };
  const observe: ObserveRun = (run) => new GenAiRunSpans(instruments, run);
  const gaugeRunQueue = (read: () => RunQueueReading): void => {
    if (!meter) return;
    const gauges = RUN_QUEUE_GAUGES.map(({ name, unit, description, value }) => ({
      gauge: meter.createObservableGauge(name, { unit, description }),
      value,
    }));
    meter.addBatchObservableCallback(
      (result) => {
        const q = read();
        for (const { gauge, value } of gauges) result.observe(gauge, value(q));
      },
      gauges.map((g) => g.gauge),
    );
  };
  return {
    observe,
    gaugeRunQueue,
    async shutdown() {
      await Promise.allSettled([tracerProvider.shutdown(), meterProvider?.shutdown()]);
    },
  };
}
