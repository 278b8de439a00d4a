/**
 * Team templates in real headless Chromium against a real server, team, scheduler and SQLite file,
 * the agents backed by the scripted fake LLM: a gallery card creates its agents, group and chain in
 * one click and a /flow message runs that chain; the daily report comes with its schedule; an agent
 * exported from its editor downloads a file that imports again (as a new agent, its id suffixed); a
 * group exports from its settings; a file that is not a template is refused with the field named;
 * screenshots at 1440×900 and 390×844, and nothing scrolls sideways at 390 px.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { Page } from "playwright-core";
import { describe, expect, it } from "vitest";
import type { ScheduleRecord } from "../../src/schedules/types.js";
import type { AgentRecord, ChannelRecord, FlowRecord, SoulFile } from "../../src/team/types.js";
import type { FakeLlmServer } from "../../src/testing/fake-llm-server.js";
import { call, type Session, tempDir, withUsers } from "../server/helpers.js";
import { AgentScripts, agentOf, systemOf } from "../team/harness.js";
import { flow, type PageLog, resetArtifacts, screenshot } from "./browser.js";
import type { E2eServer } from "./e2e-server.js";
import { e2eStack } from "./stack.js";

const TIMEOUT_MS = 60_000;
const scripts = new AgentScripts();
let page: Page;
let log: PageLog;
let server: E2eServer;
let llm: FakeLlmServer;
let owner: Session;
const downloads = tempDir("dimsum-templates-e2e-");

const byTest = (id: string) => page.getByTestId(id);
const step = (name: string, body: () => Promise<void>) => flow(page, log, server.logLines, name, body);
const until = <T>(read: () => Promise<T>) => expect.poll(read, { timeout: 10_000, interval: 50 });

async function api<T>(path: string): Promise<T> {
  const res = await call(server.url, path, { session: owner });
  const text = await res.text();
  if (res.status !== 200) throw new Error(`${path}: ${res.status} ${text}`);
  return JSON.parse(text) as T;
}

/** How far the page (or its scrolling content column) runs past the viewport's right edge, in px. */
async function sideways(): Promise<number> {
  return page.evaluate(() => {
    const over = (el: Element | null) => (el ? el.scrollWidth - el.clientWidth : 0);
    return Math.max(
      document.documentElement.scrollWidth - window.innerWidth,
      over(document.querySelector("main.content")),
    );
  });
}

/** Clicks the button and saves the file the browser downloads; returns its path and name. */
async function download(testId: string): Promise<{ path: string; name: string }> {
  const [file] = await Promise.all([page.waitForEvent("download"), byTest(testId).click()]);
  const path = join(downloads, file.suggestedFilename());
  await file.saveAs(path);
  return { path, name: file.suggestedFilename() };
}

/** The id of the chat the page shows. */
async function openChannelId(): Promise<string> {
  const chat = page.locator('[data-testid="chat-page"][data-channel-id]');
  await chat.waitFor();
  return (await chat.getAttribute("data-channel-id")) ?? "";
}

e2eStack(
  {
    before: () => resetArtifacts("templates"),
    llm: { defaultTurn: scripts.turn },
    server: { schedules: true },
  },
  async (stack) => {
    ({ page, log, server, llm } = stack);
    ({ owner } = await withUsers(server.url));
    await page.setViewportSize({ width: 1440, height: 900 });
    await page.goto(server.url);
    await byTest("login-username").fill("alice");
    await byTest("login-password").fill("owner-password-1");
    await byTest("login-submit").click();
    await byTest("home-page").waitFor();
  },
);

describe("team templates in the browser", () => {
  it(
    "a gallery card creates its agents, group and chain in one click, and /flow runs the chain",
    async () => {
      let channelId = "";
      await step("templates/01-gallery", async () => {
        await byTest("nav-templates").click();
        const gallery = byTest("template-gallery");
        await gallery.waitFor();
        expect(await gallery.locator(".template-card").count()).toBeGreaterThanOrEqual(8);
        const card = byTest("template-card-writing-room");
        expect(await card.getByTestId("template-chain").textContent()).toBe(
          "Chain: Wordsmith → Copy editor → Localizer",
        );
        await screenshot(page, "templates/1440-gallery");
        await byTest("template-create-writing-room").click();
        channelId = await openChannelId();
        const notice = byTest("notice").filter({ hasText: "Created “Writing room”" });
        await notice.waitFor();
        expect(await notice.textContent()).toContain("3 agents, the group and its chain");
        await screenshot(page, "templates/1440-created");
      });

      // The API sees what the click made: three agents with their personas, the group with its leader and chain.
      const channel = await api<ChannelRecord>(`/api/channels/${channelId}`);
      expect(channel).toMatchObject({ kind: "group", name: "Writing room", leaderAgentId: "wordsmith" });
      expect(channel.chain.map((s) => s.agentId)).toEqual(["wordsmith", "copyeditor", "localizer"]);
      expect(
        channel.members
          .filter((m) => m.type === "agent")
          .map((m) => m.id)
          .sort(),
      ).toEqual(["copyeditor", "localizer", "wordsmith"]);
      for (const id of ["wordsmith", "copyeditor", "localizer"]) {
        const agent = await api<AgentRecord>(`/api/agents/${id}`);
        expect(agent.soulStatus).toBe("ok");
        expect(agent.model).toBeUndefined();
      }

      scripts.add("wordsmith", { text: "Draft: Dimsum ships templates." });
      scripts.add("copyeditor", { text: "Edited: Dimsum now ships team templates." });
      scripts.add("localizer", { text: "Dimsum propose désormais des modèles d'équipe." });
      const before = llm.requests.length;
      await step("templates/02-flow", async () => {
        await byTest("composer-input").fill("/flow a one-line launch note, in French");
        await byTest("composer-send").click();
        const panel = byTest("flow-panel");
        await panel.waitFor();
        await until(() => panel.getAttribute("data-status")).toBe("done");
        await page.getByText("Dimsum propose désormais des modèles d'équipe.").first().waitFor();
      });
      const flowId = (await byTest("flow-panel").getAttribute("data-flow-id")) ?? "";
      const done = await api<FlowRecord>(`/api/flows/${flowId}`);
      expect(done.steps.map((s) => [s.agentId, s.status, s.output])).toEqual([
        ["wordsmith", "completed", "Draft: Dimsum ships templates."],
        ["copyeditor", "completed", "Edited: Dimsum now ships team templates."],
        ["localizer", "completed", "Dimsum propose désormais des modèles d'équipe."],
      ]);
      // Each step ran with its template persona and the server's default model.
      const requests = llm.requests.slice(before);
      expect(requests.map((r) => agentOf(r))).toEqual(["wordsmith", "copyeditor", "localizer"]);
      expect(systemOf(requests[2])).toContain("# Localizer");
      expect(requests.map((r) => r.model)).toEqual(["gpt-test", "gpt-test", "gpt-test"]);
    },
    TIMEOUT_MS,
  );

  it(
    "the daily report comes with its schedule on the new group",
    async () => {
      await step("templates/03-daily-report", async () => {
        await byTest("nav-templates").click();
        await byTest("template-card-daily-report").getByText("Runs on a schedule").waitFor();
        await byTest("template-create-daily-report").click();
        const channelId = await openChannelId();
        await byTest("notice").filter({ hasText: "and a schedule" }).waitFor();
        const schedules = await api<ScheduleRecord[]>("/api/schedules");
        expect(schedules).toHaveLength(1);
        expect(schedules[0]).toMatchObject({
          name: "Daily report",
          enabled: true,
          ownerId: owner.userId,
          timing: { kind: "cron", expression: "0 9 * * 1-5", timezone: "UTC" },
          target: { type: "chain", channelId },
        });
      });
    },
    TIMEOUT_MS,
  );

  it(
    "an agent exported from its editor imports again from the file; a group exports from its settings",
    async () => {
      let agentFile = "";
      await step("templates/04-export-agent", async () => {
        await byTest("nav-agents").click();
        await byTest("agent-item-wordsmith").click();
        await byTest("agent-editor").waitFor();
        const file = await download("agent-export");
        expect(file.name).toBe("wordsmith.dimsum.json");
        agentFile = file.path;
        await byTest("notice").filter({ hasText: "Exported “Wordsmith”" }).waitFor();
      });
      const exported = JSON.parse(readFileSync(agentFile, "utf8")) as {
        format: string;
        kind: string;
        agent: { id: string; persona: string };
      };
      expect(exported).toMatchObject({
        format: "dimsum-template",
        kind: "agent",
        agent: { id: "wordsmith" },
      });

      await step("templates/05-import-agent", async () => {
        await byTest("agents-templates").click();
        await byTest("template-gallery").waitFor();
        await byTest("template-import-file").setInputFiles(agentFile);
        // The id is taken here, so the copy is @wordsmith-2, and its editor opens.
        await page.locator('[data-testid="agent-form"]').getByText("Wordsmith (2)").waitFor();
        expect(page.url()).toBe(`${server.url}/agents/wordsmith-2`);
        const notice = byTest("notice").filter({ hasText: "Created the agent @wordsmith-2" });
        await notice.waitFor();
        expect(await notice.textContent()).toContain("@wordsmith is @wordsmith-2 here");
      });
      const soul = await api<SoulFile>("/api/agents/wordsmith-2/soul");
      expect(soul.content).toBe(exported.agent.persona);

      await step("templates/06-export-group", async () => {
        const room = (await api<ChannelRecord[]>("/api/channels")).find((c) => c.name === "Writing room");
        await page.goto(`${server.url}/c/${room?.id}/settings`);
        await byTest("channel-settings-page").waitFor();
        const file = await download("channel-export");
        expect(file.name).toBe("writing-room.dimsum.json");
        const team = JSON.parse(readFileSync(file.path, "utf8")) as { kind: string; agents: unknown[] };
        expect(team.kind).toBe("team");
        expect(team.agents).toHaveLength(3);
        await screenshot(page, "templates/1440-group-settings");
      });
    },
    TIMEOUT_MS,
  );

  it(
    "a file that is not a template is refused with the field named, and nothing is created",
    async () => {
      const agentsBefore = (await api<AgentRecord[]>("/api/agents")).length;
      await step("templates/07-bad-file", async () => {
        await byTest("nav-templates").click();
        await byTest("template-gallery").waitFor();
        await byTest("template-import-file").setInputFiles({
          name: "broken.json",
          mimeType: "application/json",
          buffer: Buffer.from(
            JSON.stringify({
              format: "dimsum-template",
              version: 1,
              kind: "agent",
              name: "x",
              agent: { id: "Not A Slug", name: "X" },
            }),
          ),
        });
        const error = byTest("notice").filter({ hasText: "not a usable Dimsum template" });
        await error.waitFor();
        expect(await error.textContent()).toContain("agent.id:");
        await byTest("template-import-file").setInputFiles({
          name: "notes.txt",
          mimeType: "text/plain",
          buffer: Buffer.from("just some notes"),
        });
        await byTest("notice").filter({ hasText: "notes.txt is not JSON" }).waitFor();
      });
      expect((await api<AgentRecord[]>("/api/agents")).length).toBe(agentsBefore);
    },
    TIMEOUT_MS,
  );

  it(
    "at 390 px nothing scrolls sideways: the gallery, the agent editor with Export, group settings",
    async () => {
      await page.setViewportSize({ width: 390, height: 844 });
      try {
        const room = (await api<ChannelRecord[]>("/api/channels")).find((c) => c.name === "Writing room");
        for (const [name, path, ready] of [
          ["gallery", "/templates", "template-gallery"],
          ["agent", "/agents/wordsmith", "agent-export"],
          ["group-settings", `/c/${room?.id}/settings`, "channel-export"],
        ] as const) {
          await step(`templates/390-${name}`, async () => {
            await page.goto(`${server.url}${path}`);
            await byTest(ready).waitFor();
            expect(await sideways(), `${name} at 390 px`).toBeLessThanOrEqual(0);
          });
        }
      } finally {
        await page.setViewportSize({ width: 1440, height: 900 });
      }
    },
    TIMEOUT_MS,
  );
});
