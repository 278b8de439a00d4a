/** A group's Decisions list: its meetings with minutes, newest first, searchable, each opening its card. */
import { useEffect, useMemo, useState } from "preact/hooks";
import { errorText } from "../api.js";
import { formatTime } from "../format.js";
import { useServices } from "../hooks.js";
import { t } from "../i18n/index.js";
import type { AgentRecord, ChannelRecord, MeetingRecord } from "../types.js";
import { meetingApi } from "./meeting-api.js";
import { MinutesCard } from "./minutes-card.js";
import { Modal } from "./modal.js";

export interface DecisionsListProps {
  channel: ChannelRecord;
  agents: readonly AgentRecord[];
  onClose: () => void;
}

/** The Decisions list, in a dialog. */
export function DecisionsList({ channel, agents, onClose }: DecisionsListProps) {
  const { api } = useServices();
  const [query, setQuery] = useState("");
  const [meetings, setMeetings] = useState<MeetingRecord[] | undefined>(undefined);
  const [problem, setProblem] = useState<string | undefined>(undefined);
  const [openId, setOpenId] = useState<string | undefined>(undefined);
  const byId = useMemo(() => new Map(agents.map((a) => [a.id, a])), [agents]);
  useEffect(() => {
    let stale = false;
    const timer = setTimeout(() => {
      meetingApi(api)
        .list(channel.id, query)
        .then((list) => {
          if (stale) return;
          setProblem(undefined);
          setMeetings(list.filter((m) => m.minutes !== undefined));
        })
        .catch((err: unknown) => {
          if (!stale) setProblem(errorText(err));
        });
    }, 200);
    return () => {
      stale = true;
      clearTimeout(timer);
    };
  }, [api, channel.id, query]);

  return (
    <Modal title={t("meeting.decisionsOf", { name: channel.name })} onClose={onClose} testId="decisions-list">
      <input
        type="search"
        class="decisions-search"
        placeholder={t("meeting.searchPlaceholder")}
        value={query}
        onInput={(e) => setQuery(e.currentTarget.value)}
        aria-label={t("meeting.searchLabel")}
        data-testid="decisions-search"
      />
      {problem && (
        <p class="field-error" role="alert">
          {problem}
        </p>
      )}
      {meetings === undefined ? (
        <p class="muted">{t("common.loading")}</p>
      ) : meetings.length === 0 ? (
        <p class="muted" data-testid="decisions-empty">
          {query.trim() ? t("meeting.noMatch") : t("meeting.noDecisions")}
        </p>
      ) : (
        <ul class="decisions" data-testid="decisions">
          {meetings.map((m) => (
            <li key={m.id} class="decision-row" data-testid="decision-row">
              <button
                type="button"
                class="decision-summary"
                aria-expanded={openId === m.id}
                onClick={() => setOpenId(openId === m.id ? undefined : m.id)}
              >
                <strong>{m.topic}</strong>
                <span class="muted">
                  {m.minutes?.decision ?? t("meeting.noDecision")} · {formatTime(m.endedAt ?? m.updatedAt)}
                </span>
              </button>
              {openId === m.id && m.minutes && (
                <MinutesCard
                  meetingId={m.id}
                  topic={m.topic}
                  minutes={m.minutes}
                  note={m.note}
                  agents={byId}
                />
              )}
            </li>
          ))}
        </ul>
      )}
    </Modal>
  );
}
