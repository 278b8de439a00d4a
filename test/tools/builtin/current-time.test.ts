import { describe, expect, it } from "vitest";
import { DimsumError } from "../../../src/errors.js";
import { currentTimeTool, describeTime, validateTimeZone } from "../../../src/tools/builtin/current-time.js";
import { makeContext, runTool, textOf } from "./context.js";

describe("describeTime", () => {
  const instant = new Date("2024-05-01T12:03:07.000Z");

  it("gives local ISO time with offset, weekday and unix seconds", () => {
    expect(describeTime(instant, "Europe/Paris")).toEqual({
      iso: "2024-05-01T14:03:07+02:00",
      weekday: "Wednesday",
      timeZone: "Europe/Paris",
      offset: "+02:00",
      utc: "2024-05-01T12:03:07.000Z",
      unixSeconds: 1714564987,
    });
  });

  it("handles UTC, negative and half-hour offsets and the date line", () => {
    expect(describeTime(instant, "UTC").iso).toBe("2024-05-01T12:03:07+00:00");
    expect(describeTime(instant, "America/New_York").iso).toBe("2024-05-01T08:03:07-04:00");
    expect(describeTime(instant, "Asia/Kolkata").iso).toBe("2024-05-01T17:33:07+05:30");
    const late = describeTime(new Date("2024-05-01T23:30:00Z"), "Asia/Tokyo");
    expect(late.iso).toBe("2024-05-02T08:30:00+09:00");
    expect(late.weekday).toBe("Thursday");
  });

  it("shows midnight as 00, not 24", () => {
    expect(describeTime(new Date("2024-05-01T00:15:00Z"), "UTC").iso).toBe("2024-05-01T00:15:00+00:00");
  });
});

describe("current_time", () => {
  it("reports the time in a requested zone", async () => {
    const before = Math.floor(Date.now() / 1000);
    const result = await runTool(currentTimeTool, { timezone: "Asia/Tokyo" }, makeContext("/tmp"));
    const after = Math.floor(Date.now() / 1000);
    const text = textOf(result);
    expect(text).toMatch(
      /^Time: \d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\+09:00 \((Mon|Tues|Wednes|Thurs|Fri|Satur|Sun)day\)$/m,
    );
    expect(text).toContain("Time zone: Asia/Tokyo (UTC+09:00)");
    const unix = Number(/Unix seconds: (\d+)/.exec(text)?.[1]);
    expect(unix).toBeGreaterThanOrEqual(before);
    expect(unix).toBeLessThanOrEqual(after);
  });

  it("rejects an unknown zone, naming it", async () => {
    const result = await runTool(currentTimeTool, { timezone: "Mars/Olympus" }, makeContext("/tmp"));
    expect(result.isError).toBe(true);
    expect(textOf(result)).toContain('Unknown time zone "Mars/Olympus"');
    expect(() => validateTimeZone("Nowhere/Land")).toThrow(DimsumError);
  });

  it("uses the system zone when none is given", async () => {
    const zone = Intl.DateTimeFormat().resolvedOptions().timeZone;
    const text = textOf(await runTool(currentTimeTool, {}, makeContext("/tmp")));
    expect(text).toContain(`Time zone: ${zone}`);
  });
});
