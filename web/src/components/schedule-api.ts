/**
 * The schedules API (`/api/schedules`) for the web app: its types, typed calls over the shared
 * ApiClient, and the create form's conversion to a request body (checked before sending).
 */
import type {
  MissedPolicy,
  ScheduleInput,
  ScheduleRecord,
  ScheduleRunRecord,
  ScheduleTarget,
  ScheduleTiming,
} from "../../../src/schedules/types.js";
import type { ApiClient } from "../api.js";

export type {
  MissedPolicy,
  ScheduleInput,
  ScheduleTarget,
  ScheduleTiming,
} from "../../../src/schedules/types.js";

import { currentLocale, t } from "../i18n/index.js";

/** A schedule as the API lists it: the stored record plus whether a run is in progress. */
export interface Schedule extends ScheduleRecord {
  running: boolean;
}

export type ScheduleRun = ScheduleRunRecord;

const enc = encodeURIComponent;

/** Typed calls of the schedules API. */
export function scheduleApi(api: ApiClient) {
  return {
    list: () => api.request<Schedule[]>("GET", "/api/schedules"),
    create: (input: ScheduleInput) => api.request<Schedule>("POST", "/api/schedules", input),
    update: (id: string, patch: Partial<ScheduleInput>) =>
      api.request<Schedule>("PATCH", `/api/schedules/${enc(id)}`, patch),
    remove: (id: string) => api.request<void>("DELETE", `/api/schedules/${enc(id)}`),
    runNow: (id: string) => api.request<ScheduleRun>("POST", `/api/schedules/${enc(id)}/run`),
    runs: (id: string, limit = 10) =>
      api.request<ScheduleRun[]>("GET", `/api/schedules/${enc(id)}/runs?limit=${limit}`),
  };
}

/** What the create form holds, all as typed text. */
export interface ScheduleForm {
  name: string;
  kind: ScheduleTiming["kind"];
  expression: string;
  timezone: string;
  /** `datetime-local` value, read in the browser's time zone. */
  at: string;
  minutes: string;
  targetType: ScheduleTarget["type"];
  channelId: string;
  agentId: string;
  prompt: string;
  missedPolicy: MissedPolicy;
}

/** The browser's IANA time zone (UTC when it cannot tell). */
export function browserTimezone(): string {
  try {
    return Intl.DateTimeFormat().resolvedOptions().timeZone || "UTC";
  } catch {
    return "UTC";
  }
}

/** An empty form: daily at 09:00 in the browser's time zone, answered by an agent. */
export function emptyScheduleForm(timezone = browserTimezone()): ScheduleForm {
  return {
    name: "",
    kind: "cron",
    expression: "0 9 * * *",
    timezone,
    at: "",
    minutes: "60",
    targetType: "agent",
    channelId: "",
    agentId: "",
    prompt: "",
    missedPolicy: "skip",
  };
}

/** The request body for a filled form, or the first problem to show. */
export function formToScheduleInput(form: ScheduleForm): { input: ScheduleInput } | { problem: string } {
  const name = form.name.trim();
  if (!name) return { problem: t("schedule.check.name") };
  let timing: ScheduleTiming;
  if (form.kind === "cron") {
    if (!form.expression.trim()) return { problem: t("schedule.check.cron") };
    timing = { kind: "cron", expression: form.expression.trim(), timezone: form.timezone.trim() || "UTC" };
  } else if (form.kind === "once") {
    const at = new Date(form.at);
    if (!form.at || Number.isNaN(at.getTime())) return { problem: t("schedule.check.at") };
    timing = { kind: "once", at: at.toISOString() };
  } else {
    const minutes = Number(form.minutes);
    if (!Number.isInteger(minutes) || minutes < 1) return { problem: t("schedule.check.minutes") };
    timing = { kind: "interval", seconds: minutes * 60 };
  }
  if (!form.channelId) return { problem: t("schedule.check.channel") };
  const prompt = form.prompt.trim();
  if (!prompt)
    return { problem: form.targetType === "agent" ? t("schedule.check.prompt") : t("schedule.check.input") };
  let target: ScheduleTarget;
  if (form.targetType === "agent") {
    if (!form.agentId) return { problem: t("schedule.check.agent") };
    target = { type: "agent", agentId: form.agentId, channelId: form.channelId, prompt };
  } else {
    target = { type: "chain", channelId: form.channelId, input: prompt };
  }
  return { input: { name, timing, target, missedPolicy: form.missedPolicy } };
}

/** A short description of when a schedule runs. */
export function describeTiming(timing: ScheduleTiming): string {
  switch (timing.kind) {
    case "cron":
      return t("schedule.timing.cron", { expression: timing.expression, timezone: timing.timezone });
    case "once":
      return t("schedule.timing.once", { at: new Date(timing.at).toLocaleString(currentLocale()) });
    case "interval":
      return timing.seconds % 60 === 0
        ? t("schedule.timing.minutes", { n: timing.seconds / 60 })
        : t("schedule.timing.seconds", { n: timing.seconds });
  }
}
