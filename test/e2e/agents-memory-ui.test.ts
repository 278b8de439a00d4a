/**
 * The agents page and the memory page end to end in real headless Chromium against a real server
 * (the `dimsum serve` wiring over a temp SQLite file) and the scripted fake LLM: the agent editor's
 * tool picker lists the catalogue grouped by source and saves `rag_query` (issue 12's acceptance);
 * invalid fields are highlighted and the error notice goes once a save succeeds; the model picker
 * offers the catalogue and the provider's list; a memory the agent wrote in a chat shows on the
 * memory page, where it is edited and forgotten; list and editor sit side by side at 1440 px and
 * stack at 390 px without sideways scrolling. Screenshots at 1440×900 and 390×844.
 */
import type { Locator, Page } from "playwright-core";
import { describe, expect, it } from "vitest";
import type { CatalogueEntry } from "../../src/capabilities/assembly.js";
import type { CoreBlock, MemoryRecord } from "../../src/memory/types.js";
import type { AgentRecord, ChannelRecord, PostResult, TeamRun } from "../../src/team/types.js";
import type { FakeLlmServer } from "../../src/testing/fake-llm-server.js";
import { flow, type PageLog, pageApi, resetArtifacts, screenshot, sidewaysOverflow } from "./browser.js";
import type { E2eServer } from "./e2e-server.js";
import { e2eStack, setUpOwner } from "./stack.js";

const FLOW_TIMEOUT_MS = 40_000;
const PASSWORD = "owner-password-1";
const SHOTS = "agents";
const WIDE = { width: 1440, height: 900 };
const PHONE = { width: 390, height: 844 };
const FACT = "Prefers oolong tea over coffee";
const EDITED = "Prefers green tea over coffee, never after 6 pm";
const CORE_NOTE = "Name: Sam. Works on the dim sum menu.";

let llm: FakeLlmServer;
let server: E2eServer;
let page: Page;
let log: PageLog;
let ownerId = "";

const byTest = (id: string) => page.getByTestId(id);
const step = (name: string, body: () => Promise<void>) =>
  flow(page, log, server.logLines, `${SHOTS}/${name}`, body);
const text = (locator: Locator) => async () => ((await locator.textContent()) ?? "").trim();
const until = <T>(read: () => Promise<T>) => expect.poll(read, { timeout: 10_000, interval: 50 });

async function apiGet<T>(path: string): Promise<T> {
  const res = await page.request.get(server.url + path);
  const body = await res.text();
  if (res.status() !== 200) throw new Error(`GET ${path}: ${res.status()} ${body}`);
  return JSON.parse(body) as T;
}

async function apiPost<T>(path: string, data: unknown): Promise<T> {
  return pageApi<T>(page, server.url, "POST", path, data);
}

async function box(locator: Locator): Promise<{ x: number; y: number; width: number; height: number }> {
  const found = await locator.boundingBox();
  if (!found) throw new Error("element is not visible");
  return found;
}

/** The computed colour of a CSS variable, as the browser resolves it (e.g. `rgb(201, 42, 42)`). */
async function cssColor(variable: string): Promise<string> {
  return page.evaluate((name) => {
    const probe = document.createElement("span");
    probe.style.color = `var(${name})`;
    document.body.append(probe);
    const color = getComputedStyle(probe).color;
    probe.remove();
    return color;
  }, variable);
}

const errorNotices = () => page.locator('[data-testid="notice"][role="alert"]');

e2eStack(
  { before: () => resetArtifacts(SHOTS), llm: { models: ["gpt-test", "gpt-4o-mini"] } },
  async (stack) => {
    ({ llm, server, page, log } = stack);
    await page.setViewportSize(WIDE);
  },
);

describe("agents and memory pages in headless Chromium", () => {
  it(
    "highlights invalid fields, keeps the editor's width while typing, and clears the error once saved",
    async () => {
      await step("01-invalid-fields", async () => {
        await setUpOwner(page, server.url, PASSWORD);
        await byTest("app-shell").waitFor();
        const me = await page.request.get(`${server.url}/api/auth/me`);
        ownerId = ((await me.json()) as { user: { id: string } }).user.id;

        await byTest("nav-agents").click();
        await byTest("agent-new").click();
        await byTest("agent-form").waitFor();
        const editor = byTest("agent-editor");
        const before = (await box(editor)).width;
        await byTest("agent-id").fill("Bad Id");
        await byTest("agent-name").fill(
          "A name that is quite long for an agent, to see the editor keep its width",
        );
        expect((await box(editor)).width).toBe(before);
        // The editor takes the room beside the list, not the width of its content.
        expect(before).toBeGreaterThan(700);
        await byTest("agent-name").fill("");
        await byTest("agent-save").click();

        await errorNotices().filter({ hasText: "Fix the highlighted fields first." }).waitFor();
        const danger = await cssColor("--danger");
        for (const key of ["id", "name"]) {
          const field = byTest(`agent-field-${key}`);
          expect(await field.getAttribute("class")).toContain("invalid");
          const message = byTest(`agent-error-${key}`);
          await message.waitFor();
          expect(await message.evaluate((el) => getComputedStyle(el).color)).toBe(danger);
          const input = field.locator("input");
          expect(await input.getAttribute("aria-invalid")).toBe("true");
          expect(await input.evaluate((el) => getComputedStyle(el).borderTopColor)).toBe(danger);
        }
        // The first invalid field has the focus.
        await until(() => page.evaluate(() => document.activeElement?.getAttribute("data-testid"))).toBe(
          "agent-id",
        );
        await screenshot(page, `${SHOTS}/01-invalid-fields-1440`);

        await byTest("agent-id").fill("scribe");
        await byTest("agent-name").fill("Scribe");
        await byTest("agent-emoji").fill("📝");
        await byTest("agent-save").click();
        await page.waitForURL(/\/agents\/scribe$/);
        await page.getByTestId("notice").filter({ hasText: "Agent @scribe created." }).waitFor();
        expect(await errorNotices().count()).toBe(0);
        expect(await byTest("agent-error-id").count()).toBe(0);
      });
    },
    FLOW_TIMEOUT_MS,
  );

  it(
    "picks tools from the catalogue grouped by source and saves rag_query (issue 12)",
    async () => {
      await step("02-tool-picker", async () => {
        const catalogue = await apiGet<CatalogueEntry[]>("/api/tools");
        expect(catalogue.map((t) => t.name)).toEqual(expect.arrayContaining(["rag_query", "memory_write"]));

        await byTest("agent-tools-list").check();
        const picker = byTest("agent-tools-allow");
        await picker.waitFor();
        // Every source of the catalogue is a group, and every tool is in the group of its source.
        const sources = [...new Set(catalogue.map((t) => t.source))];
        for (const source of sources) {
          const group = byTest(`agent-tools-allow-group-${source}`);
          await group.waitFor();
          for (const tool of catalogue.filter((t) => t.source === source))
            expect(await group.getByTestId(`agent-tools-allow-${tool.name}`).count(), tool.name).toBe(1);
        }
        expect(sources).toEqual(expect.arrayContaining(["builtin", "memory", "knowledge"]));
        expect(await byTest("agent-tools-allow-group-knowledge").textContent()).toContain("rag_query");
        expect(await byTest("agent-tools-allow-group-memory").textContent()).toContain("memory_write");
        // No made-up tool names (the old deny placeholder suggested run_command).
        expect(await page.getByText("run_command").count()).toBe(0);

        // Nothing ticked yet: saving is refused with the picker highlighted.
        await byTest("agent-save").click();
        await byTest("agent-error-toolsAllow").waitFor();
        for (const name of ["rag_query", "memory_write", "core_memory_append", "calculator"])
          await byTest(`agent-tools-allow-${name}`).check();
        await byTest("agent-tools-deny-toggle").click();
        await byTest("agent-tools-deny-fetch_url").check();
        // How hard its model thinks, beside the model.
        await byTest("agent-reasoning").selectOption("high");
        await byTest("agent-save").click();
        await page.getByTestId("notice").filter({ hasText: "Agent saved." }).waitFor();
        expect(await errorNotices().count()).toBe(0);

        const saved = await apiGet<AgentRecord>("/api/agents/scribe");
        expect(saved.toolsAllow).toEqual(["rag_query", "memory_write", "core_memory_append", "calculator"]);
        expect(saved.toolsDeny).toEqual(["fetch_url"]);
        expect(saved.reasoning).toBe("high");

        await page.reload();
        await byTest("agent-tools-allow").waitFor();
        expect(await byTest("agent-reasoning").inputValue()).toBe("high");
        for (const name of ["rag_query", "memory_write", "core_memory_append", "calculator"])
          expect(await byTest(`agent-tools-allow-${name}`).isChecked(), name).toBe(true);
        expect(await byTest("agent-tools-allow-read_file").isChecked()).toBe(false);
        expect(await byTest("agent-tools-deny-fetch_url").isChecked()).toBe(true);
      });
      await screenshot(page, `${SHOTS}/02-tool-picker-1440`);
    },
    FLOW_TIMEOUT_MS,
  );

  it(
    "limits the agent's knowledge bases to ones picked from the readable bases",
    async () => {
      await step("02-knowledge-bases", async () => {
        await apiPost("/api/kb", { name: "handbook", description: "How the kitchen works" });
        await page.reload();
        await byTest("agent-form").waitFor();
        expect(await byTest("agent-kb-all").isChecked()).toBe(true);
        await byTest("agent-kb-list").check();
        await byTest("agent-kb-handbook").check();
        await byTest("agent-memory-link").scrollIntoViewIfNeeded();
        await screenshot(page, `${SHOTS}/02-editor-knowledge-memory-1440`);
        await byTest("agent-save").click();
        await page.getByTestId("notice").filter({ hasText: "Agent saved." }).waitFor();
        expect((await apiGet<AgentRecord>("/api/agents/scribe")).knowledgeBases).toEqual(["handbook"]);
        // Back to every readable base (null on the wire).
        await byTest("agent-kb-all").check();
        await byTest("agent-save").click();
        await until(
          async () => (await apiGet<AgentRecord>("/api/agents/scribe")).knowledgeBases,
        ).toBeUndefined();
      });
    },
    FLOW_TIMEOUT_MS,
  );

  it(
    "offers the catalogue's and the provider's models in the model picker",
    async () => {
      await step("03-model-picker", async () => {
        const input = byTest("agent-model");
        await input.click();
        const options = byTest("agent-model-option");
        await until(async () =>
          (await options.evaluateAll((els) => els.map((el) => el.getAttribute("data-value")))).includes(
            "openai:gpt-4o-mini",
          ),
        ).toBe(true);
        const values = await options.evaluateAll((els) => els.map((el) => el.getAttribute("data-value")));
        // The fake provider's own list (gpt-test) and the catalogue's suggestions (anthropic).
        expect(values).toEqual(
          expect.arrayContaining(["", "openai:gpt-test", "anthropic:claude-sonnet-4-5"]),
        );
        await screenshot(page, `${SHOTS}/03-model-picker-open-1440`);
        await input.fill("mini");
        await page.locator('[data-testid="agent-model-option"][data-value="openai:gpt-4o-mini"]').click();
        expect(await input.inputValue()).toBe("openai:gpt-4o-mini");
        expect(await byTest("agent-model-options").count()).toBe(0);
        await byTest("agent-save").click();
        await page.getByTestId("notice").filter({ hasText: "Agent saved." }).waitFor();
        expect((await apiGet<AgentRecord>("/api/agents/scribe")).model).toBe("openai:gpt-4o-mini");
        // Back to the default, so the chat below runs on the fake provider's default model.
        await input.click();
        await page.locator('[data-testid="agent-model-option"][data-value=""]').click();
        await byTest("agent-save").click();
        await until(async () => (await apiGet<AgentRecord>("/api/agents/scribe")).model).toBeUndefined();
      });
    },
    FLOW_TIMEOUT_MS,
  );

  it(
    "shows on the memory page what the agent remembered in a chat, and edits and forgets it",
    async () => {
      await step("04-memory-page", async () => {
        const channel = await apiPost<ChannelRecord>("/api/channels", {
          kind: "direct",
          name: "notes",
          agentIds: ["scribe"],
          userIds: [],
        });
        llm.enqueue(
          {
            toolCalls: [
              { name: "memory_write", args: { text: FACT, type: "semantic" } },
              { name: "core_memory_append", args: { label: "human", text: CORE_NOTE } },
            ],
          },
          { text: "Noted." },
        );
        const posted = await apiPost<PostResult>(`/api/channels/${channel.id}/messages`, {
          text: "Remember that I prefer oolong tea, and that I am Sam.",
        });
        const runId = posted.runs[0]?.id ?? "";
        await until(async () => (await apiGet<TeamRun>(`/api/runs/${runId}`)).status).toBe("done");
        const stored = await apiGet<MemoryRecord[]>("/api/memory");
        expect(stored.map((m) => m.text)).toEqual([FACT]);

        // The agent editor's memory toggle links to what it remembers.
        await byTest("agent-memory-link").click();
        await page.waitForURL(/\/memory\/scribe$/);
        await byTest("memory-page").waitFor();
        expect(await byTest("memory-agent-filter").inputValue()).toBe("scribe");
        const item = byTest("memory-item");
        await until(() => item.count()).toBe(1);
        expect(await text(item.getByTestId("memory-text"))()).toBe(FACT);
        expect(await text(item.getByTestId("memory-agent"))()).toBe("@scribe");
        const core = byTest("core-block");
        await until(() => core.count()).toBe(1);
        expect(await text(core.getByTestId("core-value"))()).toBe(CORE_NOTE);
        await screenshot(page, `${SHOTS}/04-memory-page-1440`);

        // Search narrows the list; a miss says so.
        await byTest("memory-search").fill("coffee");
        await until(() => text(byTest("memory-count"))()).toBe("(1 matching)");
        await byTest("memory-search").fill("zeppelin");
        await byTest("memory-empty").waitFor();
        await byTest("memory-search").fill("");
        await until(() => item.count()).toBe(1);

        await item.getByTestId("memory-edit").click();
        await item.getByTestId("memory-edit-input").fill(EDITED);
        await item.getByTestId("memory-edit-save").click();
        await page.getByTestId("notice").filter({ hasText: "Memory updated." }).waitFor();
        await until(() => text(byTest("memory-text"))()).toBe(EDITED);
        expect((await apiGet<MemoryRecord[]>("/api/memory")).map((m) => m.text)).toEqual([EDITED]);

        await core.getByTestId("core-edit").click();
        await core.getByTestId("core-edit-input").fill("Name: Sam.");
        await core.getByTestId("core-edit-save").click();
        await until(() => text(byTest("core-value"))()).toBe("Name: Sam.");
        expect((await apiGet<CoreBlock[]>("/api/memory/core")).map((b) => b.value)).toEqual(["Name: Sam."]);

        await byTest("memory-item").getByTestId("memory-forget").click();
        await byTest("memory-forget-yes").click();
        await byTest("memory-empty").waitFor();
        expect(await apiGet<MemoryRecord[]>("/api/memory")).toEqual([]);
        expect(await errorNotices().count()).toBe(0);

        // The owner may look at another person's memory: the person selector lists everyone.
        expect(await byTest("memory-person").inputValue()).toBe(ownerId);
        const mia = await apiPost<{ id: string }>("/api/users", {
          username: "mia",
          password: "mia-password-1",
          role: "member",
        });
        await page.reload();
        await byTest("core-block").waitFor();
        await byTest("memory-person").selectOption(mia.id);
        await byTest("core-empty").waitFor();
        await byTest("memory-empty").waitFor();
        expect(await text(page.locator(".memory-page .page-head .muted"))()).toBe(
          "What @scribe remembers about mia",
        );
        await byTest("memory-person").selectOption(ownerId);
        await byTest("core-block").waitFor();
      });
    },
    FLOW_TIMEOUT_MS,
  );

  it(
    "puts the list beside the editor at 1440 px and stacks them at 390 px without sideways scrolling",
    async () => {
      await step("05-layout", async () => {
        await page.setViewportSize(WIDE);
        await byTest("nav-agents").click();
        await byTest("agent-item-scribe").click();
        await byTest("agent-form").waitFor();
        const list = await box(byTest("agent-list"));
        const editor = await box(byTest("agent-editor"));
        expect(list.x + list.width).toBeLessThanOrEqual(editor.x);
        expect(Math.abs(list.y - editor.y)).toBeLessThan(80);
        expect(await sidewaysOverflow(page)).toBeLessThanOrEqual(0);
        await screenshot(page, `${SHOTS}/05-agents-1440`);

        await page.setViewportSize(PHONE);
        // The sidebar becomes a drawer, sliding out of view (a short transition).
        await until(async () => {
          const side = await byTest("sidebar").boundingBox();
          return side ? side.x + side.width : 0;
        }).toBeLessThanOrEqual(0);
        // On a phone the editor takes the whole width, the list is a page of its own (← Agents).
        const phoneEditor = await box(byTest("agent-editor"));
        expect(phoneEditor.width).toBeGreaterThan(PHONE.width - 40);
        expect(await byTest("agent-list").isVisible()).toBe(false);
        expect(await byTest("agents-back").isVisible()).toBe(true);
        expect(await sidewaysOverflow(page)).toBeLessThanOrEqual(0);
        await screenshot(page, `${SHOTS}/05-agent-editor-390`);
        await byTest("agent-tools-allow").scrollIntoViewIfNeeded();
        await page.screenshot({
          path: `${process.cwd()}/test-artifacts/e2e/${SHOTS}/05-tool-picker-390.png`,
        });

        await byTest("agents-back").click();
        const phoneList = await box(byTest("agent-list"));
        expect(phoneList.width).toBeGreaterThan(PHONE.width - 40);
        expect(await sidewaysOverflow(page)).toBeLessThanOrEqual(0);
        await screenshot(page, `${SHOTS}/05-agents-390`);

        await page.goto(`${server.url}/memory`);
        await byTest("memory-page").waitFor();
        await byTest("core-block").waitFor();
        expect(await sidewaysOverflow(page)).toBeLessThanOrEqual(0);
        await screenshot(page, `${SHOTS}/05-memory-390`);
        await page.setViewportSize(WIDE);
      });
    },
    FLOW_TIMEOUT_MS,
  );

  it("logged no Content Security Policy violations and no uncaught page errors", () => {
    expect(log.cspViolations()).toEqual([]);
    expect(log.uncaught()).toEqual([]);
  });
});
