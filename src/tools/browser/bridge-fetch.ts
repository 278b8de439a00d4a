/** One HTTP request over a socket into a sandbox (see bridge.ts), read whole for the browser. */
import { request as httpRequest } from "node:http";
import type { Socket } from "node:net";

export interface BridgeRequest {
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: Buffer;
  host: string;
}

export interface BridgeAnswer {
  status: number;
  headers: Record<string, string>;
  body: Buffer;
}

const MAX_BYTES = 32 * 1024 * 1024;

/** Sends the request and reads the answer (up to 32 MB). */
export function fetchThroughBridge(socket: Socket, req: BridgeRequest): Promise<BridgeAnswer> {
  return new Promise((resolve, reject) => {
    const headers = { ...req.headers, host: req.host, connection: "close" };
    const outgoing = httpRequest(
      { createConnection: () => socket, method: req.method, path: req.path, headers },
      (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on("data", (chunk: Buffer) => {
          size += chunk.length;
          if (size > MAX_BYTES) res.destroy(new Error("The page's answer is over 32 MB."));
          else chunks.push(chunk);
        });
        res.on("error", reject);
        res.on("end", () => {
          const out: Record<string, string> = {};
          for (const [name, value] of Object.entries(res.headers)) {
            if (value !== undefined) out[name] = Array.isArray(value) ? value.join(", ") : value;
          }
          resolve({ status: res.statusCode ?? 502, headers: out, body: Buffer.concat(chunks) });
        });
      },
    );
    socket.resume();
    outgoing.on("error", reject);
    outgoing.end(req.body);
  });
}
