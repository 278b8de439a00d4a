/**
 * MCP in the web chat, in real headless Chromium against a real server whose agents use a real
 * stdio MCP server (SDK-built): the server's request for input during a run shows as an inline
 * form in the run that asked; a wrong answer is caught, the filled form is accepted, and the tool's
 * result with the answer shows in the chat; a URL-mode request shows its link and "I'm done"
 * accepts it. `/` in the composer offers the server's prompt and puts its text in. A server's request
 * to use the agent's model (sampling) shows as an approval card with what it would send: approved,
 * the agent's model answers it; declined, the server is refused. A called agent's (call_agent) request
 * for input shows in the answer of the run the person started.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Locator, Page } from "playwright-core";
import { describe, expect, it } from "vitest";
import { loadMcpConfig } from "../../src/mcp/config.js";
import { McpServerPool } from "../../src/mcp/server-pool.js";
import type { FakeTurn, RecordedRequest } from "../../src/testing/fake-llm-types.js";
import { FIXTURES } from "../mcp/helpers.js";
import { AgentScripts, lastUserText } from "../team/harness.js";
import { animationsSettled, flow, type PageLog, pageApi, resetArtifacts, screenshot } from "./browser.js";
import type { E2eServer } from "./e2e-server.js";
import { e2eStack, setUpOwner } from "./stack.js";

const PASSWORD = "owner-password-1";
const WIDE = { width: 1440, height: 900 };
const PHONE = { width: 390, height: 844 };
const SHOTS = "mcp-web";

const scripts = new AgentScripts();
const HAIKU = "steam over bamboo";
/** The server's sampling request (no agent's system prompt) gets the haiku; agents their scripts. */
const turn = (request: RecordedRequest): FakeTurn =>
  lastUserText(request) === "Write a haiku about dumplings." ? { text: HAIKU } : scripts.turn(request);
let server: E2eServer;
let page: Page;
let log: PageLog;

const byTest = (id: string) => page.getByTestId(id);
const step = (name: string, body: () => Promise<void>) => flow(page, log, server.logLines, name, body);
const text = async (locator: Locator) => ((await locator.textContent()) ?? "").replace(/\s+/g, " ").trim();
const until = <T>(read: () => Promise<T>) => expect.poll(read, { timeout: 10_000, interval: 50 });

/** The tool's latest result, as the model saw it, said back. */
function sayToolResult(request: RecordedRequest): FakeTurn {
  const found = [
    ...JSON.stringify(request.body).matchAll(
      /hello [A-Za-z]+, age \d+|no name \(\w+\)|link (?:accept|decline|cancel)|haiku: [a-z ]+|User rejected sampling request/g,
    ),
  ];
  return { text: `The tool said: ${found.at(-1)?.[0] ?? "nothing"}.` };
}

async function api(method: "GET" | "POST", path: string, data?: unknown): Promise<unknown> {
  return pageApi(page, server.url, method, path, data);
}

async function resize(size: { width: number; height: number }): Promise<void> {
  await page.setViewportSize(size);
  // The running run's indicator loops forever; wait only for the layout's transitions.
  await animationsSettled(page);
}

/** Both sizes; the phone layout must not scroll sideways. */
async function shots(name: string): Promise<void> {
  await resize(WIDE);
  await screenshot(page, `${SHOTS}/${name}-1440`);
  await resize(PHONE);
  // A reader at the bottom stays there (the list re-pins on new content, not on a resize).
  await page.evaluate(() => {
    const list = document.querySelector('[data-testid="message-list"]');
    if (list) list.scrollTop = list.scrollHeight;
  });
  const [scroll, client] = await page.evaluate(() => [
    document.documentElement.scrollWidth,
    document.documentElement.clientWidth,
  ]);
  expect(scroll).toBeLessThanOrEqual(client);
  await screenshot(page, `${SHOTS}/${name}-390`);
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
            mcpServers: {
              feat: { command: process.execPath, args: [join(FIXTURES, "client-features-server.mjs")] },
              web: { command: process.execPath, args: [join(FIXTURES, "url-elicitation-server.mjs")] },
            },
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

describe("MCP in the web chat", () => {
  it("asks for input inline: a wrong answer is caught, the filled form reaches the tool", async () => {
    await step(`${SHOTS}/01-asked`, async () => {
      await resize(WIDE);
      await setUpOwner(page, server.url, PASSWORD);
      await byTest("home-page").waitFor();
      const channel = (await api("POST", "/api/channels", {
        kind: "group",
        name: "Greetings",
        leaderAgentId: "assistant",
        agentIds: ["assistant"],
        userIds: [],
      })) as { id: string };
      await page.goto(`${server.url}/c/${channel.id}`);
      await byTest("composer-input").waitFor();

      scripts.add(
        "assistant",
        { text: "Let me ask you.", toolCalls: [{ name: "feat_ask_name", args: {} }] },
        sayToolResult,
      );
      await byTest("composer-input").fill("please greet me");
      await byTest("composer-send").click();
      const form = byTest("elicitation");
      await form.waitFor();
      expect(await text(byTest("elicitation-message"))).toBe("What should I call you?");
      expect(await text(form.locator(".elicit-from"))).toBe("🔌 feat asks you");
      // The default is filled in; the required name is empty.
      expect(await byTest("elicit-input-age").inputValue()).toBe("30");
      expect(await byTest("elicit-input-name").inputValue()).toBe("");
      await shots("01-asked");
    });

    await step(`${SHOTS}/02-invalid`, async () => {
      await byTest("elicit-input-name").fill("A");
      await byTest("elicitation-accept").click();
      await until(() => text(byTest("elicit-error"))).toBe("at least 2 characters");
      expect(await byTest("elicit-input-name").getAttribute("aria-invalid")).toBe("true");
      await shots("02-invalid");
    });

    await step(`${SHOTS}/03-answered`, async () => {
      await byTest("elicit-input-name").fill("Ada");
      await byTest("elicit-input-age").fill("36");
      await byTest("elicitation-accept").click();
      await until(() => byTest("elicitation").count()).toBe(0);
      await until(() => byTest("run-bubble").count()).toBe(0);
      const answer = page.locator('[data-testid="message"]').last();
      await until(() => text(answer.getByTestId("message-text").last())).toContain(
        "The tool said: hello Ada, age 36.",
      );
      const card = answer.locator('[data-testid="tool-card"][data-tool="feat_ask_name"]');
      await card.locator("summary").click();
      expect(await text(card)).toContain("hello Ada, age 36");
      expect(await text(card)).toContain('asked the person for input ("What should I call you?"): accept');
      await shots("03-answered");
    });

    await step(`${SHOTS}/07-url`, async () => {
      scripts.add("assistant", { toolCalls: [{ name: "web_link_account", args: {} }] }, sayToolResult);
      await byTest("composer-input").fill("link my account");
      await byTest("composer-send").click();
      const form = page.locator('[data-testid="elicitation"][data-mode="url"]');
      await form.waitFor();
      expect(await text(byTest("elicitation-message"))).toBe("Link your account to continue.");
      const open = byTest("elicitation-open");
      expect(await open.getAttribute("href")).toBe("https://accounts.example.test/link?session=abc");
      expect(await open.getAttribute("target")).toBe("_blank");
      expect(await text(open)).toBe("Open accounts.example.test ↗");
      await shots("07-url");
      // Not opened here (the test stays on 127.0.0.1): the person says they are done.
      await byTest("elicitation-accept").click();
      await until(() => byTest("run-bubble").count()).toBe(0);
      const answer = page.locator('[data-testid="message"]').last();
      await until(() => text(answer.getByTestId("message-text").last())).toBe("The tool said: link accept.");
    });
  }, 90_000);

  it("offers the MCP prompts under / in the composer and puts the picked one's text in", async () => {
    await step(`${SHOTS}/04-prompt-menu`, async () => {
      await byTest("composer-input").fill("/");
      await byTest("prompt-menu").waitFor();
      const option = page.locator('[data-testid="prompt-option"][data-prompt="feat:summarize"]');
      expect(await text(option)).toBe("/feat:summarize <topic> [style] — Summarise a topic in one line.");
      await byTest("composer-input").fill("/feat:sum");
      await until(() => byTest("prompt-option").count()).toBe(1);
      await shots("04-prompt-menu");
    });

    await step(`${SHOTS}/05-prompt-args`, async () => {
      await page.keyboard.press("Enter");
      await byTest("prompt-args").waitFor();
      // The required topic is asked for before the prompt is fetched.
      await byTest("prompt-insert").click();
      expect(await text(byTest("prompt-problem"))).toBe("Fill in topic.");
      await byTest("prompt-arg-topic").fill("dumplings");
      expect(await byTest("prompt-problem").count()).toBe(0);
      await byTest("prompt-arg-style").fill("cheerfully");
      await shots("05-prompt-args");
    });

    await step(`${SHOTS}/06-prompt-sent`, async () => {
      await byTest("prompt-insert").click();
      await until(() => byTest("composer-input").inputValue()).toBe(
        "Summarise dumplings in one line, cheerfully.",
      );
      expect(await byTest("prompt-args").count()).toBe(0);
      scripts.add("assistant", { text: "Dumplings: little parcels of joy." });
      await byTest("composer-send").click();
      const mine = page.locator('[data-testid="message"][data-author-type="user"]').last();
      await until(() => text(mine.getByTestId("message-text"))).toBe(
        "Summarise dumplings in one line, cheerfully.",
      );
      await until(() => byTest("run-bubble").count()).toBe(0);
      await shots("06-prompt-sent");
    });
  }, 60_000);

  it("asks before a server uses the agent's model: approved it answers, declined it is refused", async () => {
    const askForHaiku = async () => {
      scripts.add(
        "assistant",
        { text: "Let me ask for a haiku.", toolCalls: [{ name: "feat_sample_haiku", args: {} }] },
        sayToolResult,
      );
      await byTest("composer-input").fill("a haiku please");
      await byTest("composer-send").click();
      await byTest("sampling").waitFor();
    };
    const lastAnswer = async () => {
      await until(() => byTest("sampling").count()).toBe(0);
      await until(() => byTest("run-bubble").count()).toBe(0);
      return page.locator('[data-testid="message"]').last();
    };

    await step(`${SHOTS}/08-sampling-asked`, async () => {
      await askForHaiku();
      const card = byTest("sampling");
      expect(await text(card.locator(".elicit-from"))).toBe("🔌 feat asks to use the agent's model");
      expect(await text(byTest("sampling-meta"))).toBe("Model gpt-test · up to 100 tokens");
      const messages = byTest("sampling-message");
      expect(await messages.count()).toBe(1);
      expect(await messages.first().getAttribute("data-role")).toBe("user");
      expect(await text(messages.first().locator(".sampling-text"))).toBe("Write a haiku about dumplings.");
      await shots("08-sampling-asked");
    });

    await step(`${SHOTS}/09-sampling-approved`, async () => {
      await byTest("sampling-approve").click();
      const answer = await lastAnswer();
      await until(() => text(answer.getByTestId("message-text").last())).toBe(
        `The tool said: haiku: ${HAIKU}.`,
      );
      const card = answer.locator('[data-testid="tool-card"][data-tool="feat_sample_haiku"]');
      await card.locator("summary").click();
      expect(await text(card)).toContain(
        "served the server's sampling request with the agent's model (gpt-test), as the person approved",
      );
      await shots("09-sampling-approved");
    });

    await step(`${SHOTS}/10-sampling-declined`, async () => {
      await askForHaiku();
      await byTest("sampling-decline").click();
      const answer = await lastAnswer();
      await until(() => text(answer.getByTestId("message-text").last())).toBe(
        "The tool said: User rejected sampling request.",
      );
      const card = answer.locator('[data-testid="tool-card"][data-tool="feat_sample_haiku"]');
      await card.locator("summary").click();
      expect(await text(card)).toContain("refused the server's sampling request: the person chose decline");
      await shots("10-sampling-declined");
    });
  }, 60_000);

  it("shows a called agent's request for input in the answer the person is waiting for", async () => {
    await step(`${SHOTS}/11-nested-asked`, async () => {
      scripts.add(
        "assistant",
        {
          text: "Asking @coder.",
          toolCalls: [{ name: "call_agent", args: { agentId: "coder", task: "greet the person" } }],
        },
        sayToolResult,
      );
      scripts.add("coder", { toolCalls: [{ name: "feat_ask_name", args: {} }] }, sayToolResult);
      await byTest("composer-input").fill("have coder greet me");
      await byTest("composer-send").click();
      const bubble = byTest("run-bubble");
      await bubble.getByTestId("elicitation").waitFor();
      expect(await text(bubble.getByTestId("elicitation-message"))).toBe("What should I call you?");
      await shots("11-nested-asked");
    });

    await step(`${SHOTS}/12-nested-answered`, async () => {
      await byTest("elicit-input-name").fill("Grace");
      await byTest("elicitation-accept").click();
      await until(() => byTest("elicitation").count()).toBe(0);
      await until(() => byTest("run-bubble").count()).toBe(0);
      const answer = page.locator('[data-testid="message"]').last();
      await until(() => text(answer.getByTestId("message-text").last())).toBe(
        "The tool said: hello Grace, age 30.",
      );
      await shots("12-nested-answered");
    });
  }, 60_000);
});
