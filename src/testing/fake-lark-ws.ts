/**
 * The server side of Feishu/Lark's long connection, for tests: a WebSocket on 127.0.0.1 speaking the
 * SDK's frame protocol (protobuf `pbbp2.Frame`: SeqID 1, LogID 2, service 3, method 4 (0 control,
 * 1 data), headers 5 (`{key 1, value 2}`), payloadEncoding 6, payloadType 7, payload 8, LogIDNew 9),
 * encoded and decoded here by hand. `push` sends an event as a data frame with the `type: event`,
 * `message_id`, `sum`, `seq` and `trace_id` headers; the client's answer (the same frame with a
 * `{code}` payload) is recorded by message id.
 */
import { randomBytes } from "node:crypto";
import type { AddressInfo } from "node:net";
import { type WebSocket, WebSocketServer } from "ws";

export interface LarkFrame {
  seqId: number;
  logId: number;
  service: number;
  method: number;
  headers: Array<{ key: string; value: string }>;
  payload: Buffer;
}

function varint(value: number): Buffer {
  const bytes: number[] = [];
  let v = BigInt(value);
  do {
    let byte = Number(v & 0x7fn);
    v >>= 7n;
    if (v > 0n) byte |= 0x80;
    bytes.push(byte);
  } while (v > 0n);
  return Buffer.from(bytes);
}

function field(number: number, wireType: number): Buffer {
  return varint((number << 3) | wireType);
}

function bytesField(number: number, value: Buffer): Buffer {
  return Buffer.concat([field(number, 2), varint(value.length), value]);
}

/** Encodes a frame. */
export function encodeLarkFrame(frame: LarkFrame): Buffer {
  const parts = [
    field(1, 0),
    varint(frame.seqId),
    field(2, 0),
    varint(frame.logId),
    field(3, 0),
    varint(frame.service),
    field(4, 0),
    varint(frame.method),
  ];
  for (const header of frame.headers) {
    const encoded = Buffer.concat([
      bytesField(1, Buffer.from(header.key, "utf8")),
      bytesField(2, Buffer.from(header.value, "utf8")),
    ]);
    parts.push(bytesField(5, encoded));
  }
  parts.push(bytesField(8, frame.payload));
  return Buffer.concat(parts);
}

function readVarint(buffer: Buffer, at: number): [number, number] {
  let result = 0n;
  let shift = 0n;
  let pos = at;
  for (;;) {
    const byte = buffer[pos++] ?? 0;
    result |= BigInt(byte & 0x7f) << shift;
    if ((byte & 0x80) === 0) break;
    shift += 7n;
  }
  return [Number(result), pos];
}

/** Decodes the fields of one message into (field number → values). */
function decodeFields(buffer: Buffer): Map<number, Array<number | Buffer>> {
  const fields = new Map<number, Array<number | Buffer>>();
  let pos = 0;
  while (pos < buffer.length) {
    const [key, next] = readVarint(buffer, pos);
    pos = next;
    const number = key >> 3;
    const wireType = key & 7;
    let value: number | Buffer;
    if (wireType === 0) {
      [value, pos] = readVarint(buffer, pos);
    } else if (wireType === 2) {
      const [length, start] = readVarint(buffer, pos);
      value = buffer.subarray(start, start + length);
      pos = start + length;
    } else {
      throw new Error(`unexpected wire type ${wireType}`);
    }
    fields.set(number, [...(fields.get(number) ?? []), value]);
  }
  return fields;
}

/** Decodes a frame. */
export function decodeLarkFrame(buffer: Buffer): LarkFrame {
  const fields = decodeFields(buffer);
  const num = (n: number) => Number(fields.get(n)?.[0] ?? 0);
  const headers = (fields.get(5) ?? []).map((raw) => {
    const header = decodeFields(raw as Buffer);
    return { key: String(header.get(1)?.[0] ?? ""), value: String(header.get(2)?.[0] ?? "") };
  });
  const payload = fields.get(8)?.[0];
  return {
    seqId: num(1),
    logId: num(2),
    service: num(3),
    method: num(4),
    headers,
    payload: Buffer.isBuffer(payload) ? payload : Buffer.alloc(0),
  };
}

/** The WebSocket side of a fake long connection. */
export class FakeLarkLongConnection {
  readonly #wss: WebSocketServer;
  readonly #sockets = new Set<WebSocket>();
  /** The client's answers by message id: the `code` it returned. */
  readonly answers = new Map<string, number>();
  /** Connections opened. */
  connections = 0;
  /** Control frames (pings) the clients sent: a client pings once it is ready for events. */
  pings = 0;
  #onChange: () => void;

  private constructor(wss: WebSocketServer, onChange: () => void) {
    this.#wss = wss;
    this.#onChange = onChange;
    wss.on("connection", (socket) => {
      this.connections++;
      this.#sockets.add(socket);
      socket.on("close", () => {
        this.#sockets.delete(socket);
        this.#onChange();
      });
      socket.on("message", (data) => {
        try {
          const frame = decodeLarkFrame(Buffer.from(data as Buffer));
          const id = frame.headers.find((h) => h.key === "message_id")?.value;
          if (frame.method === 0) this.pings++;
          if (frame.method === 1 && id) {
            const answer = JSON.parse(frame.payload.toString("utf8")) as { code?: number };
            this.answers.set(id, answer.code ?? 0);
          }
        } catch {
          // A ping or something else: nothing to record.
        }
        this.#onChange();
      });
      this.#onChange();
    });
  }

  static async start(onChange: () => void): Promise<FakeLarkLongConnection> {
    const wss = await new Promise<WebSocketServer>((resolve) => {
      const created: WebSocketServer = new WebSocketServer({ host: "127.0.0.1", port: 0 }, () =>
        resolve(created),
      );
    });
    return new FakeLarkLongConnection(wss, onChange);
  }

  /** The URL `/callback/ws/endpoint` hands out. */
  get url(): string {
    const port = (this.#wss.address() as AddressInfo).port;
    return `ws://127.0.0.1:${port}/ws?device_id=fake-device&service_id=1`;
  }

  get open(): number {
    return [...this.#sockets].filter((s) => s.readyState === s.OPEN).length;
  }

  /** Sends an event (its JSON) to every open connection; returns the frame's message id. */
  push(event: unknown): string {
    const messageId = `msg_${randomBytes(8).toString("hex")}`;
    const frame = encodeLarkFrame({
      seqId: 1,
      logId: 1,
      service: 1,
      method: 1,
      headers: [
        { key: "type", value: "event" },
        { key: "message_id", value: messageId },
        { key: "sum", value: "1" },
        { key: "seq", value: "0" },
        { key: "trace_id", value: randomBytes(4).toString("hex") },
      ],
      payload: Buffer.from(JSON.stringify(event), "utf8"),
    });
    for (const socket of this.#sockets) if (socket.readyState === socket.OPEN) socket.send(frame);
    return messageId;
  }

  dropAll(): void {
    for (const socket of this.#sockets) socket.terminate();
  }

  async close(): Promise<void> {
    for (const socket of this.#sockets) socket.terminate();
    await new Promise<void>((resolve) => this.#wss.close(() => resolve()));
  }
}
