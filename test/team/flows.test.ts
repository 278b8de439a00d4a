import { describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config/load-config.js";
import { createTeam } from "../../src/team/team.js";
import type { ChannelRecord, FlowRecord, TeamEvent } from "../../src/team/types.js";
import type { FakeLlmServer } from "../../src/testing/fake-llm-server.js";
import { agentOf, alice, groupSuite, guest, lastUserText, type TeamHarness } from "./harness.js";

let server: FakeLlmServer;
let h: TeamHarness;
let group: ChannelRecord;
const scripts = groupSuite(
  {
    name: "Newsroom",
    agentIds: ["writer", "editor", "translator"],
    userIds: ["gus"],
  },
  (suite) => {
    ({ server, h, group } = suite);
  },
);

/** The first flow event (seen or coming) of this flow that passes the test. */
async function flowWhen(flowId: string, test: (f: FlowRecord) => boolean): Promise<FlowRecord> {
  const event = await h.waitFor((e) => e.type === "flow" && e.flow.id === flowId && test(e.flow));
  return (event as Extract<TeamEvent, { type: "flow" }>).flow;
}

const statuses = (flow: FlowRecord) => flow.steps.map((s) => s.status);
const requestsOf = (agent: string) => server.requests.filter((r) => agentOf(r) === agent);

describe("collaboration flows", () => {
  it("runs a two-step chain with an approval pause, an edit and a resume", async () => {
    await h.team.setChain(alice, group.id, [
      { agentId: "writer", requiresApproval: true, instruction: "Draft a short post." },
      { agentId: "editor", requiresApproval: false, instruction: "Polish this draft." },
    ]);
    scripts.add("writer", { text: "draft v1" });
    scripts.add("editor", { text: "final post" });

    const posted = await h.team.postMessage(alice, group.id, "/flow launch news for Dimsum");
    const flow = posted.flow!;
    expect(posted.runs.map((r) => r.agentId)).toEqual(["writer"]);
    expect(flow).toMatchObject({ status: "running", currentStep: 0, triggerMessageId: posted.message.id });

    const paused = await flowWhen(flow.id, (f) => f.status === "paused");
    expect(statuses(paused)).toEqual(["completed", "waiting"]);
    expect(paused.steps[0]).toMatchObject({ input: "launch news for Dimsum", output: "draft v1" });
    expect(lastUserText(requestsOf("writer")[0])).toBe("Draft a short post.\n\nlaunch news for Dimsum");
    expect(requestsOf("editor")).toHaveLength(0);

    // A guest may watch the flow but not steer it.
    expect((await h.team.getFlow(guest, flow.id)).status).toBe("paused");
    await expect(h.team.flowAction(guest, flow.id, { action: "resume" })).rejects.toMatchObject({
      code: "forbidden",
    });
    await expect(
      h.team.flowAction(alice, flow.id, { action: "approve", stepIndex: 1 }),
    ).rejects.toMatchObject({
      code: "conflict",
    });

    const edited = await h.team.flowAction(alice, flow.id, {
      action: "edit",
      stepIndex: 0,
      output: "draft v2 (edited)",
    });
    expect(edited.steps[0]?.output).toBe("draft v2 (edited)");
    expect(edited.status).toBe("paused");

    const resumed = await h.team.flowAction(alice, flow.id, { action: "approve", stepIndex: 0 });
    expect(resumed).toMatchObject({ status: "running", currentStep: 1 });
    const done = await flowWhen(flow.id, (f) => f.status === "done");
    expect(statuses(done)).toEqual(["completed", "completed"]);
    expect(done.steps[1]).toMatchObject({ input: "draft v2 (edited)", output: "final post" });
    expect(lastUserText(requestsOf("editor")[0])).toBe("Polish this draft.\n\ndraft v2 (edited)");
    expect(await h.team.getFlow(alice, flow.id)).toEqual(done);

    // Each step's output was posted to the channel by its agent; the chat shows the edited output.
    const stored = await h.team.listMessages(alice, group.id);
    const texts = stored.map((m) => `${m.author.id}: ${m.text}`);
    expect(texts).toEqual([
      "alice: /flow launch news for Dimsum",
      "writer: draft v2 (edited)",
      "editor: final post",
    ]);
    expect(stored[1]?.parts).toEqual([
      { type: "text", text: "draft v2 (edited)" },
      { type: "edited", by: "alice", name: expect.any(String) },
    ]);
    expect(stored[1]?.editedAt).toBeTypeOf("number");
    // An edit after the output was passed on is refused.
    await expect(
      h.team.flowAction(alice, flow.id, { action: "edit", stepIndex: 0, output: "too late" }),
    ).rejects.toMatchObject({ code: "conflict" });
  });

  it("retries a failed step, and skips a step passing its input through", async () => {
    await h.team.setChain(alice, group.id, [
      { agentId: "writer", requiresApproval: false },
      { agentId: "editor", requiresApproval: false },
      { agentId: "translator", requiresApproval: false },
    ]);
    scripts.add("writer", { text: "text in English" });
    scripts.add("editor", { error: { status: 400 } }, { error: { status: 400 } });
    scripts.add("translator", { text: "中文文本" });

    const { flow } = await h.team.postMessage(alice, group.id, "@chain write about dumplings");
    const failed = await flowWhen(flow!.id, (f) => f.status === "error");
    expect(statuses(failed)).toEqual(["completed", "error", "waiting"]);
    expect(failed.currentStep).toBe(1);
    expect(failed.steps[1]?.error).toBeTruthy();
    const failedRun = await h.team.getRun(alice, failed.steps[1]!.runId!);
    expect(failedRun).toMatchObject({ status: "error", flowId: flow!.id, stepIndex: 1 });

    await expect(h.team.flowAction(alice, flow!.id, { action: "retry", stepIndex: 0 })).rejects.toMatchObject(
      {
        code: "conflict",
      },
    );
    await h.team.flowAction(alice, flow!.id, { action: "retry", stepIndex: 1 });
    const failedAgain = await flowWhen(
      flow!.id,
      (f) => f.status === "error" && f.steps[1]?.runId !== failed.steps[1]?.runId,
    );
    expect(requestsOf("editor")).toHaveLength(2);
    expect(lastUserText(requestsOf("editor")[1])).toBe("text in English");

    const skipped = await h.team.flowAction(alice, failedAgain.id, { action: "skip", stepIndex: 1 });
    expect(statuses(skipped)).toEqual(["completed", "skipped", "running"]);
    const done = await flowWhen(flow!.id, (f) => f.status === "done");
    expect(done.steps[1]).toMatchObject({
      status: "skipped",
      input: "text in English",
      output: "text in English",
    });
    expect(lastUserText(requestsOf("translator")[0])).toBe("text in English");
    expect(done.steps[2]?.output).toBe("中文文本");
  });

  it("pauses before the next step, and stops a running step", async () => {
    await h.team.setChain(alice, group.id, [
      { agentId: "writer", requiresApproval: false },
      { agentId: "editor", requiresApproval: false },
    ]);
    let release!: () => void;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    scripts.add("writer", async () => {
      await gate;
      return { text: "draft" };
    });
    let editorAsked!: () => void;
    const asked = new Promise<void>((resolve) => {
      editorAsked = resolve;
    });
    scripts.add("editor", async () => {
      editorAsked();
      return { delayMs: 60_000, text: "never" };
    });

    const { flow } = await h.team.postMessage(alice, group.id, "/flow a story");
    expect((await h.team.flowAction(alice, flow!.id, { action: "pause" })).status).toBe("paused");
    release();
    // The running step finishes, but the next one does not start.
    const held = await flowWhen(flow!.id, (f) => f.steps[0]?.status === "completed");
    expect(held).toMatchObject({ status: "paused", currentStep: 0 });
    expect(statuses(held)).toEqual(["completed", "waiting"]);

    await h.team.flowAction(alice, flow!.id, { action: "resume" });
    await asked;
    const stopped = await h.team.flowAction(alice, flow!.id, { action: "stop" });
    expect(stopped.status).toBe("stopped");
    expect(stopped.steps[1]).toMatchObject({
      status: "error",
      error: "The flow was stopped while this step ran.",
    });
    const run = await h.finished(stopped.steps[1]!.runId!);
    expect(run.status).toBe("cancelled");
    expect(await h.team.getFlow(alice, flow!.id)).toMatchObject({ status: "stopped" });
    await expect(h.team.flowAction(alice, flow!.id, { action: "resume" })).rejects.toMatchObject({
      code: "conflict",
    });
  });

  it("survives a restart: a running flow comes back paused and can be resumed", async () => {
    await h.team.setChain(alice, group.id, [
      { agentId: "writer", requiresApproval: false },
      { agentId: "editor", requiresApproval: false },
    ]);
    let writerAsked!: () => void;
    const asked = new Promise<void>((resolve) => {
      writerAsked = resolve;
    });
    scripts.add("writer", async () => {
      writerAsked();
      return { delayMs: 60_000, text: "never" };
    });
    const { flow } = await h.team.postMessage(alice, group.id, "/flow survive this");
    await asked;

    await h.restart();
    const restored = await h.team.getFlow(alice, flow!.id);
    expect(restored).toMatchObject({ status: "paused", currentStep: 0 });
    expect(statuses(restored)).toEqual(["waiting", "waiting"]);

    scripts.add("writer", { text: "second try" });
    scripts.add("editor", { text: "edited second try" });
    await h.team.flowAction(alice, flow!.id, { action: "resume" });
    const done = await flowWhen(flow!.id, (f) => f.status === "done");
    expect(done.steps.map((s) => s.output)).toEqual(["second try", "edited second try"]);
    expect(lastUserText(requestsOf("writer").at(-1))).toBe("survive this");
  });

  it("resumes a chat answer cut off by a crash when the team starts again", async () => {
    let asked!: () => void;
    const inFlight = new Promise<void>((resolve) => {
      asked = resolve;
    });
    scripts.add(
      "writer",
      async () => {
        asked();
        return { delayMs: 60_000, text: "never" };
      },
      { text: "answered after the restart" },
    );
    const { runs } = await h.team.postMessage(alice, group.id, "@writer hello");
    await inFlight;
    // Simulate a crash: the run is still "running" in the database when another team opens it.
    const second = createTeam({
      db: h.db,
      home: h.dir,
      config: loadConfig({
        cwd: h.dir,
        env: {
          DIMSUM_HOME: h.dir,
          DIMSUM_MODEL: "openai:gpt-test",
          OPENAI_API_KEY: "sk-test-key-1234",
          OPENAI_BASE_URL: `${server.url}/v1`,
        },
      }),
      streamOptions: { retry: { maxRetries: 0 } },
    });
    let run = await second.getRun(alice, runs[0]!.id);
    for (let i = 0; i < 200 && run.status !== "done" && run.status !== "error"; i++) {
      await new Promise((resolve) => setTimeout(resolve, 25));
      run = await second.getRun(alice, runs[0]!.id);
    }
    expect(run.status).toBe("done");
    const answers = (await second.listMessages(alice, group.id)).filter((m) => m.runId === run.id);
    expect(answers.map((m) => m.text)).toEqual(["answered after the restart"]);
    await second.close();
  });
});
