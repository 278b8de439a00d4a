/**
 * Every audited action over HTTP, one by one, against a real server and SQLite file: each produces
 * exactly one entry with its action, the actor and the request's address and user agent, and no
 * entry holds any of the secrets the test sent (provider key, passwords, tokens, MCP environment,
 * connector secret). Then `dimsum audit verify` (the real CLI, on the same file) finds the chain
 * whole, and reports an edited and a deleted entry.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type FakeLlmServer, startFakeLlmServer } from "../../../src/testing/fake-llm-server.js";
import { EVERYTHING } from "../../mcp/helpers.js";
import { cleanEnv, runCli } from "../../support/cli.js";
import { call, type Session, sessionCookieFrom } from "../helpers.js";
import { type AuditServer, startAuditServer } from "./harness.js";

const PROVIDER_KEY = "sk-audit-provider-key-0123456789";
const NEW_PROVIDER_KEY = "sk-audit-new-provider-key-9876543210";
const OWNER_PASSWORD = "owner-password-audit-1";
const NEW_OWNER_PASSWORD = "owner-password-audit-2";
const MEMBER_PASSWORD = "member-password-audit-1";
const RESET_PASSWORD = "member-password-audit-reset";
const MCP_SECRET = "mcp-env-secret-audit-42";
const REMOTE_TOKEN = "remote-agent-token-audit-77";
const CONNECTOR_SECRET = "connector-shared-secret-audit-99";
const HTTP_TOOL_SECRET = "http-tool-header-secret-audit-55";
const USER_AGENT = "audit-test/1.0";

let llm: FakeLlmServer;

beforeAll(async () => {
  llm = await startFakeLlmServer({
    // A question asks for the time (which waits for approval); the tool's answer ends the run.
    defaultTurn: (request) =>
      (request.body as { messages: Array<{ role: string }> }).messages.at(-1)?.role === "tool"
        ? { text: "it is now" }
        : { toolCalls: [{ name: "current_time", args: {} }] },
  });
});

afterAll(async () => {
  await llm.close();
});

interface Entry {
  seq: number;
  actorId: string | null;
  actorName: string | null;
  action: string;
  target: string | null;
  ip: string | null;
  userAgent: string | null;
  instance: string | null;
  before: unknown;
  after: unknown;
}

async function ok<T>(res: Response | Promise<Response>, status?: number): Promise<T> {
  const r = await res;
  const text = await r.text();
  if (r.status >= 400 || (status !== undefined && r.status !== status))
    throw new Error(`HTTP ${r.status}: ${text}`);
  return (text ? JSON.parse(text) : undefined) as T;
}

describe("the audit log", () => {
  it("records each audited action exactly once, with no secret in any entry; dimsum audit verify holds, then finds tampering", async () => {
    const s: AuditServer = await startAuditServer(llm.url, PROVIDER_KEY);
    const ua = { "user-agent": USER_AGENT };
    const api = (
      session: Session | undefined,
      path: string,
      options: { method?: string; body?: unknown } = {},
    ) => call(s.url, path, { ...options, headers: ua, ...(session ? { session } : {}) });
    const signIn = async (username: string, password: string, path = "/api/auth/login"): Promise<Session> => {
      const res = await api(undefined, path, { body: { username, password } });
      const body = await ok<{ user: { id: string }; token: string; csrfToken: string }>(res.clone());
      const cookie = sessionCookieFrom(res);
      if (!cookie) throw new Error("no session cookie");
      return {
        cookie: cookie.pair,
        setCookie: cookie.raw,
        token: body.token,
        csrfToken: body.csrfToken,
        userId: body.user.id,
      };
    };
    let owner!: Session;
    let member!: Session;
    let memberId = "";
    let tokenId = "";
    let createdToken = "";
    let channelId = "";
    let runId = "";
    let callId = "";
    let memoryId = "";
    let budgetId = "";
    let connectorId = "";
    let template: unknown;

    const waitForRun = async (states: string[]) => {
      for (;;) {
        const run = await ok<{ status: string; pendingApprovals?: Array<{ callId: string }> }>(
          api(owner, `/api/runs/${runId}`),
        );
        if (states.includes(run.status)) return run;
        await new Promise((r) => setTimeout(r, 25));
      }
    };
    const startWaitingRun = async () => {
      const posted = await ok<{ runs: Array<{ id: string }> }>(
        api(owner, `/api/channels/${channelId}/messages`, { body: { text: "what time is it?" } }),
      );
      runId = posted.runs[0]?.id ?? "";
      const waiting = await waitForRun(["waiting", "done", "error"]);
      expect(waiting.status).toBe("waiting");
      callId = waiting.pendingApprovals?.[0]?.callId ?? "";
    };

    // Each step: what it does, and the one action it must record (undefined: none).
    const steps: Array<[string | undefined, () => Promise<void>]> = [
      [
        "account.create",
        async () => {
          owner = await signIn("alice", OWNER_PASSWORD, "/api/auth/setup");
        },
      ],
      [
        "auth.sign_in_failed",
        async () => {
          const res = await api(undefined, "/api/auth/login", {
            body: { username: "alice", password: "wrong-password-1" },
          });
          expect(res.status).toBe(401);
        },
      ],
      [
        "auth.sign_in",
        async () => {
          owner = await signIn("alice", OWNER_PASSWORD);
        },
      ],
      [
        "account.password_change",
        async () => {
          await ok(
            api(owner, "/api/auth/password", {
              body: { currentPassword: OWNER_PASSWORD, newPassword: NEW_OWNER_PASSWORD },
            }),
          );
        },
      ],
      [
        "account.create",
        async () => {
          const created = await ok<{ id: string }>(
            api(owner, "/api/users", {
              body: { username: "mia", password: MEMBER_PASSWORD, role: "member" },
            }),
          );
          memberId = created.id;
        },
      ],
      [
        "account.role_change",
        async () => {
          await ok(api(owner, `/api/users/${memberId}`, { method: "PATCH", body: { role: "admin" } }));
        },
      ],
      [
        "account.password_reset",
        async () => {
          await ok(
            api(owner, `/api/users/${memberId}`, { method: "PATCH", body: { password: RESET_PASSWORD } }),
          );
        },
      ],
      [
        "auth.sign_in",
        async () => {
          member = await signIn("mia", RESET_PASSWORD);
        },
      ],
      [
        "token.create",
        async () => {
          const created = await ok<{ id: string; token: string }>(
            api(owner, "/api/tokens", { body: { name: "ci" } }),
          );
          tokenId = created.id;
          createdToken = created.token;
        },
      ],
      [
        "token.revoke",
        async () => {
          await ok(api(owner, `/api/tokens/${tokenId}`, { method: "DELETE" }));
        },
      ],
      [
        "provider.key_set",
        async () => {
          await ok(
            api(owner, "/api/settings/providers/openai", {
              method: "PUT",
              body: { apiKey: NEW_PROVIDER_KEY },
            }),
          );
        },
      ],
      [
        "settings.update",
        async () => {
          await ok(api(owner, "/api/settings", { method: "PUT", body: { defaultModel: "openai:gpt-test" } }));
        },
      ],
      [
        "provider.delete",
        async () => {
          await ok(api(owner, "/api/settings/providers/openai", { method: "DELETE" }));
        },
      ],
      [
        "http_tool.add",
        async () => {
          await ok(
            api(owner, "/api/http-tools", {
              body: {
                name: "lookup",
                description: "Looks things up.",
                method: "GET",
                url: `${llm.url}/lookup`,
                headers: { "X-Api-Key": HTTP_TOOL_SECRET },
              },
            }),
          );
        },
      ],
      [
        "http_tool.delete",
        async () => {
          await ok(api(owner, "/api/http-tools/lookup", { method: "DELETE" }));
        },
      ],
      [
        "mcp.add",
        async () => {
          await ok(
            api(owner, "/api/mcp", {
              body: {
                name: "ev",
                transport: "stdio",
                command: process.execPath,
                args: [EVERYTHING, "stdio"],
                env: { EV_TOKEN: MCP_SECRET },
              },
            }),
          );
        },
      ],
      [
        "mcp.delete",
        async () => {
          await ok(api(owner, "/api/mcp/ev", { method: "DELETE" }));
        },
      ],
      [
        "remote_agent.add",
        async () => {
          await ok(
            api(owner, "/api/remote-agents", {
              body: { name: "desk", url: `${llm.url}/a2a`, token: REMOTE_TOKEN },
            }),
          );
        },
      ],
      [
        "remote_agent.update",
        async () => {
          await ok(api(owner, "/api/remote-agents/desk", { method: "PATCH", body: { enabled: false } }));
        },
      ],
      [
        "remote_agent.delete",
        async () => {
          await ok(api(owner, "/api/remote-agents/desk", { method: "DELETE" }));
        },
      ],
      [
        "connector.create",
        async () => {
          const created = await ok<{ id: string }>(
            api(owner, "/api/connectors", {
              body: {
                type: "webhook",
                name: "Bridge",
                agentId: "assistant",
                settings: { outboundUrl: "https://example.com/hook" },
                secrets: { secret: CONNECTOR_SECRET },
              },
            }),
          );
          connectorId = created.id;
        },
      ],
      [
        "connector.update",
        async () => {
          await ok(
            api(owner, `/api/connectors/${connectorId}`, { method: "PATCH", body: { name: "Bridge 2" } }),
          );
        },
      ],
      [
        "connector.delete",
        async () => {
          await ok(api(owner, `/api/connectors/${connectorId}`, { method: "DELETE" }));
        },
      ],
      [
        undefined,
        async () => {
          await ok(
            api(owner, "/api/agents/assistant", { method: "PATCH", body: { askFirst: ["current_time"] } }),
          );
          const channel = await ok<{ id: string }>(
            api(owner, "/api/channels", {
              body: {
                kind: "direct",
                name: "a",
                leaderAgentId: "assistant",
                agentIds: ["assistant"],
                userIds: [],
              },
            }),
          );
          channelId = channel.id;
          await startWaitingRun();
        },
      ],
      [
        "approval.decide",
        async () => {
          await ok(api(owner, `/api/runs/${runId}/approvals/${callId}`, { body: { decision: "reject" } }));
          await waitForRun(["done", "error"]);
        },
      ],
      [undefined, startWaitingRun],
      [
        "approval.grant",
        async () => {
          await ok(
            api(owner, `/api/runs/${runId}/approvals/${callId}`, {
              body: { decision: "approve", always: true },
            }),
          );
          await waitForRun(["done", "error"]);
        },
      ],
      [
        "approval.grant_revoke",
        async () => {
          await ok(
            api(owner, `/api/channels/${channelId}/approvals/assistant/current_time`, { method: "DELETE" }),
          );
        },
      ],
      [
        "export.agent",
        async () => {
          template = await ok(api(owner, "/api/agents/assistant/export"));
        },
      ],
      [
        "export.team",
        async () => {
          const group = await ok<{ id: string }>(
            api(owner, "/api/channels", {
              body: { kind: "group", name: "Team", agentIds: ["assistant"], userIds: [] },
            }),
          );
          await ok(api(owner, `/api/channels/${group.id}/export`));
        },
      ],
      [
        "import.template",
        async () => {
          await ok(api(owner, "/api/templates/import", { body: template }));
        },
      ],
      [
        "import.memory",
        async () => {
          await ok(
            api(owner, "/api/memory/import", {
              body: { memories: [{ text: "Alice drinks green tea", type: "semantic" }] },
            }),
          );
          const listed = await ok<Array<{ id: string }>>(api(owner, "/api/memory"));
          memoryId = listed[0]?.id ?? "";
        },
      ],
      [
        "memory.delete",
        async () => {
          await ok(api(owner, `/api/memory/${memoryId}`, { method: "DELETE" }));
        },
      ],
      [
        "knowledge.create",
        async () => {
          await ok(api(owner, "/api/kb", { body: { name: "handbook" } }));
        },
      ],
      [
        "knowledge.delete",
        async () => {
          await ok(api(owner, "/api/kb/handbook", { method: "DELETE" }));
        },
      ],
      [
        "chat.delete",
        async () => {
          await ok(api(owner, `/api/channels/${channelId}`, { method: "DELETE" }));
        },
      ],
      [
        "settings.audit_retention",
        async () => {
          await ok(api(owner, "/api/audit/settings", { method: "PUT", body: { retentionDays: 90 } }));
        },
      ],
      [
        "export.audit",
        async () => {
          const res = await api(owner, "/api/audit/export?format=csv");
          expect(res.status).toBe(200);
          expect(res.headers.get("content-type")).toContain("text/csv");
          const csv = await res.text();
          expect(csv.split("\r\n")[0]).toContain("seq,time,actor_id");
          expect(csv).toContain("provider.key_set");
        },
      ],
      [
        "budget.create",
        async () => {
          const created = await ok<{ id: string }>(
            api(owner, "/api/budgets", {
              body: { scope: "person", scopeId: memberId, period: "day", unit: "usd", hardLimit: 1 },
            }),
          );
          budgetId = created.id;
        },
      ],
      [
        "budget.update",
        async () => {
          await ok(
            api(owner, `/api/budgets/${budgetId}`, {
              method: "PUT",
              body: { scope: "person", scopeId: memberId, period: "day", unit: "usd", hardLimit: 2 },
            }),
          );
        },
      ],
      [
        "budget.delete",
        async () => {
          await ok(api(owner, `/api/budgets/${budgetId}`, { method: "DELETE" }));
        },
      ],
      [
        "auth.sign_out",
        async () => {
          await ok(api(member, "/api/auth/logout", { method: "POST" }));
        },
      ],
      [
        "account.disable",
        async () => {
          await ok(api(owner, `/api/users/${memberId}`, { method: "PATCH", body: { disabled: true } }));
        },
      ],
      [
        "account.enable",
        async () => {
          await ok(api(owner, `/api/users/${memberId}`, { method: "PATCH", body: { disabled: false } }));
        },
      ],
      [
        "account.delete",
        async () => {
          await ok(api(owner, `/api/users/${memberId}`, { method: "DELETE" }));
        },
      ],
    ];

    let lastSeq = 0;
    const seen: string[] = [];
    for (const [action, step] of steps) {
      await step();
      const entries = (await ok<{ entries: Entry[] }>(api(owner, "/api/audit?limit=50"))).entries.filter(
        (e) => e.seq > lastSeq,
      );
      expect({ action, recorded: entries.map((e) => e.action) }).toEqual({
        action,
        recorded: action ? [action] : [],
      });
      const entry = entries[0];
      if (!entry) continue;
      lastSeq = entry.seq;
      seen.push(entry.action);
      expect(entry.ip).toBe("127.0.0.1");
      expect(entry.userAgent).toBe(USER_AGENT);
      expect(entry.instance).toBeTruthy();
      expect(entry.actorName).toBe(
        action === "auth.sign_in" && seen.filter((a) => a === "auth.sign_in").length === 2
          ? "mia"
          : entry.action === "auth.sign_out"
            ? "mia"
            : "alice",
      );
    }

    // Who, before and after, on a few of them.
    const all = (await ok<{ entries: Entry[] }>(api(owner, "/api/audit?limit=1000"))).entries;
    const byAction = (a: string) => all.filter((e) => e.action === a);
    expect(byAction("account.role_change")[0]).toMatchObject({
      target: memberId,
      before: { username: "mia", role: "member" },
      after: { role: "admin" },
    });
    expect(byAction("budget.update")[0]).toMatchObject({
      target: budgetId,
      before: { hardLimit: 1 },
      after: { hardLimit: 2 },
    });
    expect(byAction("account.disable")[0]).toMatchObject({ target: memberId, after: { disabled: true } });
    expect(byAction("auth.sign_in_failed")[0]).toMatchObject({ actorId: null, actorName: "alice" });
    expect(byAction("provider.key_set")[0]).toMatchObject({
      target: "openai",
      after: { apiKey: "[redacted]" },
    });
    expect(byAction("settings.audit_retention")[0]).toMatchObject({
      before: { retentionDays: 365 },
      after: { retentionDays: 90 },
    });

    // Filters: by actor, by action prefix, by time.
    const mias = (await ok<{ entries: Entry[] }>(api(owner, "/api/audit?actor=mia"))).entries;
    expect(new Set(mias.map((e) => e.action))).toEqual(new Set(["auth.sign_in", "auth.sign_out"]));
    const auth = (await ok<{ entries: Entry[] }>(api(owner, "/api/audit?action=auth"))).entries;
    expect(auth.map((e) => e.action).sort()).toEqual([
      "auth.sign_in",
      "auth.sign_in",
      "auth.sign_in_failed",
      "auth.sign_out",
    ]);
    expect(
      (await ok<{ entries: Entry[] }>(api(owner, `/api/audit?from=${Date.now() + 60_000}`))).entries,
    ).toEqual([]);
    const jsonl = await (await api(owner, "/api/audit/export?format=jsonl&action=account")).text();
    expect(
      jsonl
        .trim()
        .split("\n")
        .map((l) => (JSON.parse(l) as Entry).action),
    ).toEqual([
      "account.delete",
      "account.enable",
      "account.disable",
      "account.password_reset",
      "account.role_change",
      "account.create",
      "account.password_change",
      "account.create",
    ]);

    // Admins only.
    expect((await api(member, "/api/audit")).status).toBe(401); // signed out above
    // No secret anywhere in the table.
    const dump = JSON.stringify(s.db.prepare("SELECT * FROM audit_log").all());
    for (const secret of [
      PROVIDER_KEY,
      NEW_PROVIDER_KEY,
      OWNER_PASSWORD,
      NEW_OWNER_PASSWORD,
      MEMBER_PASSWORD,
      RESET_PASSWORD,
      MCP_SECRET,
      REMOTE_TOKEN,
      CONNECTOR_SECRET,
      HTTP_TOOL_SECRET,
      createdToken,
      owner.token,
      member.token,
      owner.csrfToken,
    ]) {
      expect(secret.length).toBeGreaterThan(8);
      expect(dump).not.toContain(secret);
    }
    expect(s.problems().filter((l) => l.includes("audit"))).toEqual([]);

    // The real CLI over the same file: whole, then an edited entry, then a deleted one.
    const env = cleanEnv({ DIMSUM_HOME: s.home });
    const whole = await runCli(["audit", "verify"], { env });
    const count = (s.db.prepare("SELECT count(*) AS n FROM audit_log").get() as { n: number }).n;
    expect(count).toBe(all.length + 1); // and the JSON Lines export above
    expect(whole.stdout).toContain(`${count} entries verified`);
    expect(whole.code).toBe(0);

    const victim = byAction("provider.key_set")[0]!.seq;
    s.db.prepare("UPDATE audit_log SET actor_name = 'mallory' WHERE seq = ?").run(victim);
    const edited = await runCli(["audit", "verify", "--json"], { env });
    expect(edited.code).toBe(1);
    expect(JSON.parse(edited.stdout)).toMatchObject({
      ok: false,
      problems: [{ seq: victim, problem: "edited" }],
    });

    s.db.prepare("DELETE FROM audit_log WHERE seq = ?").run(victim + 2);
    const deleted = await runCli(["audit", "verify"], { env });
    expect(deleted.code).toBe(1);
    expect(deleted.stdout).toContain(`entry ${victim} was changed after it was written`);
    expect(deleted.stdout).toContain(`entry ${victim + 2} was deleted`);

    // The last entry removed: the head still knows it.
    s.db.prepare("DELETE FROM audit_log WHERE seq = (SELECT max(seq) FROM audit_log)").run();
    const tail = await runCli(["audit", "verify"], { env });
    expect(tail.code).toBe(1);
    expect(tail.stdout).toMatch(/entries \d+-\d+ were deleted/);
  }, 120_000);
});
