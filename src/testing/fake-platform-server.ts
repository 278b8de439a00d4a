/**
 * The HTTP part shared by the fake chat platforms: a real server on 127.0.0.1 with an outage switch
 * ("502": a proxy answering Bad Gateway; "refuse": the port closed, so connections are refused) and
 * a way to wait until something was recorded.
 */
import http, { type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

export type Outage = "none" | "502" | "refuse";

/** A JSON response of a fake platform, or raw bytes (a file download) when `bytes` is set. */
export interface FakeReply {
  status: number;
  body: unknown;
  bytes?: { data: Buffer; contentType: string };
}

/** Answers one request; `closed` aborts when the client goes away (long polls). */
export type FakeHandler = (
  req: IncomingMessage,
  body: string,
  closed: AbortSignal,
  /** The body's bytes (multipart uploads). */
  bytes: Buffer,
) => FakeReply | Promise<FakeReply>;

/** A JSON reply. */
export function reply(status: number, body: unknown): FakeReply {
  return { status, body };
}

/** A file's bytes as the reply (200). */
export function fileReply(data: Buffer, contentType: string): FakeReply {
  return { status: 200, body: undefined, bytes: { data, contentType } };
}

function sendReply(res: ServerResponse, answer: FakeReply): void {
  if (res.writableEnded || res.destroyed) return;
  if (answer.bytes) {
    res.writeHead(answer.status, {
      "content-type": answer.bytes.contentType,
      "content-length": answer.bytes.data.length,
    });
    res.end(answer.bytes.data);
    return;
  }
  sendJson(res, answer.status, answer.body);
}

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  if (res.writableEnded || res.destroyed) return;
  const text = JSON.stringify(body);
  res.writeHead(status, {
    "content-type": "application/json; charset=utf-8",
    "content-length": Buffer.byteLength(text),
  });
  res.end(text);
}

/** One fake platform's server. */
export class FakePlatformServer {
  readonly #handler: FakeHandler;
  #server: http.Server;
  #port = 0;
  #outage: Outage = "none";
  /** Requests answered 502 while the outage lasted. */
  outageHits = 0;
  readonly #waiters = new Set<() => void>();

  private constructor(handler: FakeHandler) {
    this.#handler = handler;
    this.#server = this.#create();
  }

  /** Starts a server on 127.0.0.1 (a free port). */
  static async start(handler: FakeHandler): Promise<FakePlatformServer> {
    const fake = new FakePlatformServer(handler);
    await fake.#listen(0);
    return fake;
  }

  get url(): string {
    return `http://127.0.0.1:${this.#port}`;
  }

  get outageMode(): Outage {
    return this.#outage;
  }

  #create(): http.Server {
    return http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (chunk: Buffer) => chunks.push(chunk));
      req.on("end", () => {
        if (this.#outage === "502") {
          this.outageHits++;
          res.writeHead(502, { "content-type": "text/html" });
          res.end("<html><body><h1>502 Bad Gateway</h1></body></html>");
          this.changed();
          return;
        }
        const closed = new AbortController();
        res.on("close", () => closed.abort());
        const bytes = Buffer.concat(chunks);
        Promise.resolve(this.#handler(req, bytes.toString("utf8"), closed.signal, bytes))
          .then((answer) => sendReply(res, answer))
          .catch((err: unknown) => sendJson(res, 500, { error: String(err) }))
          .finally(() => this.changed());
      });
    });
  }

  #listen(port: number): Promise<void> {
    return new Promise((resolve, reject) => {
      this.#server.once("error", reject);
      this.#server.listen(port, "127.0.0.1", () => {
        this.#server.off("error", reject);
        this.#port = (this.#server.address() as AddressInfo).port;
        resolve();
      });
    });
  }

  #stop(): Promise<void> {
    return new Promise((resolve) => {
      this.#server.close(() => resolve());
      this.#server.closeAllConnections();
    });
  }

  /** Switches the outage on or off; "refuse" closes the port, "none" opens it again (same port). */
  async outage(mode: Outage): Promise<void> {
    const was = this.#outage;
    this.#outage = mode;
    if (mode === "refuse" && was !== "refuse") await this.#stop();
    if (mode !== "refuse" && was === "refuse") {
      this.#server = this.#create();
      await this.#listen(this.#port);
    }
    this.changed();
  }

  /** Wakes `waitUntil` callers (the handler calls it after recording something). */
  changed(): void {
    for (const wake of [...this.#waiters]) wake();
  }

  /** Resolves once `test()` holds, re-checking after every request; rejects after `timeoutMs`. */
  waitUntil(test: () => boolean, what: string, timeoutMs = 10_000): Promise<void> {
    if (test()) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const check = () => {
        if (!test()) return;
        cleanup();
        resolve();
      };
      const timer = setTimeout(() => {
        cleanup();
        reject(new Error(`timed out waiting for ${what}`));
      }, timeoutMs);
      const cleanup = () => {
        clearTimeout(timer);
        this.#waiters.delete(check);
      };
      this.#waiters.add(check);
    });
  }

  async close(): Promise<void> {
    for (const wake of [...this.#waiters]) wake();
    if (this.#outage !== "refuse") await this.#stop();
  }
}
