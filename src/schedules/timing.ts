/**
 * When schedules fire: validates timings and computes occurrences. Cron expressions are read by
 * croner in the schedule's IANA time zone, so `0 9 * * *` means 09:00 local time across DST changes.
 */
import { Cron } from "croner";
import { invalid } from "../errors.js";
import type { ScheduleTiming } from "./types.js";

/** Shortest time between two runs of one schedule. */
export const MIN_INTERVAL_SECONDS = 60;
const MAX_INTERVAL_SECONDS = 366 * 24 * 3600;
const MAX_EXPRESSION_CHARS = 200;
// Gaps checked for the one-run-a-minute floor of cron expressions.
const CRON_GAPS_CHECKED = 8;

function cronOf(expression: string, timezone: string): Cron {
  // Paused: croner only computes times here; the scheduler owns the timers.
  return new Cron(expression, { timezone, paused: true, mode: "5-or-6-parts" });
}

/** True when `timezone` is an IANA zone name the runtime knows. */
export function isValidTimezone(timezone: string): boolean {
  try {
    new Intl.DateTimeFormat("en-US", { timeZone: timezone });
    return timezone.trim() !== "";
  } catch {
    return false;
  }
}

function checkCron(expression: string, timezone: string, now: number): ScheduleTiming {
  const trimmed = expression.trim().replace(/\s+/g, " ");
  if (trimmed === "" || trimmed.length > MAX_EXPRESSION_CHARS) {
    throw invalid(`A cron expression needs 5 fields and at most ${MAX_EXPRESSION_CHARS} characters.`);
  }
  if (!isValidTimezone(timezone)) {
    throw invalid(`Unknown time zone "${timezone}".`, "use an IANA name such as Asia/Shanghai or UTC");
  }
  let cron: Cron;
  try {
    cron = cronOf(trimmed, timezone);
  } catch (err) {
    throw invalid(
      `The cron expression "${trimmed}" is not valid: ${err instanceof Error ? err.message : String(err)}`,
      "use 5 fields: minute hour day-of-month month day-of-week, e.g. 0 9 * * 1-5",
    );
  }
  const runs = cron.nextRuns(CRON_GAPS_CHECKED + 1, new Date(now)).map((d) => d.getTime());
  if (runs.length === 0) {
    throw invalid(`The cron expression "${trimmed}" never fires.`, "check the day and month fields");
  }
  for (let i = 1; i < runs.length; i++) {
    if (runs[i]! - runs[i - 1]! < MIN_INTERVAL_SECONDS * 1000) {
      throw invalid(
        `The cron expression "${trimmed}" fires more often than once a minute.`,
        "schedules run at most once every 60 seconds",
      );
    }
  }
  return { kind: "cron", expression: trimmed, timezone };
}

/**
 * Checks a timing and returns it normalised (trimmed expression, ISO `at` in UTC). Throws `invalid`
 * naming the problem: an unknown zone, a bad expression, an interval under 60 s, a time in the past.
 */
export function validateTiming(timing: ScheduleTiming, now: number): ScheduleTiming {
  switch (timing.kind) {
    case "cron":
      return checkCron(timing.expression, timing.timezone, now);
    case "once": {
      const at = Date.parse(timing.at);
      if (!Number.isFinite(at)) {
        throw invalid(
          `"${timing.at}" is not a date and time.`,
          "use ISO 8601, e.g. 2030-01-31T09:00:00+08:00",
        );
      }
      if (at <= now) {
        throw invalid(`The time ${new Date(at).toISOString()} has already passed.`, "pick a future time");
      }
      return { kind: "once", at: new Date(at).toISOString() };
    }
    case "interval": {
      const { seconds } = timing;
      if (!Number.isInteger(seconds) || seconds < MIN_INTERVAL_SECONDS || seconds > MAX_INTERVAL_SECONDS) {
        throw invalid(
          `An interval must be a whole number of seconds from ${MIN_INTERVAL_SECONDS} to ${MAX_INTERVAL_SECONDS} (got ${seconds}).`,
          "schedules run at most once every 60 seconds",
        );
      }
      return { kind: "interval", seconds };
    }
  }
}

/** The first occurrence strictly after `now` for a new (or re-timed, or re-enabled) schedule. */
export function firstRunAt(timing: ScheduleTiming, now: number): number | undefined {
  switch (timing.kind) {
    case "cron":
      return cronOf(timing.expression, timing.timezone).nextRun(new Date(now))?.getTime();
    case "once": {
      const at = Date.parse(timing.at);
      return at > now ? at : undefined;
    }
    case "interval":
      return now + timing.seconds * 1000;
  }
}

/**
 * The occurrence after `previous` (the one that just came due) that is strictly after `now`.
 * Intervals keep their cadence (previous + k·interval); cron follows the expression; once ends.
 */
export function nextRunAfter(timing: ScheduleTiming, previous: number, now: number): number | undefined {
  switch (timing.kind) {
    case "cron":
      return cronOf(timing.expression, timing.timezone)
        .nextRun(new Date(Math.max(previous, now)))
        ?.getTime();
    case "once":
      return undefined;
    case "interval": {
      const step = timing.seconds * 1000;
      if (previous > now) return previous;
      return previous + (Math.floor((now - previous) / step) + 1) * step;
    }
  }
}

/** How many occurrences fall in [from, to] (capped), to say how many runs were missed. */
export function countOccurrences(timing: ScheduleTiming, from: number, to: number, cap = 1000): number {
  if (to < from) return 0;
  switch (timing.kind) {
    case "once":
      return 1;
    case "interval":
      return Math.min(cap, Math.floor((to - from) / (timing.seconds * 1000)) + 1);
    case "cron": {
      const cron = cronOf(timing.expression, timing.timezone);
      let count = 1;
      let at = cron.nextRun(new Date(from));
      while (at && at.getTime() <= to && count < cap) {
        count++;
        at = cron.nextRun(at);
      }
      return count;
    }
  }
}

/** A short human description of a timing (CLI and tool output). */
export function describeTiming(timing: ScheduleTiming): string {
  switch (timing.kind) {
    case "cron":
      return `cron "${timing.expression}" (${timing.timezone})`;
    case "once":
      return `once at ${timing.at}`;
    case "interval":
      return `every ${timing.seconds} s`;
  }
}
