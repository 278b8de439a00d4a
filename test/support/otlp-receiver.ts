/**
 * A local OTLP/HTTP receiver for tests: a plain node:http server that takes `/v1/traces` and
 * `/v1/metrics` in JSON or protobuf and keeps the spans (flattened) and the metric names it got.
 * The protobuf side is a small wire-format reader over the OTLP field numbers it needs.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";

export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  kind: number;
  attributes: Record<string, unknown>;
  status: { code: number; message?: string };
  serviceName: string | undefined;
}

export interface OtlpReceiver {
  url: string;
  spans: ReceivedSpan[];
  metricNames: Set<string>;
  /** Content types of the requests, in order. */
  contentTypes: string[];
  close(): Promise<void>;
}

// ---- protobuf wire format --------------------------------------------------------------------
type Field = { no: number; wire: number; value: bigint | Uint8Array };

function readVarint(buf: Uint8Array, at: { pos: number }): bigint {
  let result = 0n;
  let shift = 0n;
  while (true) {
    const byte = buf[at.pos++] as number;
    result |= BigInt(byte & 0x7f) << shift;
    if ((byte & 0x80) === 0) return result;
    shift += 7n;
  }
}

function fields(buf: Uint8Array): Field[] {
  const out: Field[] = [];
  const at = { pos: 0 };
  while (at.pos < buf.length) {
    const key = Number(readVarint(buf, at));
    const no = key >> 3;
    const wire = key & 7;
    if (wire === 0) out.push({ no, wire, value: readVarint(buf, at) });
    else if (wire === 1) {
      out.push({ no, wire, value: buf.subarray(at.pos, at.pos + 8) });
      at.pos += 8;
    } else if (wire === 2) {
      const len = Number(readVarint(buf, at));
      out.push({ no, wire, value: buf.subarray(at.pos, at.pos + len) });
      at.pos += len;
    } else if (wire === 5) {
      out.push({ no, wire, value: buf.subarray(at.pos, at.pos + 4) });
      at.pos += 4;
    } else throw new Error(`unsupported wire type ${wire}`);
  }
  return out;
}

const bytesOf = (f: Field) => f.value as Uint8Array;
const text = (f: Field) => Buffer.from(bytesOf(f)).toString("utf8");
const hex = (f: Field) => Buffer.from(bytesOf(f)).toString("hex");
const all = (fs: Field[], no: number) => fs.filter((f) => f.no === no);
const one = (fs: Field[], no: number) => fs.find((f) => f.no === no);

/** AnyValue: 1 string, 2 bool, 3 int, 4 double, 5 array. */
function anyValue(buf: Uint8Array): unknown {
  const f = fields(buf)[0];
  if (!f) return undefined;
  switch (f.no) {
    case 1:
      return text(f);
    case 2:
      return f.value === 1n;
    case 3:
      return Number(BigInt.asIntN(64, f.value as bigint));
    case 4:
      return Buffer.from(bytesOf(f)).readDoubleLE(0);
    case 5:
      return all(fields(bytesOf(f)), 1).map((v) => anyValue(bytesOf(v)));
    default:
      return undefined;
  }
}

function protoAttributes(fs: Field[], no: number): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const kv of all(fs, no)) {
    const parts = fields(bytesOf(kv));
    const key = one(parts, 1);
    const value = one(parts, 2);
    if (key) out[text(key)] = value ? anyValue(bytesOf(value)) : undefined;
  }
  return out;
}

function protoSpans(body: Uint8Array): ReceivedSpan[] {
  const out: ReceivedSpan[] = [];
  for (const rs of all(fields(body), 1)) {
    const rsFields = fields(bytesOf(rs));
    const resource = one(rsFields, 1);
    const service = resource ? protoAttributes(fields(bytesOf(resource)), 1)["service.name"] : undefined;
    for (const ss of all(rsFields, 2)) {
      for (const sp of all(fields(bytesOf(ss)), 2)) {
        const s = fields(bytesOf(sp));
        const status = one(s, 15);
        const statusFields = status ? fields(bytesOf(status)) : [];
        const code = one(statusFields, 3);
        const message = one(statusFields, 2);
        const parent = one(s, 4);
        const kind = one(s, 6);
        out.push({
          traceId: hex(one(s, 1) as Field),
          spanId: hex(one(s, 2) as Field),
          parentSpanId: parent ? hex(parent) : "",
          name: text(one(s, 5) as Field),
          kind: kind ? Number(kind.value) : 0,
          attributes: protoAttributes(s, 9),
          status: { code: code ? Number(code.value) : 0, ...(message ? { message: text(message) } : {}) },
          serviceName: typeof service === "string" ? service : undefined,
        });
      }
    }
  }
  return out;
}

function protoMetricNames(body: Uint8Array): string[] {
  const names: string[] = [];
  for (const rm of all(fields(body), 1))
    for (const sm of all(fields(bytesOf(rm)), 2))
      for (const m of all(fields(bytesOf(sm)), 2)) {
        const name = one(fields(bytesOf(m)), 1);
        if (name) names.push(text(name));
      }
  return names;
}

// ---- OTLP JSON ---------------------------------------------------------------------------------
type JsonAny = {
  stringValue?: string;
  boolValue?: boolean;
  intValue?: string | number;
  doubleValue?: number;
  arrayValue?: { values?: JsonAny[] };
};
type JsonKv = { key: string; value: JsonAny };

function jsonValue(v: JsonAny): unknown {
  if (v.stringValue !== undefined) return v.stringValue;
  if (v.boolValue !== undefined) return v.boolValue;
  if (v.intValue !== undefined) return Number(v.intValue);
  if (v.doubleValue !== undefined) return v.doubleValue;
  if (v.arrayValue) return (v.arrayValue.values ?? []).map(jsonValue);
  return undefined;
}

function jsonAttributes(list: JsonKv[] | undefined): Record<string, unknown> {
  return Object.fromEntries((list ?? []).map((kv) => [kv.key, jsonValue(kv.value)]));
}

interface JsonTraces {
  resourceSpans?: Array<{
    resource?: { attributes?: JsonKv[] };
    scopeSpans?: Array<{
      spans?: Array<{
        traceId: string;
        spanId: string;
        parentSpanId?: string;
        name: string;
        kind?: number;
        attributes?: JsonKv[];
        status?: { code?: number; message?: string };
      }>;
    }>;
  }>;
}

function jsonSpans(body: JsonTraces): ReceivedSpan[] {
  return (body.resourceSpans ?? []).flatMap((rs) => {
    const service = jsonAttributes(rs.resource?.attributes)["service.name"];
    return (rs.scopeSpans ?? []).flatMap((ss) =>
      (ss.spans ?? []).map((s) => ({
        traceId: s.traceId,
        spanId: s.spanId,
        parentSpanId: s.parentSpanId ?? "",
        name: s.name,
        kind: s.kind ?? 0,
        attributes: jsonAttributes(s.attributes),
        status: { code: s.status?.code ?? 0, ...(s.status?.message ? { message: s.status.message } : {}) },
        serviceName: typeof service === "string" ? service : undefined,
      })),
    );
  });
}

interface JsonMetrics {
  resourceMetrics?: Array<{ scopeMetrics?: Array<{ metrics?: Array<{ name: string }> }> }>;
}

/** Starts the receiver on 127.0.0.1. */
export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = [];
  const metricNames = new Set<string>();
  const contentTypes: string[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const body = Buffer.concat(chunks);
      const type = req.headers["content-type"] ?? "";
      contentTypes.push(type);
      const json = type.includes("json");
      try {
        if (req.url?.startsWith("/v1/traces")) {
          spans.push(...(json ? jsonSpans(JSON.parse(body.toString()) as JsonTraces) : protoSpans(body)));
        } else if (req.url?.startsWith("/v1/metrics")) {
          const names = json
            ? ((JSON.parse(body.toString()) as JsonMetrics).resourceMetrics ?? []).flatMap((rm) =>
                (rm.scopeMetrics ?? []).flatMap((sm) => (sm.metrics ?? []).map((m) => m.name)),
              )
            : protoMetricNames(body);
          for (const name of names) metricNames.add(name);
        }
        res.writeHead(200, { "content-type": json ? "application/json" : "application/x-protobuf" });
        res.end(json ? "{}" : "");
      } catch (err) {
        res.writeHead(400);
        res.end(String(err));
      }
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    spans,
    metricNames,
    contentTypes,
    close: () => new Promise((r) => server.close(() => r())),
  };
}
