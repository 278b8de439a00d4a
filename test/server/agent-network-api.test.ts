/**
 * An agent's sandbox network through the HTTP API: host names only (a scheme, port or path is a 400
 * saying what to write), `allow` needs hosts, only owners and admins change agents, `null` resets.
 */
import { describe, expect, it } from "vitest";
import { call, withUsers } from "./helpers.js";
import { startTeamServer as startServer } from "./team-helpers.js";

describe("PATCH /api/agents/:id network", () => {
  it("keeps a valid policy, refuses schemes, paths and ports with a fix, and resets with null", async () => {
    const server = await startServer();
    const { owner, users } = await withUsers(server.url, ["member"]);
    const patch = (body: unknown, session = owner) =>
      call(server.url, "/api/agents/coder", { method: "PATCH", session, body });

    const ok = await patch({ network: { mode: "allow", hosts: ["Registry.NPMJS.org", "*.pypi.org"] } });
    expect(ok.status).toBe(200);
    expect(((await ok.json()) as { network: unknown }).network).toEqual({
      mode: "allow",
      hosts: ["registry.npmjs.org", "*.pypi.org"],
    });
    const read = await call(server.url, "/api/agents/coder", { session: owner });
    expect(((await read.json()) as { network: unknown }).network).toEqual({
      mode: "allow",
      hosts: ["registry.npmjs.org", "*.pypi.org"],
    });

    for (const bad of [
      "https://registry.npmjs.org",
      "registry.npmjs.org/path",
      "registry.npmjs.org:443",
      "a b",
    ]) {
      const res = await patch({ network: { mode: "allow", hosts: [bad] } });
      expect(res.status, bad).toBe(400);
      expect(await res.text()).toMatch(/host name/);
    }
    const empty = await patch({ network: { mode: "allow", hosts: [] } });
    expect(empty.status).toBe(400);
    expect(await empty.text()).toMatch(/at least one host/);
    expect((await patch({ network: { mode: "wide" } })).status).toBe(400);

    // Members do not change agents (the existing rule), so they cannot give one the network.
    const member = await patch({ network: { mode: "on" } }, users.member);
    expect(member.status).toBe(403);

    const reset = await patch({ network: null });
    expect(reset.status).toBe(200);
    expect(await reset.json()).not.toHaveProperty("network");
  });

  it("creates an agent with its network", async () => {
    const server = await startServer();
    const { owner } = await withUsers(server.url);
    const res = await call(server.url, "/api/agents", {
      session: owner,
      body: { id: "fetcher", name: "Fetcher", network: { mode: "on" } },
    });
    expect(res.status).toBe(201);
    expect(((await res.json()) as { network: unknown }).network).toEqual({ mode: "on" });
    const bad = await call(server.url, "/api/agents", {
      session: owner,
      body: { id: "fetcher2", name: "Fetcher", network: { mode: "allow", hosts: ["ftp://x.org"] } },
    });
    expect(bad.status).toBe(400);
  });
});
