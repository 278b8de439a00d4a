/** `dimsum serve` wires the team: starter agents, channels, memory and MCP routes, the OpenAI endpoint. */
import { describe, expect, it } from "vitest";
import { serveCommand } from "../../src/cli/commands/serve.js";
import { EXIT_OK } from "../../src/cli/exit-codes.js";
import { call, login, sink, tempDir, waitFor } from "./helpers.js";

describe("dimsum serve with the team", () => {
  it("serves the team API, memory, MCP and the OpenAI endpoint", async () => {
    const home = tempDir();
    const stdout = sink();
    const stderr = sink();
    const stop = new AbortController();
    const running = serveCommand(
      { port: 0 },
      { stdout, stderr, env: { DIMSUM_HOME: home }, cwd: home, signal: stop.signal },
    );
    try {
      const url = await waitFor(() => /serving on (http:\/\/127\.0\.0\.1:\d+)/.exec(stdout.text)?.[1]);
      const password = /one-time password: (\S+)/.exec(stdout.text)?.[1];
      const owner = await login(url, "owner", password!);

      const agents = (await (await call(url, "/api/agents", { session: owner })).json()) as Array<{
        id: string;
      }>;
      expect(agents.map((a) => a.id)).toEqual(
        expect.arrayContaining(["assistant", "coder", "writer", "editor", "translator"]),
      );
      const created = await call(url, "/api/channels", {
        session: owner,
        body: { kind: "direct", name: "Me & coder", agentIds: ["coder"], userIds: [] },
      });
      expect(created.status).toBe(201);
      expect(await (await call(url, "/api/memory", { session: owner })).json()).toEqual([]);
      expect(await (await call(url, "/api/mcp", { session: owner })).json()).toEqual([]);
      const token = (await (
        await call(url, "/api/tokens", { session: owner, body: { name: "t" } })
      ).json()) as {
        token: string;
      };
      const models = await fetch(`${url}/v1/models`, { headers: { authorization: `Bearer ${token.token}` } });
      expect(models.status).toBe(200);
    } finally {
      stop.abort();
      expect(await running).toBe(EXIT_OK);
    }
    expect(stderr.text).toBe("");
  });
});
