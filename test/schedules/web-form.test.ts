import { describe, expect, it } from "vitest";
import {
  describeTiming,
  emptyScheduleForm,
  formToScheduleInput,
  type ScheduleForm,
} from "../../web/src/components/schedule-api.js";
import { parseRoute, routePath } from "../../web/src/state/route.js";

const filled = (patch: Partial<ScheduleForm>): ScheduleForm => ({
  ...emptyScheduleForm("Asia/Shanghai"),
  name: " Digest ",
  channelId: "c1",
  agentId: "writer",
  prompt: " Write it ",
  ...patch,
});

describe("schedule form", () => {
  it("turns each kind of timing and target into a request body", () => {
    expect(formToScheduleInput(filled({}))).toEqual({
      input: {
        name: "Digest",
        timing: { kind: "cron", expression: "0 9 * * *", timezone: "Asia/Shanghai" },
        target: { type: "agent", agentId: "writer", channelId: "c1", prompt: "Write it" },
        missedPolicy: "skip",
      },
    });
    expect(
      formToScheduleInput(filled({ kind: "interval", minutes: "15", missedPolicy: "run_once" })),
    ).toMatchObject({
      input: { timing: { kind: "interval", seconds: 900 }, missedPolicy: "run_once" },
    });
    const once = formToScheduleInput(filled({ kind: "once", at: "2030-01-31T09:00" }));
    expect(once).toMatchObject({
      input: { timing: { kind: "once", at: new Date("2030-01-31T09:00").toISOString() } },
    });
    expect(formToScheduleInput(filled({ targetType: "chain", agentId: "" }))).toMatchObject({
      input: { target: { type: "chain", channelId: "c1", input: "Write it" } },
    });
  });

  it("names the first problem instead of sending", () => {
    expect(formToScheduleInput(filled({ name: "  " }))).toEqual({ problem: "Give the schedule a name." });
    expect(formToScheduleInput(filled({ kind: "once", at: "" }))).toEqual({
      problem: "Pick the date and time to run at.",
    });
    expect(formToScheduleInput(filled({ kind: "interval", minutes: "0.5" }))).toEqual({
      problem: "Run at most once a minute (1 or more).",
    });
    expect(formToScheduleInput(filled({ channelId: "" }))).toEqual({
      problem: "Pick the channel to post in.",
    });
    expect(formToScheduleInput(filled({ agentId: "" }))).toEqual({ problem: "Pick the agent that answers." });
    expect(formToScheduleInput(filled({ prompt: "" }))).toEqual({ problem: "Write the prompt." });
  });

  it("describes timings and routes to /schedules", () => {
    expect(describeTiming({ kind: "interval", seconds: 120 })).toBe("every 2 min");
    expect(describeTiming({ kind: "interval", seconds: 90 })).toBe("every 90 s");
    expect(describeTiming({ kind: "cron", expression: "0 9 * * *", timezone: "UTC" })).toBe(
      "cron 0 9 * * * (UTC)",
    );
    expect(routePath({ name: "schedules" })).toBe("/schedules");
    expect(parseRoute("/schedules")).toEqual({ name: "schedules" });
    expect(parseRoute("/schedules/x")).toEqual({ name: "not_found", path: "/schedules/x" });
  });
});
