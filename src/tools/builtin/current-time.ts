/** current_time: the date and time now, in a chosen IANA time zone. */
import * as z from "zod";
import { defineTool, type ZodTool } from "../types.js";
import { errorResult, toolFailure } from "./tool-error.js";

export interface TimeDescription {
  /** Local time with its UTC offset, e.g. 2024-05-01T14:03:07+02:00. */
  iso: string;
  weekday: string;
  timeZone: string;
  /** e.g. +02:00 */
  offset: string;
  utc: string;
  unixSeconds: number;
}

/** The canonical name of an IANA time zone; throws a tool failure naming the zone when it is unknown. */
export function validateTimeZone(timeZone: string): string {
  try {
    return new Intl.DateTimeFormat("en-US", { timeZone }).resolvedOptions().timeZone;
  } catch {
    throw toolFailure(
      `Unknown time zone "${timeZone}".`,
      "use an IANA time zone name such as Europe/Paris, America/New_York or UTC",
    );
  }
}

/** Describes `date` in `timeZone` (already validated). */
export function describeTime(date: Date, timeZone: string): TimeDescription {
  const parts = new Intl.DateTimeFormat("en-US", {
    timeZone,
    hourCycle: "h23",
    year: "numeric",
    month: "2-digit",
    day: "2-digit",
    hour: "2-digit",
    minute: "2-digit",
    second: "2-digit",
    weekday: "long",
    timeZoneName: "longOffset",
  }).formatToParts(date);
  const get = (type: Intl.DateTimeFormatPartTypes) => parts.find((p) => p.type === type)?.value ?? "";
  // "GMT+02:00", or plain "GMT" for a zero offset.
  const offset = get("timeZoneName").replace(/^GMT/, "") || "+00:00";
  const iso = `${get("year")}-${get("month")}-${get("day")}T${get("hour")}:${get("minute")}:${get("second")}${offset}`;
  return {
    iso,
    weekday: get("weekday"),
    timeZone,
    offset,
    utc: date.toISOString(),
    unixSeconds: Math.floor(date.getTime() / 1000),
  };
}

const currentTimeParams = z.object({
  timezone: z.string().optional().describe("IANA time zone, e.g. Europe/Paris (default: the system's zone)"),
});

/** current_time: now, as ISO time with offset, weekday, zone and unix seconds. */
export const currentTimeTool: ZodTool = defineTool({
  name: "current_time",
  description: "Get the current date and time, optionally in an IANA time zone such as Asia/Tokyo.",
  parameters: currentTimeParams,
  async execute(args) {
    try {
      const zone = validateTimeZone(args.timezone ?? Intl.DateTimeFormat().resolvedOptions().timeZone);
      const now = describeTime(new Date(), zone);
      return {
        content: [
          `Time: ${now.iso} (${now.weekday})`,
          `Time zone: ${now.timeZone} (UTC${now.offset})`,
          `UTC: ${now.utc}`,
          `Unix seconds: ${now.unixSeconds}`,
        ].join("\n"),
        data: now,
      };
    } catch (err) {
      return errorResult(err);
    }
  },
});
