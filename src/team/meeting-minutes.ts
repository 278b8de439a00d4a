/** The minutes of a meeting: their JSON Schema (for structured output), Markdown, and search text. */
import type { JsonSchema } from "../llm/types.js";
import type { DecisionShape, MeetingMinutes, MeetingRecord } from "./meeting-types.js";

const strings = { type: "array", items: { type: "string" } };

/** The schema the moderator's minutes are held to; a choice allows only its options (or null). */
export function minutesSchema(shape: DecisionShape): JsonSchema {
  const decision =
    shape.kind === "choice"
      ? { enum: [...shape.options, null], description: "one of the options, or null for no decision" }
      : { type: ["string", "null"], description: "the decision, or null when none was reached" };
  return {
    type: "object",
    additionalProperties: false,
    required: ["decision", "reason", "options", "dissent", "actionItems", "openQuestions"],
    properties: {
      decision,
      reason: { type: "string", description: "why this decision, or why there is none" },
      options: {
        type: "array",
        items: {
          type: "object",
          additionalProperties: false,
          required: ["option", "for", "against"],
          properties: { option: { type: "string" }, for: strings, against: strings },
        },
      },
      dissent: {
        type: "array",
        items: {
          type: "object",
          additionalProperties: false,
          required: ["who", "why"],
          properties: { who: { type: "string" }, why: { type: "string" } },
        },
      },
      actionItems: {
        type: "array",
        items: {
          type: "object",
          additionalProperties: false,
          required: ["task", "owner", "due"],
          properties: {
            task: { type: "string" },
            owner: { type: "string", description: "@agent-id for an agent, or a person's name" },
            due: { type: "string", description: "a date (YYYY-MM-DD) or a time such as 'next week'" },
          },
        },
      },
      openQuestions: strings,
    },
  };
}

const list = (items: readonly string[]) => items.map((i) => `- ${i}`).join("\n");

/** The minutes as Markdown (the export, and the text of the minutes message). */
export function minutesMarkdown(meeting: MeetingRecord, minutes: MeetingMinutes): string {
  const lines = [`# Minutes: ${meeting.topic}`, ""];
  lines.push(
    `Participants: ${meeting.participants.map((p) => `@${p}`).join(", ")}. Moderator: @${meeting.moderatorId}. Rounds: ${Math.min(meeting.round, meeting.rounds)} of ${meeting.rounds}.`,
  );
  if (meeting.note) lines.push("", `> ${meeting.note}`);
  lines.push("", "## Decision", "", minutes.decision ?? "No decision.", "", minutes.reason);
  if (minutes.options.length > 0) {
    lines.push("", "## Options considered");
    for (const o of minutes.options) {
      lines.push("", `### ${o.option}`);
      if (o.for.length > 0) lines.push("", "For:", list(o.for));
      if (o.against.length > 0) lines.push("", "Against:", list(o.against));
    }
  }
  if (minutes.dissent.length > 0) {
    lines.push("", "## Dissent", "", list(minutes.dissent.map((d) => `${d.who}: ${d.why}`)));
  }
  if (minutes.actionItems.length > 0) {
    lines.push("", "## Action items", "", "| Task | Owner | Due |", "| --- | --- | --- |");
    for (const a of minutes.actionItems)
      lines.push(`| ${cell(a.task)} | ${cell(a.owner)} | ${cell(a.due)} |`);
  }
  if (minutes.openQuestions.length > 0) lines.push("", "## Open questions", "", list(minutes.openQuestions));
  return `${lines.join("\n")}\n`;
}

function cell(text: string): string {
  return text.replace(/\|/g, "\\|").replace(/\n/g, " ");
}

/** What a meeting is found by in the Decisions list: its topic and its minutes' words. */
export function meetingSearchText(meeting: MeetingRecord): string {
  const m = meeting.minutes;
  const parts = [meeting.topic];
  if (m) {
    parts.push(m.decision ?? "", m.reason, ...m.openQuestions);
    for (const o of m.options) parts.push(o.option, ...o.for, ...o.against);
    for (const d of m.dissent) parts.push(d.who, d.why);
    for (const a of m.actionItems) parts.push(a.task, a.owner);
  }
  return parts.join("\n").normalize("NFKC").toLowerCase();
}
