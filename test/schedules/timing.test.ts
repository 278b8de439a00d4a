import { describe, expect, it } from "vitest";
import {
  countOccurrences,
  firstRunAt,
  MIN_INTERVAL_SECONDS,
  nextRunAfter,
  validateTiming,
} from "../../src/schedules/timing.js";
import type { ScheduleTiming } from "../../src/schedules/types.js";

const t = (iso: string) => Date.parse(iso);
const iso = (ms: number | undefined) => (ms === undefined ? undefined : new Date(ms).toISOString());

/** The next `n` occurrences after `from`, each computed from the previous one. */
function occurrences(timing: ScheduleTiming, from: string, n: number): Array<string | undefined> {
  const out: Array<string | undefined> = [];
  let at = firstRunAt(timing, t(from));
  for (let i = 0; i < n && at !== undefined; i++) {
    out.push(iso(at));
    at = nextRunAfter(timing, at, at);
  }
  return out;
}

describe("cron in time zones", () => {
  it("reads 0 9 * * * as 09:00 local time in each zone, across the US spring DST change", () => {
    const shanghai: ScheduleTiming = { kind: "cron", expression: "0 9 * * *", timezone: "Asia/Shanghai" };
    const newYork: ScheduleTiming = { kind: "cron", expression: "0 9 * * *", timezone: "America/New_York" };
    expect(occurrences(shanghai, "2025-03-07T00:00:00Z", 4)).toEqual([
      "2025-03-07T01:00:00.000Z",
      "2025-03-08T01:00:00.000Z",
      "2025-03-09T01:00:00.000Z",
      "2025-03-10T01:00:00.000Z",
    ]);
    // New York moves from UTC-5 to UTC-4 on 2025-03-09: 09:00 local becomes 13:00 UTC.
    expect(occurrences(newYork, "2025-03-07T00:00:00Z", 4)).toEqual([
      "2025-03-07T14:00:00.000Z",
      "2025-03-08T14:00:00.000Z",
      "2025-03-09T13:00:00.000Z",
      "2025-03-10T13:00:00.000Z",
    ]);
  });

  it("runs a time that falls in the spring-forward gap once, right after the gap", () => {
    // 02:30 does not exist in New York on 2025-03-09 (02:00 EST jumps to 03:00 EDT).
    const timing: ScheduleTiming = { kind: "cron", expression: "30 2 * * *", timezone: "America/New_York" };
    expect(occurrences(timing, "2025-03-08T12:00:00Z", 3)).toEqual([
      "2025-03-09T07:00:00.000Z",
      "2025-03-10T06:30:00.000Z",
      "2025-03-11T06:30:00.000Z",
    ]);
  });

  it("runs a time that occurs twice at the autumn change only once", () => {
    // 01:30 happens twice in New York on 2025-11-02 (EDT, then EST).
    const timing: ScheduleTiming = { kind: "cron", expression: "30 1 * * *", timezone: "America/New_York" };
    expect(occurrences(timing, "2025-11-01T12:00:00Z", 3)).toEqual([
      "2025-11-02T05:30:00.000Z",
      "2025-11-03T06:30:00.000Z",
      "2025-11-04T06:30:00.000Z",
    ]);
  });
});

describe("validateTiming", () => {
  const now = t("2025-01-01T00:00:00Z");

  it("enforces the one-minute floor for intervals and cron", () => {
    expect(() => validateTiming({ kind: "interval", seconds: MIN_INTERVAL_SECONDS - 1 }, now)).toThrow(
      /at least|from 60/,
    );
    expect(() => validateTiming({ kind: "interval", seconds: 90.5 }, now)).toThrow(/whole number/);
    expect(validateTiming({ kind: "interval", seconds: 60 }, now)).toEqual({ kind: "interval", seconds: 60 });
    expect(() => validateTiming({ kind: "cron", expression: "* * * * * *", timezone: "UTC" }, now)).toThrow(
      /more often than once a minute/,
    );
    expect(() =>
      validateTiming({ kind: "cron", expression: "0,30 * * * * *", timezone: "UTC" }, now),
    ).toThrow(/more often than once a minute/);
    expect(validateTiming({ kind: "cron", expression: " */5  * * * * ", timezone: "UTC" }, now)).toEqual({
      kind: "cron",
      expression: "*/5 * * * *",
      timezone: "UTC",
    });
  });

  it("names bad time zones, bad expressions, dates that never come, and past times", () => {
    expect(() =>
      validateTiming({ kind: "cron", expression: "0 9 * * *", timezone: "Mars/Olympus" }, now),
    ).toThrow('Unknown time zone "Mars/Olympus".');
    expect(() => validateTiming({ kind: "cron", expression: "0 9 * *", timezone: "UTC" }, now)).toThrow(
      /not valid/,
    );
    expect(() => validateTiming({ kind: "cron", expression: "0 0 30 2 *", timezone: "UTC" }, now)).toThrow(
      /never fires/,
    );
    expect(() => validateTiming({ kind: "once", at: "tomorrow-ish" }, now)).toThrow(/not a date/);
    expect(() => validateTiming({ kind: "once", at: "2024-12-31T23:59:00Z" }, now)).toThrow(/already passed/);
    expect(validateTiming({ kind: "once", at: "2025-01-02T09:00:00+08:00" }, now)).toEqual({
      kind: "once",
      at: "2025-01-02T01:00:00.000Z",
    });
  });
});

describe("interval and once occurrences", () => {
  it("keeps an interval's cadence when a run comes late, and ends a one-shot after it fires", () => {
    const hourly: ScheduleTiming = { kind: "interval", seconds: 3600 };
    const due = t("2025-01-01T10:00:00Z");
    expect(iso(nextRunAfter(hourly, due, due + 5_000))).toBe("2025-01-01T11:00:00.000Z");
    expect(iso(nextRunAfter(hourly, due, t("2025-01-01T13:30:00Z")))).toBe("2025-01-01T14:00:00.000Z");
    expect(countOccurrences(hourly, due, t("2025-01-01T13:30:00Z"))).toBe(4);
    const once: ScheduleTiming = { kind: "once", at: "2025-01-01T10:00:00.000Z" };
    expect(firstRunAt(once, t("2025-01-01T09:00:00Z"))).toBe(due);
    expect(firstRunAt(once, due)).toBeUndefined();
    expect(nextRunAfter(once, due, due)).toBeUndefined();
  });

  it("counts cron occurrences in a window", () => {
    const daily: ScheduleTiming = { kind: "cron", expression: "0 9 * * *", timezone: "Asia/Shanghai" };
    expect(countOccurrences(daily, t("2025-03-07T01:00:00Z"), t("2025-03-10T00:59:00Z"))).toBe(3);
    expect(countOccurrences(daily, t("2025-03-07T01:00:00Z"), t("2025-03-10T01:00:00Z"))).toBe(4);
  });
});
