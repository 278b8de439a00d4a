/**
 * A meeting's minutes as a card in the chat: the decision (or none, and why), the options with
 * their arguments, dissent, action items (an agent's can be started here) and open questions, with
 * the Markdown export.
 */
import { useAction, useServices } from "../hooks.js";
import { t } from "../i18n/index.js";
import type { AgentRecord, MeetingMinutes } from "../types.js";
import { meetingApi, minutesMarkdownUrl } from "./meeting-api.js";

export interface MinutesCardProps {
  meetingId: string;
  topic: string;
  minutes: MeetingMinutes;
  note?: string | undefined;
  agents: Map<string, AgentRecord>;
}

/** The agent an action item's owner names (`@id`, the id, or its name). */
function ownerAgent(owner: string, agents: Map<string, AgentRecord>): AgentRecord | undefined {
  const key = owner.trim().replace(/^@/, "").toLowerCase();
  return [...agents.values()].find((a) => a.id.toLowerCase() === key || a.name.toLowerCase() === key);
}

function StartItem({ meetingId, index }: { meetingId: string; index: number }) {
  const { api } = useServices();
  const [start, busy] = useAction(
    () => meetingApi(api).startItem(meetingId, index),
    () => t("meeting.itemStarted"),
  );
  return (
    <button
      type="button"
      class="btn btn-small"
      disabled={busy}
      onClick={() => void start()}
      data-testid="minutes-start-item"
    >
      ▶ {t("meeting.itemStart")}
    </button>
  );
}

/** The minutes card. */
export function MinutesCard({ meetingId, topic, minutes, note, agents }: MinutesCardProps) {
  return (
    <section class="minutes-card" data-testid="minutes-card" data-meeting-id={meetingId}>
      <header class="minutes-head">
        <span class="minutes-kicker">📋 {t("meeting.minutes")}</span>
        <h3 class="minutes-topic">{topic}</h3>
        <a
          class="btn btn-small"
          href={minutesMarkdownUrl(meetingId)}
          download="minutes.md"
          data-testid="minutes-export"
        >
          ⬇ Markdown
        </a>
      </header>
      {note && <p class="minutes-note muted">{note}</p>}
      <div
        class={`minutes-decision${minutes.decision === null ? " none" : ""}`}
        data-testid="minutes-decision"
      >
        <strong>
          {minutes.decision === null
            ? t("meeting.noDecision")
            : t("meeting.decision", { decision: minutes.decision })}
        </strong>
        <p>{minutes.reason}</p>
      </div>
      {minutes.options.length > 0 && (
        <details class="minutes-section" open>
          <summary>{t("meeting.optionsConsidered", { count: minutes.options.length })}</summary>
          <ul class="minutes-options">
            {minutes.options.map((o) => (
              <li key={o.option}>
                <strong>{o.option}</strong>
                {o.for.length > 0 && <p class="minutes-for">+ {o.for.join("; ")}</p>}
                {o.against.length > 0 && <p class="minutes-against">− {o.against.join("; ")}</p>}
              </li>
            ))}
          </ul>
        </details>
      )}
      {minutes.dissent.length > 0 && (
        <div class="minutes-section">
          <h4>{t("meeting.dissent")}</h4>
          <ul>
            {minutes.dissent.map((d) => (
              <li key={`${d.who}-${d.why}`}>
                <strong>{d.who}</strong>: {d.why}
              </li>
            ))}
          </ul>
        </div>
      )}
      {minutes.actionItems.length > 0 && (
        <div class="minutes-section">
          <h4>{t("meeting.actionItems")}</h4>
          <ul class="minutes-items" data-testid="minutes-items">
            {minutes.actionItems.map((item, i) => (
              <li key={`${item.task}-${i}`} class="minutes-item">
                <span class="minutes-item-task">{item.task}</span>
                <span class="muted">{t("meeting.ownerDue", { owner: item.owner, due: item.due })}</span>
                {ownerAgent(item.owner, agents) && <StartItem meetingId={meetingId} index={i} />}
              </li>
            ))}
          </ul>
        </div>
      )}
      {minutes.openQuestions.length > 0 && (
        <div class="minutes-section">
          <h4>{t("meeting.openQuestions")}</h4>
          <ul>
            {minutes.openQuestions.map((q) => (
              <li key={q}>{q}</li>
            ))}
          </ul>
        </div>
      )}
    </section>
  );
}
