/** The connector API (roles, validation, write-only secrets), the manage_channel tool, and helpers. */
import { describe, expect, it } from "vitest";
import { createManageChannelTool } from "../../src/connectors/manage-channel-tool.js";
import { backoffDelayMs } from "../../src/connectors/outbox-worker.js";
import { checkSignature, signedHeaders } from "../../src/connectors/signatures.js";
import { splitText } from "../../src/connectors/split-text.js";
import type { ConnectorView } from "../../src/connectors/types.js";
import type { Actor } from "../../src/team/types.js";
import type { RecordedRequest } from "../../src/testing/fake-llm-server.js";
import type { ToolContext } from "../../src/tools/types.js";
import { call, login } from "../server/helpers.js";
import { lastToolResult } from "../team/harness.js";
import { eventually, startConnectorServer } from "./harness.js";

const webhookInput = {
  type: "webhook",
  name: "Bridge",
  agentId: "assistant",
  settings: { outboundUrl: "https://example.com/hook" },
  secrets: { secret: "a-long-enough-shared-secret" },
};

describe("connector API", () => {
  it("is for owners and admins only", async () => {
    const server = await startConnectorServer();
    expect((await fetch(`${server.url}/api/connectors`)).status).toBe(401);
    const res = await call(server.url, "/api/users", {
      session: server.owner,
      as: "bearer",
      body: { username: "mia", password: "member-password-1", role: "member" },
    });
    expect(res.status).toBe(201);
    const member = await login(server.url, "mia", "member-password-1");
    expect((await call(server.url, "/api/connectors", { session: member, as: "bearer" })).status).toBe(403);
    expect(
      (await call(server.url, "/api/connectors", { session: member, as: "bearer", body: webhookInput }))
        .status,
    ).toBe(403);
  });

  it("keeps secrets write-only and sealed at rest", async () => {
    const server = await startConnectorServer();
    const created = await server.createConnector(webhookInput);
    expect(created.secrets).toEqual({ secret: { set: true, preview: "a-l…cret" } });
    const listed = await (await server.api("/api/connectors")).text();
    expect(listed).not.toContain("a-long-enough-shared-secret");
    const row = server.db.prepare("SELECT secrets_enc FROM connectors WHERE id = ?").get(created.id) as {
      secrets_enc: string;
    };
    expect(row.secrets_enc).not.toContain("a-long-enough");
    expect(row.secrets_enc.startsWith("v1:")).toBe(true);

    // Changing another field keeps the secret; "" removes it; a missing secret blocks the start.
    const renamed = (await (
      await server.api(`/api/connectors/${created.id}`, { method: "PATCH", body: { name: "Renamed" } })
    ).json()) as ConnectorView;
    expect(renamed.secrets.secret?.set).toBe(true);
    const cleared = (await (
      await server.api(`/api/connectors/${created.id}`, {
        method: "PATCH",
        body: { secrets: { secret: "" } },
      })
    ).json()) as ConnectorView;
    expect(cleared.secrets.secret).toEqual({ set: false });
    const start = await server.api(`/api/connectors/${created.id}/start`, { method: "POST" });
    expect(start.status).toBe(400);
    expect(await start.text()).toContain("missing secrets: Shared secret");
  });

  it("validates type, agent, settings and secrets with messages naming the field", async () => {
    const server = await startConnectorServer();
    const bad = async (body: Record<string, unknown>) => {
      const res = await server.api("/api/connectors", { body });
      const parsed = (await res.json()) as { error?: { message?: string } };
      return { status: res.status, text: parsed.error?.message ?? "" };
    };
    expect((await bad({ ...webhookInput, type: "irc" })).status).toBe(400);
    expect(await bad({ ...webhookInput, agentId: "nobody" })).toMatchObject({ status: 404 });
    const noUrl = await bad({ ...webhookInput, settings: {} });
    expect(noUrl.status).toBe(400);
    expect(noUrl.text).toContain("outboundUrl");
    const shortSecret = await bad({ ...webhookInput, secrets: { secret: "short" } });
    expect(shortSecret.text).toContain("16 to 1024 characters");
    const unknownSecret = await bad({ ...webhookInput, secrets: { token: "x".repeat(20) } });
    expect(unknownSecret.text).toContain('no secret "token"');
    const hookWithoutUrl = await bad({
      type: "telegram",
      name: "T",
      agentId: "assistant",
      settings: { mode: "webhook" },
    });
    expect(hookWithoutUrl.text).toContain("publicUrl");
    const userMode = await bad({ ...webhookInput, userMode: "user", userId: "ghost" });
    expect(userMode.text).toContain("ghost");
  });

  it("deletes a connector with its outbox", async () => {
    const server = await startConnectorServer();
    const created = await server.createConnector(webhookInput);
    server.db
      .prepare(
        "INSERT INTO connector_outbox (connector_id, chat_id, payload_json, next_attempt_at, created_at) VALUES (?, 'c', '{}', 0, 0)",
      )
      .run(created.id);
    expect((await server.api(`/api/connectors/${created.id}`, { method: "DELETE" })).status).toBe(204);
    expect((await server.api(`/api/connectors/${created.id}`)).status).toBe(404);
    expect(server.db.prepare("SELECT count(*) AS n FROM connector_outbox").get()).toEqual({ n: 0 });
  });
});

describe("manage_channel tool", () => {
  const ctx = { signal: new AbortController().signal } as ToolContext;

  it("lists, creates and reports connectors for an admin, never handling secrets", async () => {
    const server = await startConnectorServer();
    const tool = createManageChannelTool({ connectors: server.connectors, actor: server.ownerActor });
    const run = async (args: Record<string, unknown>) => tool.execute(tool.parameters.parse(args), ctx);
    const created = await run({
      action: "create",
      type: "webhook",
      name: "From the agent",
      agentId: "assistant",
      settings: { outboundUrl: "https://example.com/in" },
    });
    const summary = JSON.parse(String(created)) as { id: string; missingSecrets: string[]; state: string };
    expect(summary).toMatchObject({ missingSecrets: ["secret"], state: "stopped" });
    expect(String(await run({ action: "list" }))).toContain("From the agent");
    const start = await run({ action: "start", id: summary.id });
    expect(start).toMatchObject({ isError: true });
    expect(JSON.stringify(start)).toContain("missing secrets");
    expect(tool.parameters.safeParse({ action: "create", secrets: { secret: "x" } }).success).toBe(true);
    expect(
      Object.keys(tool.parameters.parse({ action: "list", secrets: { a: "b" } }) as object),
    ).not.toContain("secrets");
  });

  it("creates DingTalk and WeCom connectors with their defaults, and names bad values as the console does", async () => {
    const server = await startConnectorServer();
    const tool = createManageChannelTool({ connectors: server.connectors, actor: server.ownerActor });
    const run = async (args: Record<string, unknown>) => tool.execute(tool.parameters.parse(args), ctx);
    const dingtalk = JSON.parse(
      String(
        await run({
          action: "create",
          type: "dingtalk",
          name: "DT",
          agentId: "assistant",
          settings: { clientId: "dingabc" },
        }),
      ),
    ) as { settings: Record<string, unknown>; missingSecrets: string[] };
    expect(dingtalk.settings).toMatchObject({ mode: "stream", baseUrl: "https://api.dingtalk.com" });
    expect(dingtalk.missingSecrets).toEqual(["clientSecret"]);
    const wecom = JSON.parse(
      String(
        await run({
          action: "create",
          type: "wecom",
          name: "WC",
          agentId: "assistant",
          settings: { corpId: "wwcorp", appAgentId: 1000002 },
        }),
      ),
    ) as { settings: Record<string, unknown>; missingSecrets: string[] };
    expect(wecom.settings).toMatchObject({
      appAgentId: 1000002,
      format: "markdown",
      baseUrl: "https://qyapi.weixin.qq.com",
    });
    expect(wecom.missingSecrets).toEqual(["token", "encodingAESKey", "corpSecret"]);
    const feishu = JSON.parse(
      String(
        await run({
          action: "create",
          type: "feishu",
          name: "FS",
          agentId: "assistant",
          settings: { appId: "cli_0123456789abcdef" },
        }),
      ),
    ) as { settings: Record<string, unknown>; missingSecrets: string[] };
    // A new Feishu connector uses the long connection, which needs only the App Secret to start.
    expect(feishu.settings.mode).toBe("long-connection");

    const bad = async (body: Record<string, unknown>) => {
      const res = await server.api("/api/connectors", { body: { name: "x", agentId: "assistant", ...body } });
      return {
        status: res.status,
        text: ((await res.json()) as { error?: { message?: string } }).error?.message ?? "",
      };
    };
    const token = await bad({ type: "telegram", secrets: { botToken: "not-a-token" } });
    expect(token.status).toBe(400);
    expect(token.text).toContain("The Telegram Bot token you entered is not valid");
    expect(token.text).not.toContain('"botToken"');
    const aesKey = await bad({
      type: "wecom",
      settings: { corpId: "ww", appAgentId: 1 },
      secrets: { encodingAESKey: "short" },
    });
    expect(aesKey.text).toContain(
      "EncodingAESKey you entered is not valid: it must be 43 letters and digits",
    );
    const agentId = await bad({ type: "wecom", settings: { corpId: "ww", appAgentId: "abc" } });
    expect(agentId.text).toContain("AgentId (appAgentId)");
  });

  it("is offered only to agents that name it, and acts for the person who asked", async () => {
    const server = await startConnectorServer();
    const { team, ownerActor, llm } = server;
    await server.createConnector(webhookInput);
    await team.createAgent(ownerActor, { id: "ops", name: "Ops", toolsAllow: ["manage_channel"] });
    const echo = (request: RecordedRequest) => ({ text: `tool said: ${lastToolResult(request)}` });
    const askOps = async (actor: Actor) => {
      const channel = await team.createChannel(actor, {
        kind: "direct",
        name: "ops",
        agentIds: ["ops"],
        userIds: [],
      });
      llm.enqueue({ toolCalls: [{ name: "manage_channel", args: { action: "list" } }] }, echo);
      const posted = await team.postMessage(actor, channel.id, "which connectors are there?");
      await eventually(
        async () => (await team.getRun(actor, posted.runs[0]?.id ?? "")).status === "done",
        "the run",
      );
      return (await team.listMessages(actor, channel.id)).at(-1)?.text ?? "";
    };
    expect(await askOps(ownerActor)).toContain('"name": "Bridge"');
    const created = await server.api("/api/users", {
      body: { username: "mia", password: "member-password-1", role: "member" },
    });
    const member = (await created.json()) as { id: string };
    expect(await askOps({ userId: member.id, role: "member" })).toContain("Only owners and admins");

    // The assistant's allow list does not name it, so its requests carry no such tool.
    llm.reset();
    const direct = await team.createChannel(ownerActor, {
      kind: "direct",
      name: "a",
      agentIds: ["assistant"],
      userIds: [],
    });
    await team.postMessage(ownerActor, direct.id, "hi");
    await eventually(() => llm.requests.length > 0, "the assistant's request");
    const body = llm.requests[0]?.body as { tools?: Array<{ function: { name: string } }> } | undefined;
    const tools = body?.tools ?? [];
    expect(tools.map((t) => t.function.name)).not.toContain("manage_channel");
    expect(tools.length).toBeGreaterThan(0);
  });
});

describe("connector helpers", () => {
  it("splits on paragraph, line and word breaks within the limit, losing nothing", () => {
    const text = `${"alpha ".repeat(30)}\n\n${"beta ".repeat(30)}\nend`;
    const pieces = splitText(text, { max: 100, unit: "utf16" });
    expect(pieces.every((p) => p.length <= 100)).toBe(true);
    expect(pieces.join(" ").replace(/\s+/g, " ")).toBe(text.replace(/\s+/g, " ").trim());
    expect(splitText("x".repeat(250), { max: 100, unit: "utf16" }).map((p) => p.length)).toEqual([
      100, 100, 50,
    ]);
  });

  it("counts UTF-8 bytes where the platform does, never cutting a character", () => {
    const text = "你好😀".repeat(50);
    const pieces = splitText(text, { max: 64, unit: "utf8" });
    expect(pieces.every((p) => Buffer.byteLength(p) <= 64)).toBe(true);
    expect(pieces.join("")).toBe(text);
    const emoji = splitText("😀".repeat(10), { max: 5, unit: "utf16" });
    expect(emoji.join("")).toBe("😀".repeat(10));
    expect(emoji.every((p) => !/[\uD800-\uDBFF]$/.test(p))).toBe(true);
  });

  it("backs off exponentially up to the cap", () => {
    const policy = { baseDelayMs: 100, maxDelayMs: 1000 };
    const high = (attempt: number) => backoffDelayMs(attempt, policy, () => 1);
    const low = (attempt: number) => backoffDelayMs(attempt, policy, () => 0);
    expect([1, 2, 3, 4, 5].map(high)).toEqual([100, 200, 400, 800, 1000]);
    expect([1, 2, 3].map(low)).toEqual([50, 100, 200]);
  });

  it("checks webhook signatures within five minutes of their timestamp", () => {
    const now = 1_700_000_000_000;
    const headers = signedHeaders("s3cret", "{}", now);
    expect(checkSignature("s3cret", headers, "{}", now + 60_000)).toBeUndefined();
    expect(checkSignature("s3cret", headers, "{}", now + 6 * 60_000)).toContain("5-minute window");
    expect(checkSignature("other", headers, "{}", now)).toBe("signature mismatch");
    expect(checkSignature("s3cret", {}, "{}", now)).toContain("missing");
  });
});
