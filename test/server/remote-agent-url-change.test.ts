/**
 * A remote agent's token stays with the host it was given for (issue 34, items 5 and 6): an admin who
 * moves the agent to another host, with no token in the same request, sends the old token nowhere;
 * a URL with credentials in it is refused, and a2a.json's are listed without them.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RemoteAgentView } from "../../src/server/remote-agents.js";
import { type RemoteA2aAgent, startRemoteA2aAgent } from "../support/a2a-remote-agent.js";
import { call, withUsers } from "./helpers.js";
import { expectJson, startTeamServer } from "./team-helpers.js";

const TOKEN = "owner-given-token-4242";
const ELSEWHERE_TOKEN = "elsewhere-own-token-77";
let home: RemoteA2aAgent;
let elsewhere: RemoteA2aAgent;

beforeAll(async () => {
  home = await startRemoteA2aAgent(TOKEN);
  elsewhere = await startRemoteA2aAgent(ELSEWHERE_TOKEN);
});
afterAll(async () => {
  await home.close();
  await elsewhere.close();
});

describe("remote agent URL changes", () => {
  it("a URL on another host drops the stored token: the new host never receives it", async () => {
    const s = await startTeamServer({ configFile: { tools: { fetch: { allowPrivateNetwork: true } } } });
    const { owner, users } = await withUsers(s.url, ["admin"]);
    const admin = users.admin!;
    const added = await call(s.url, "/api/remote-agents", {
      session: owner,
      body: { name: "desk", url: home.url, token: TOKEN },
    });
    expect(added.status).toBe(201);
    const check = async () =>
      expectJson<{ ok: boolean }>(
        await call(s.url, "/api/remote-agents/desk/check", { session: admin, method: "POST" }),
        200,
      );
    expect((await check()).ok).toBe(true);
    expect(home.authorizations.at(-1)).toBe(`Bearer ${TOKEN}`);

    // Same host, another path: the token stays.
    const samePlace = await call(s.url, "/api/remote-agents/desk", {
      session: admin,
      method: "PATCH",
      body: { url: `${home.url}/` },
    });
    expect(((await samePlace.json()) as RemoteAgentView).hasToken).toBe(true);

    // Another host (the port is part of it): the token is dropped, the view says so.
    const moved = await expectJson<RemoteAgentView>(
      await call(s.url, "/api/remote-agents/desk", {
        session: admin,
        method: "PATCH",
        body: { url: elsewhere.url },
      }),
      200,
    );
    expect(moved).toMatchObject({ url: elsewhere.url, hasToken: false });
    expect((await check()).ok).toBe(false);
    expect(elsewhere.authorizations.length).toBeGreaterThan(0);
    expect(elsewhere.authorizations).not.toContain(`Bearer ${TOKEN}`);
    expect(JSON.stringify(elsewhere.authorizations)).not.toContain(TOKEN);

    // Moving back does not bring the old token back either.
    const back = await expectJson<RemoteAgentView>(
      await call(s.url, "/api/remote-agents/desk", {
        session: admin,
        method: "PATCH",
        body: { url: home.url },
      }),
      200,
    );
    expect(back.hasToken).toBe(false);

    // A new host with its own token, given in the same request, works.
    const withToken = await expectJson<RemoteAgentView>(
      await call(s.url, "/api/remote-agents/desk", {
        session: admin,
        method: "PATCH",
        body: { url: elsewhere.url, token: ELSEWHERE_TOKEN },
      }),
      200,
    );
    expect(withToken.hasToken).toBe(true);
    expect((await check()).ok).toBe(true);
    expect(elsewhere.authorizations.at(-1)).toBe(`Bearer ${ELSEWHERE_TOKEN}`);
    expect(elsewhere.authorizations).not.toContain(`Bearer ${TOKEN}`);
  }, 60_000);

  it("refuses URLs with a user name or password, and lists a2a.json's without them", async () => {
    const s = await startTeamServer({
      a2a: { agents: { filed: { url: "https://bob:hunter2@a2a.example.com/agents/x" } } },
    });
    const { owner } = await withUsers(s.url);
    for (const url of ["https://user:pw@8.8.8.8/a2a", "https://user@8.8.8.8/a2a"]) {
      const res = await call(s.url, "/api/remote-agents", { session: owner, body: { name: "creds", url } });
      expect(res.status).toBe(400);
      const text = await res.text();
      expect(text).toContain("token");
      expect(text).not.toContain("pw@");
    }
    const fine = await call(s.url, "/api/remote-agents", {
      session: owner,
      body: { name: "creds", url: "https://8.8.8.8/a2a" },
    });
    expect(fine.status).toBe(201);
    const patched = await call(s.url, "/api/remote-agents/creds", {
      session: owner,
      method: "PATCH",
      body: { url: "https://user:pw@8.8.8.8/a2a" },
    });
    expect(patched.status).toBe(400);
    const listed = await call(s.url, "/api/remote-agents", { session: owner });
    const text = await listed.text();
    expect(text).not.toContain("hunter2");
    expect(text).not.toContain("bob:");
    expect((JSON.parse(text) as RemoteAgentView[])[0]?.url).toBe("https://a2a.example.com/agents/x");
  }, 60_000);
});
