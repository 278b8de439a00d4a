/**
 * A fake OpenAI-compatible speech-to-text API on 127.0.0.1: `POST …/audio/transcriptions`, multipart
 * with `file` and `model` (as OpenAI, Groq, SiliconFlow and whisper servers take it), answered
 * `{text}`. It records every request (the fields, the file's bytes, the Authorization header), refuses
 * a missing file or model with 400 and a wrong key with 401, and answers queued failures first.
 */
import http, { type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

/** One transcription request as the fake received it. */
export interface RecordedTranscription {
  path: string;
  /** The Authorization header, when one was sent. */
  authorization: string | undefined;
  model: string | undefined;
  language: string | undefined;
  responseFormat: string | undefined;
  fileName: string | undefined;
  file: Buffer | undefined;
}

export interface FakeTranscriptionServerOptions {
  /** The transcript of every request (default "hello from the fake transcriber"), or per request. */
  transcript?: string | ((request: RecordedTranscription) => string);
  /** When set, a request without `Authorization: Bearer <apiKey>` is refused with 401. */
  apiKey?: string;
}

export interface FakeTranscriptionServer {
  /** The base URL, e.g. `http://127.0.0.1:1234/v1`. */
  readonly url: string;
  readonly requests: RecordedTranscription[];
  /** Answers the next request with this status and body instead of a transcript. */
  failNext(status: number, body: unknown): void;
  close(): Promise<void>;
}

function send(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(text) });
  res.end(text);
}

async function recordOf(req: IncomingMessage, raw: Buffer): Promise<RecordedTranscription> {
  const record: RecordedTranscription = {
    path: new URL(req.url ?? "/", "http://fake").pathname,
    authorization: req.headers.authorization,
    model: undefined,
    language: undefined,
    responseFormat: undefined,
    fileName: undefined,
    file: undefined,
  };
  const contentType = req.headers["content-type"] ?? "";
  if (!contentType.startsWith("multipart/form-data")) return record;
  const form = await new Request("http://fake/", {
    method: "POST",
    headers: { "content-type": contentType },
    body: new Uint8Array(raw),
  }).formData();
  const field = (name: string) => {
    const value = form.get(name);
    return typeof value === "string" ? value : undefined;
  };
  record.model = field("model");
  record.language = field("language");
  record.responseFormat = field("response_format");
  const file = form.get("file");
  if (file !== null && typeof file !== "string") {
    record.fileName = file.name;
    record.file = Buffer.from(await file.arrayBuffer());
  }
  return record;
}

/** Starts the fake on a free port. */
export async function startFakeTranscriptionServer(
  options: FakeTranscriptionServerOptions = {},
): Promise<FakeTranscriptionServer> {
  const requests: RecordedTranscription[] = [];
  const failures: Array<{ status: number; body: unknown }> = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      recordOf(req, Buffer.concat(chunks))
        .then((record) => {
          if (req.method !== "POST" || !record.path.endsWith("/audio/transcriptions")) {
            return send(res, 404, { error: { message: "not found" } });
          }
          requests.push(record);
          const failure = failures.shift();
          if (failure) return send(res, failure.status, failure.body);
          if (options.apiKey !== undefined && record.authorization !== `Bearer ${options.apiKey}`) {
            return send(res, 401, {
              error: { message: "Incorrect API key provided", type: "invalid_request_error" },
            });
          }
          if (!record.file || !record.model) {
            return send(res, 400, {
              error: { message: "file and model are required", type: "invalid_request_error" },
            });
          }
          const { transcript } = options;
          const text =
            typeof transcript === "function"
              ? transcript(record)
              : (transcript ?? "hello from the fake transcriber");
          return send(res, 200, { text });
        })
        .catch((err: unknown) =>
          send(res, 400, { error: { message: `unreadable multipart body: ${String(err)}` } }),
        );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    requests,
    failNext(status, body) {
      failures.push({ status, body });
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
