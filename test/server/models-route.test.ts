/**
 * `GET /api/models` over a real server: the catalogue's suggestions plus what the configured
 * provider lists (the fake LLM server on loopback), cached briefly, time-boxed, and never a key.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ModelsResponse } from "../../src/server/routes/models.js";
import { type FakeLlmServer, startFakeLlmServer } from "../../src/testing/fake-llm-server.js";
import { call, withUsers } from "./helpers.js";
import { expectJson, startTeamServer } from "./team-helpers.js";

let llm: FakeLlmServer;
let silent: http.Server;
let silentUrl = "";
beforeAll(async () => {
  llm = await startFakeLlmServer({ models: ["gpt-test", "gpt-4o"] });
  // Accepts connections and never answers: listing it must give up on its own.
  silent = http.createServer(() => {});
  await new Promise<void>((resolve) => silent.listen(0, "127.0.0.1", resolve));
  silentUrl = `http://127.0.0.1:${(silent.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await llm.close();
  silent.closeAllConnections();
  await new Promise((resolve) => silent.close(resolve));
});

describe("GET /api/models", () => {
  it("offers the catalogue and the provider's own list, without keys, and caches the list", async () => {
    const s = await startTeamServer({ llmUrl: llm.url });
    const { owner, users } = await withUsers(s.url, ["member", "guest"]);
    llm.reset();
    const res = await call(s.url, "/api/models", { session: users.member! });
    const text = await res.clone().text();
    const body = await expectJson<ModelsResponse>(res, 200);
    expect(text).not.toContain("sk-test-key-1234");
    expect(body.defaultModel).toBe("openai:gpt-test");
    expect(body.models.find((m) => m.id === "openai:gpt-test")).toMatchObject({ source: "provider" });
    expect(body.models.find((m) => m.id === "openai:gpt-4o")).toMatchObject({
      source: "provider",
      contextWindow: 128_000,
    });
    expect(body.models.find((m) => m.id === "anthropic:claude-sonnet-4-5")).toMatchObject({
      source: "catalog",
    });
    expect(body.providers.find((p) => p.name === "openai")).toMatchObject({
      configured: true,
      list: "listed",
    });
    const anthropic = body.providers.find((p) => p.name === "anthropic");
    expect(anthropic).toMatchObject({ configured: false, list: "skipped" });
    expect(anthropic?.note).toContain("ANTHROPIC_API_KEY");
    // The provider was asked with the key, once; a second look within the minute reuses the list.
    const asked = llm.requests.filter((r) => r.method === "GET");
    expect(asked).toHaveLength(1);
    expect(asked[0]?.headers.authorization).toBe("Bearer sk-test-key-1234");
    await expectJson<ModelsResponse>(await call(s.url, "/api/models", { session: owner }), 200);
    expect(llm.requests.filter((r) => r.method === "GET")).toHaveLength(1);

    expect((await call(s.url, "/api/models", { session: users.guest! })).status).toBe(403);
  });

  it("gives up on a provider that does not answer and still offers the catalogue", async () => {
    const s = await startTeamServer({
      env: {
        DIMSUM_MODEL: "openai:gpt-4o",
        OPENAI_API_KEY: "sk-silent-key-9876",
        OPENAI_BASE_URL: `${silentUrl}/v1`,
      },
    });
    const { owner } = await withUsers(s.url);
    const body = await expectJson<ModelsResponse>(await call(s.url, "/api/models", { session: owner }), 200);
    const openai = body.providers.find((p) => p.name === "openai");
    expect(openai).toMatchObject({ configured: true, list: "failed" });
    expect(openai?.note).toContain("did not list its models within 3 s");
    expect(body.models.find((m) => m.id === "openai:gpt-4o")).toMatchObject({ source: "catalog" });
    expect(JSON.stringify(body)).not.toContain("sk-silent-key-9876");
  }, 15_000);
});
