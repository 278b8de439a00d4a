/**
 * MCP Apps in the web chat, in real headless Chromium against a real server whose agent uses the
 * official ext-apps example "basic-server-vanillajs" as a stdio MCP server: the agent's get-time call
 * renders the app under its tool card in a sandboxed iframe, with the call's result delivered through
 * the MCP Apps host protocol; the frame has an opaque origin (no cookies, no reach into the page, no
 * requests to the server); the app's own "Get Server Time" button calls the tool through the server,
 * and with the tool on the agent's ask-first list the call waits for the person's approval (declined,
 * the app is told); after a reload the app renders again. Screenshots at 1440 and 390 px in
 * `test-artifacts/e2e/mcp-apps/`.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Frame, Page } from "playwright-core";
import { describe, expect, it } from "vitest";
import { loadMcpConfig } from "../../src/mcp/config.js";
import { McpServerPool } from "../../src/mcp/server-pool.js";
import type { FakeTurn, RecordedRequest } from "../../src/testing/fake-llm-types.js";
import { BASIC_APP } from "../mcp/helpers.js";
import { animationsSettled, flow, type PageLog, pageApi, resetArtifacts, screenshot } from "./browser.js";
import type { E2eServer } from "./e2e-server.js";
import { e2eStack, setUpOwner } from "./stack.js";

const PASSWORD = "owner-password-1";
const WIDE = { width: 1440, height: 900 };
const PHONE = { width: 390, height: 844 };
const SHOTS = "mcp-apps";
const ISO_TIME = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

/** The agent calls the app's tool, then says so once it has the result. */
const turn = (request: RecordedRequest): FakeTurn =>
  JSON.stringify(request.body).includes('"role":"tool"')
    ? { text: "Here is the clock app." }
    : { toolCalls: [{ name: "clock_get-time", args: {} }] };

let server: E2eServer;
let page: Page;
let log: PageLog;

const byTest = (id: string) => page.getByTestId(id);
const step = (name: string, body: () => Promise<void>) => flow(page, log, server.logLines, name, body);
const until = <T>(read: () => Promise<T>) => expect.poll(read, { timeout: 15_000, interval: 50 });

async function api(method: "GET" | "POST" | "PATCH", path: string, data?: unknown): Promise<unknown> {
  return pageApi(page, server.url, method, path, data);
}

/** The app's document inside the chat's iframe. */
async function appFrame(): Promise<Frame> {
  await page.locator('[data-testid="mcp-app"][data-connected="true"]').waitFor();
  let found: Frame | null = null;
  await until(async () => {
    found = (await byTest("mcp-app-frame").elementHandle())
      ? await (await byTest("mcp-app-frame").elementHandle())!.contentFrame()
      : null;
    return found?.url().includes("/mcp-apps/") ?? false;
  }).toBe(true);
  return found!;
}

const serverTime = async (frame: Frame) => ((await frame.locator("#server-time").textContent()) ?? "").trim();

async function resize(size: { width: number; height: number }): Promise<void> {
  await page.setViewportSize(size);
  await animationsSettled(page);
}

/** Both sizes, `focus` (default: the app) scrolled into view; the phone layout must not scroll sideways. */
async function shots(name: string, focus = "mcp-app"): Promise<void> {
  for (const [size, suffix] of [
    [WIDE, "1440"],
    [PHONE, "390"],
  ] as const) {
    await resize(size);
    await byTest(focus).scrollIntoViewIfNeeded();
    if (suffix === "390") {
      const [scroll, client] = await page.evaluate(() => [
        document.documentElement.scrollWidth,
        document.documentElement.clientWidth,
      ]);
      expect(scroll).toBeLessThanOrEqual(client);
    }
    await screenshot(page, `${SHOTS}/${name}-${suffix}`);
  }
  await resize(WIDE);
}

e2eStack(
  {
    before: () => resetArtifacts(SHOTS),
    llm: { defaultTurn: turn },
    server: {
      mcp: (home) => {
        writeFileSync(
          join(home, "mcp.json"),
          JSON.stringify({
            mcpServers: { clock: { command: process.execPath, args: [BASIC_APP, "--stdio"] } },
          }),
        );
        const pool = new McpServerPool(loadMcpConfig({ home, cwd: home, env: {} }), {});
        void pool.startAll();
        return pool;
      },
    },
  },
  (stack) => {
    ({ server, page, log } = stack);
  },
);

describe("MCP Apps in the web chat", () => {
  it("renders the app of a tool call sandboxed, and runs its tool calls through the server's approvals", async () => {
    let first = "";
    await step(`${SHOTS}/01-app`, async () => {
      await resize(WIDE);
      await setUpOwner(page, server.url, PASSWORD);
      await byTest("home-page").waitFor();
      const channel = (await api("POST", "/api/channels", {
        kind: "direct",
        name: "Clock",
        leaderAgentId: "assistant",
        agentIds: ["assistant"],
        userIds: [],
      })) as { id: string };
      await page.goto(`${server.url}/c/${channel.id}`);
      await byTest("composer-input").fill("What time is it on the server?");
      await byTest("composer-send").click();
      const frame = await appFrame();
      // The tool's result reached the app through the host protocol.
      await until(() => serverTime(frame)).toMatch(ISO_TIME);
      first = await serverTime(frame);
      await until(() => page.getByTestId("message-text").last().textContent()).toContain(
        "Here is the clock app.",
      );
      // The app asked for its size; the frame follows it (not the first guess of 180 px).
      await until(async () => (await byTest("mcp-app-frame").boundingBox())?.height ?? 0).not.toBe(180);
      await shots("01-app");
    });

    await step(`${SHOTS}/02-sandbox`, async () => {
      const frame = await appFrame();
      expect(await byTest("mcp-app-frame").getAttribute("sandbox")).toBe("allow-scripts");
      const probe = await frame.evaluate(async () => {
        const attempt = (read: () => unknown) => {
          try {
            return `read ${String(read())}`;
          } catch (err) {
            return `blocked (${(err as Error).name})`;
          }
        };
        let fetched: string;
        try {
          const res = await fetch("/api/auth/me");
          fetched = `fetched ${res.status}`;
        } catch {
          fetched = "blocked";
        }
        return {
          origin: self.origin,
          cookie: attempt(() => document.cookie),
          parent: attempt(() => window.parent.document.title),
          storage: attempt(() => localStorage.length),
          fetched,
        };
      });
      expect(probe).toEqual({
        origin: "null",
        cookie: "blocked (SecurityError)",
        parent: "blocked (SecurityError)",
        storage: "blocked (SecurityError)",
        fetched: "blocked",
      });
    });

    await step(`${SHOTS}/03-app-call`, async () => {
      const frame = await appFrame();
      await frame.getByRole("button", { name: "Get Server Time" }).click();
      await until(() => serverTime(frame)).not.toBe(first);
      expect(await serverTime(frame)).toMatch(ISO_TIME);
    });

    await step(`${SHOTS}/04-ask-first`, async () => {
      await api("PATCH", "/api/agents/assistant", { askFirst: ["clock_*"] });
      const frame = await appFrame();
      const before = await serverTime(frame);
      await frame.getByRole("button", { name: "Get Server Time" }).click();
      await byTest("mcp-app-approval").waitFor();
      expect(await byTest("mcp-app-approval").textContent()).toContain("clock_get-time");
      // The app's call waits: nothing reached it yet.
      expect(await serverTime(frame)).toBe(before);
      await shots("04-ask-first", "mcp-app-approval");
      await byTest("mcp-app-decline").click();
      await until(() => serverTime(frame)).toBe("[ERROR]");
      expect(await byTest("mcp-app-approval").count()).toBe(0);
      await frame.getByRole("button", { name: "Get Server Time" }).click();
      await byTest("mcp-app-approve").click();
      await until(() => serverTime(frame)).toMatch(ISO_TIME);
      expect(await byTest("mcp-app-approval").count()).toBe(0);
    });

    await step(`${SHOTS}/05-reload`, async () => {
      await page.reload();
      const frame = await appFrame();
      await until(() => serverTime(frame)).toBe(first);
      await shots("05-reload");
      expect(log.uncaught()).toEqual([]);
    });
  }, 120_000);
});
