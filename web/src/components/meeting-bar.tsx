/**
 * The meeting going on in a group, above its messages: topic, round, who speaks now, and the
 * people's controls (one more round, end now with minutes, stop). Also the header's buttons that
 * open the meeting form and the Decisions list.
 */
import { useEffect, useState } from "preact/hooks";
import { useAction, useServices } from "../hooks.js";
import { t } from "../i18n/index.js";
import type { AgentRecord, ChannelRecord, MeetingRecord } from "../types.js";
import { DecisionsList } from "./decisions-list.js";
import { meetingApi } from "./meeting-api.js";
import { MeetingForm } from "./meeting-form.js";

const OPEN = new Set(["running", "closing"]);

/** The channel's meeting in progress: from the live events, else as the server lists it on opening. */
function useOpenMeeting(channelId: string, live: MeetingRecord | undefined): MeetingRecord | undefined {
  const { api } = useServices();
  const [loaded, setLoaded] = useState<MeetingRecord | undefined>(undefined);
  useEffect(() => {
    let stale = false;
    setLoaded(undefined);
    meetingApi(api)
      .list(channelId)
      .then((list) => {
        if (!stale) setLoaded(list.find((m) => OPEN.has(m.status)));
      })
      .catch(() => undefined);
    return () => {
      stale = true;
    };
  }, [api, channelId]);
  const latest = live && (!loaded || live.updatedAt >= loaded.updatedAt) ? live : loaded;
  return latest && OPEN.has(latest.status) ? latest : undefined;
}

/** The bar of the meeting in progress (nothing when there is none). */
export function MeetingBar({
  channelId,
  live,
  agents,
}: {
  channelId: string;
  live: MeetingRecord | undefined;
  agents: readonly AgentRecord[];
}) {
  const { api } = useServices();
  const meeting = useOpenMeeting(channelId, live);
  const [act, busy] = useAction((action: "more" | "end" | "stop") =>
    meetingApi(api).act(meeting?.id ?? "", action),
  );
  if (!meeting) return null;
  const name = (id: string) => {
    const agent = agents.find((a) => a.id === id);
    return agent ? `${agent.emoji} ${agent.name}` : `@${id}`;
  };
  const speaking =
    meeting.status === "closing"
      ? t("meeting.writing", { name: name(meeting.moderatorId) })
      : t("meeting.speaking", { name: name(meeting.participants[meeting.speaker] ?? "") });
  return (
    <section
      class="meeting-bar"
      aria-label={t("meeting.inProgress")}
      data-testid="meeting-bar"
      data-status={meeting.status}
      data-round={meeting.round}
      data-speaker={meeting.participants[meeting.speaker]}
    >
      <div class="meeting-bar-text">
        <strong class="meeting-bar-topic">🗣 {meeting.topic}</strong>
        <span class="muted" data-testid="meeting-speaking">
          {meeting.status === "running"
            ? `${t("meeting.round", { round: meeting.round, rounds: meeting.rounds })} · `
            : ""}
          {speaking}
        </span>
        <ol class="meeting-speakers" aria-label={t("meeting.order")}>
          {meeting.participants.map((id, i) => (
            <li
              key={id}
              class={meeting.status === "running" && i === meeting.speaker ? "speaking" : ""}
              data-testid={`meeting-speaker-${id}`}
            >
              {name(id)}
            </li>
          ))}
        </ol>
      </div>
      {meeting.status === "running" && (
        <div class="meeting-bar-actions">
          <button
            type="button"
            class="btn btn-small"
            disabled={busy}
            onClick={() => void act("more")}
            data-testid="meeting-more"
          >
            {t("meeting.moreRound")}
          </button>
          <button
            type="button"
            class="btn btn-small"
            disabled={busy}
            onClick={() => void act("end")}
            data-testid="meeting-end"
          >
            {t("meeting.end")}
          </button>
          <button
            type="button"
            class="btn btn-small btn-danger"
            disabled={busy}
            onClick={() => void act("stop")}
            data-testid="meeting-stop"
          >
            ■ {t("flow.stop")}
          </button>
        </div>
      )}
    </section>
  );
}

/** The header's Meeting and Decisions buttons of a group, with their dialogs. */
export function MeetingButtons({
  channel,
  agents,
}: {
  channel: ChannelRecord;
  agents: readonly AgentRecord[];
}) {
  const [open, setOpen] = useState<"form" | "decisions" | undefined>(undefined);
  if (channel.kind !== "group") return null;
  return (
    <>
      <div class="meeting-head-buttons">
        <button
          type="button"
          class="btn btn-small"
          onClick={() => setOpen("form")}
          aria-label={t("meeting.start")}
          title={t("meeting.start")}
          data-testid="meeting-open-form"
        >
          🗣<span class="btn-label"> {t("meeting.button")}</span>
        </button>
        <button
          type="button"
          class="btn btn-small"
          onClick={() => setOpen("decisions")}
          aria-label={t("meeting.decisions")}
          title={t("meeting.decisions")}
          data-testid="decisions-open"
        >
          📋<span class="btn-label"> {t("meeting.decisions")}</span>
        </button>
      </div>
      {open === "form" && (
        <MeetingForm channel={channel} agents={agents} onClose={() => setOpen(undefined)} />
      )}
      {open === "decisions" && (
        <DecisionsList channel={channel} agents={agents} onClose={() => setOpen(undefined)} />
      )}
    </>
  );
}
