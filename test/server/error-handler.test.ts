/**
 * The server's error answers: a missing or invalid Host header is a JSON 400 (raw TCP, no Host sent at
 * all), an unexpected error a JSON 500 without internals, logged exactly once.
 */
import { connect } from "node:net";
import { RequestError } from "@hono/node-server";
import { HTTPException } from "hono/http-exception";
import { describe, expect, it } from "vitest";
import { DimsumError } from "../../src/errors.js";
import { beforeRoutingErrorResponse } from "../../src/server/http/errors.js";
import { startServer } from "./helpers.js";

/** Sends `request` as is over a fresh TCP connection to 127.0.0.1 and returns all the server wrote. */
function rawRequest(port: number, request: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, "127.0.0.1");
    const chunks: Buffer[] = [];
    socket.on("data", (chunk) => chunks.push(chunk));
    socket.on("error", reject);
    socket.on("close", () => resolve(Buffer.concat(chunks).toString("utf8")));
    socket.write(request);
  });
}

function parse(raw: string): { status: number; headers: string; body: string } {
  const split = raw.indexOf("\r\n\r\n");
  const head = raw.slice(0, split);
  const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(head)?.[1]);
  return { status, headers: head.toLowerCase(), body: raw.slice(split + 4) };
}

const portOf = (url: string) => Number(new URL(url).port);

describe("requests without a usable Host header", () => {
  it.each([
    ["HTTP/1.1 without Host", "GET /api/auth/status HTTP/1.1\r\nConnection: close\r\n\r\n"],
    ["HTTP/1.0 without Host", "GET /api/auth/status HTTP/1.0\r\n\r\n"],
    ["an invalid Host", "GET /api/auth/status HTTP/1.1\r\nHost: exa mple@evil\r\nConnection: close\r\n\r\n"],
  ])("%s gets a JSON 400 and no stack trace", async (_name, request) => {
    const { url, log } = await startServer();
    const answer = parse(await rawRequest(portOf(url), request));
    expect(answer.status).toBe(400);
    expect(answer.headers).toContain("content-type: application/json");
    const body = JSON.parse(answer.body) as { error: { code: string; message: string } };
    expect(body.error.code).toBe("bad_request");
    expect(body.error.message).toMatch(/host/i);
    expect(answer.body).not.toMatch(/ at |node_modules|\.ts:|\.js:/);
    expect(log.lines.filter((l) => l.startsWith("error:"))).toEqual([]);
  });

  it("the same server still answers a proper request", async () => {
    const { url } = await startServer();
    const answer = parse(
      await rawRequest(
        portOf(url),
        "GET /api/auth/status HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n",
      ),
    );
    expect(answer.status).toBe(200);
  });

  it("an unparsable request gets a JSON 400 too", async () => {
    const { url } = await startServer();
    const answer = parse(await rawRequest(portOf(url), "NOT A REQUEST\r\n\r\n"));
    expect(answer.status).toBe(400);
    expect(JSON.parse(answer.body)).toMatchObject({ error: { code: "bad_request" } });
  });
});

describe("unexpected errors", () => {
  it.each([
    ["an Error", () => new Error("secret internals at /srv/dimsum/db.ts:42")],
    ["a DimsumError coded internal", () => new DimsumError("internal", "secret internals in the store")],
    ["a thrown string", () => "secret internals as a string"],
    ["an HTTPException 500", () => new HTTPException(500, { message: "secret internals in middleware" })],
  ])("%s answers 500 JSON with no internals and is logged once", async (_name, make) => {
    const { url, log } = await startServer({
      routes: [
        (app) =>
          app.get("/v1/boom", () => {
            throw make();
          }),
      ],
    });
    const res = await fetch(`${url}/v1/boom`);
    expect(res.status).toBe(500);
    expect(res.headers.get("content-type")).toContain("application/json");
    const text = await res.text();
    expect(JSON.parse(text)).toEqual({
      error: { code: "internal", message: "internal server error; see the server log" },
    });
    expect(text).not.toContain("secret");
    const errors = log.lines.filter((l) => l.startsWith("error:"));
    expect(errors).toHaveLength(1);
    // Hono's handler sees Errors; other thrown values reach the adapter's handler, which says so.
    expect(errors[0]).toMatch(/GET \/v1\/boom failed|request failed before routing/);
    expect(errors[0]).toContain("secret internals");
  });

  it("before routing: a request error is a 400, anything else a logged 500", async () => {
    const logged: unknown[] = [];
    const bad = beforeRoutingErrorResponse(new RequestError("Missing host header"), (e) => logged.push(e));
    expect(bad.status).toBe(400);
    expect(logged).toEqual([]);
    const oops = new Error("adapter internals");
    const failed = beforeRoutingErrorResponse(oops, (e) => logged.push(e));
    expect(failed.status).toBe(500);
    expect(await failed.text()).not.toContain("adapter internals");
    expect(logged).toEqual([oops]);
  });
});
