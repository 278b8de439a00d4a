import { existsSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { STARTER_AGENTS } from "../../src/team/starter-agents.js";
import { type FakeLlmServer, startFakeLlmServer } from "../../src/testing/fake-llm-server.js";
import { alice, owner, TeamHarness } from "./harness.js";

let server: FakeLlmServer;
let h: TeamHarness;

beforeAll(async () => {
  server = await startFakeLlmServer();
});
afterAll(async () => {
  await server.close();
});
beforeEach(() => {
  h = new TeamHarness(server);
});
afterEach(async () => {
  await h.close();
});

describe("starter agents", () => {
  it("are created on first start with usable personas, and only once", async () => {
    const agents = await h.team.listAgents(owner);
    expect(agents.map((a) => a.id)).toEqual(["assistant", "coder", "writer", "editor", "translator"]);
    expect(agents.every((a) => a.soulStatus === "ok")).toBe(true);
    const soul = await h.team.getSoul(owner, "translator");
    expect(soul.content).toContain("# Translator");
    expect(existsSync(join(h.dir, "agents", "coder", "SOUL.md"))).toBe(true);

    // Deleting one and restarting does not bring the starters back.
    await h.team.deleteAgent(owner, "editor");
    await h.restart();
    expect((await h.team.listAgents(owner)).map((a) => a.id)).toEqual([
      "assistant",
      "coder",
      "writer",
      "translator",
    ]);
  });

  it("deny the tools a writer should not use", () => {
    const writer = STARTER_AGENTS.find((a) => a.id === "writer");
    expect(writer?.toolsDeny).toContain("execute_command");
  });
});

describe("an agent's model chain and reasoning effort", () => {
  it("takes a chain as an array or a comma list, keeps it and the effort across a restart, refuses bad ones", async () => {
    const created = await h.team.createAgent(owner, {
      id: "steady",
      name: "Steady",
      model: ["openai:gpt-test", " anthropic:claude-test "],
      reasoning: "high",
    });
    expect(created).toMatchObject({ model: "openai:gpt-test,anthropic:claude-test", reasoning: "high" });
    await h.restart();
    expect(await h.team.getAgent(owner, "steady")).toMatchObject({
      model: "openai:gpt-test,anthropic:claude-test",
      reasoning: "high",
    });
    const changed = await h.team.updateAgent(owner, "steady", { model: "openai:gpt-test", reasoning: null });
    expect(changed.model).toBe("openai:gpt-test");
    expect(changed.reasoning).toBeUndefined();
    await expect(
      h.team.updateAgent(owner, "steady", { model: ["openai:gpt-test", "nocolon"] }),
    ).rejects.toThrow(/provider:model/);
  });
});

describe("agent CRUD and SOUL.md", () => {
  it("creates, updates and deletes an agent with its persona file", async () => {
    const created = await h.team.createAgent(owner, {
      id: "critic",
      name: "Critic",
      emoji: "🧐",
      model: "openai:gpt-test",
      toolsDeny: ["execute_command"],
      soul: "# Critic\nFind the weak spots.",
    });
    expect(created).toMatchObject({ id: "critic", name: "Critic", soulStatus: "ok", memory: true });
    expect(await h.team.getSoul(owner, "critic")).toEqual({
      agentId: "critic",
      content: "# Critic\nFind the weak spots.",
      status: "ok",
    });

    const updated = await h.team.updateAgent(owner, "critic", {
      name: "Harsh Critic",
      toolsAllow: ["calculator"],
    });
    expect(updated).toMatchObject({
      name: "Harsh Critic",
      toolsAllow: ["calculator"],
      toolsDeny: ["execute_command"],
    });
    expect((await h.team.getAgent(owner, "critic")).name).toBe("Harsh Critic");

    await h.team.deleteAgent(owner, "critic");
    expect(existsSync(join(h.dir, "agents", "critic"))).toBe(false);
    await expect(h.team.getAgent(owner, "critic")).rejects.toMatchObject({ code: "not_found" });
  });

  it("reports an empty or missing SOUL.md instead of hiding it", async () => {
    await h.team.createAgent(owner, { id: "blank", name: "Blank" });
    expect((await h.team.getSoul(owner, "blank")).status).toBe("missing");
    expect((await h.team.putSoul(owner, "blank", "  \n\t")).status).toBe("empty");
    expect((await h.team.getAgent(owner, "blank")).soulStatus).toBe("empty");
    writeFileSync(join(h.dir, "agents", "blank", "SOUL.md"), "Edited by hand.");
    expect(await h.team.getSoul(owner, "blank")).toMatchObject({ status: "ok", content: "Edited by hand." });
    rmSync(join(h.dir, "agents", "blank", "SOUL.md"));
    expect((await h.team.listAgents(owner)).find((a) => a.id === "blank")?.soulStatus).toBe("missing");
  });

  it("validates input with errors that name the problem", async () => {
    await expect(h.team.createAgent(owner, { id: "Bad Id", name: "x" })).rejects.toMatchObject({
      code: "invalid",
    });
    await expect(h.team.createAgent(owner, { id: "all", name: "All" })).rejects.toMatchObject({
      code: "invalid",
    });
    await expect(h.team.createAgent(owner, { id: "coder", name: "Again" })).rejects.toMatchObject({
      code: "conflict",
    });
    await expect(
      h.team.createAgent(owner, { id: "x1", name: "X", toolsDeny: ["nope"] }),
    ).rejects.toMatchObject({
      message: "Unknown tool: nope.",
      hint: expect.stringContaining("calculator"),
    });
    await expect(h.team.createAgent(owner, { id: "x2", name: "X", model: "gpt-4o" })).rejects.toMatchObject({
      code: "invalid",
    });
    await expect(h.team.getSoul(owner, "ghost")).rejects.toMatchObject({
      code: "not_found",
      hint: expect.stringContaining("known agents: assistant, coder"),
    });
  });

  it("lets only owners and admins manage agents", async () => {
    await expect(h.team.createAgent(alice, { id: "mine", name: "Mine" })).rejects.toMatchObject({
      code: "forbidden",
    });
    await expect(h.team.putSoul(alice, "coder", "hijacked")).rejects.toMatchObject({ code: "forbidden" });
    await expect(h.team.deleteAgent(alice, "coder")).rejects.toMatchObject({ code: "forbidden" });
    await expect(
      h.team.updateAgent({ userId: "ann", role: "admin" }, "coder", { emoji: "🤖" }),
    ).resolves.toMatchObject({
      emoji: "🤖",
    });
    expect((await h.team.listAgents(alice)).length).toBe(5);
  });
});
