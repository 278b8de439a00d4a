/**
 * The form that starts a meeting in a group: topic, participants (every agent of the group by
 * default), rounds, moderator (the leader by default), an optional budget and the decision's shape.
 */
import { useState } from "preact/hooks";
import { useAction, useServices } from "../hooks.js";
import { t } from "../i18n/index.js";
import type { AgentRecord, ChannelRecord, MeetingInput } from "../types.js";
import { meetingApi } from "./meeting-api.js";
import { Modal } from "./modal.js";

export interface MeetingFormProps {
  channel: ChannelRecord;
  agents: readonly AgentRecord[];
  onClose: () => void;
}

/** The checked form as the API's input, or what is wrong with it. */
function toInput(form: {
  topic: string;
  participants: string[];
  rounds: string;
  moderatorId: string;
  budgetKind: "none" | "tokens" | "cost";
  budget: string;
  choice: boolean;
  options: string;
}): { input: MeetingInput } | { problem: string } {
  const topic = form.topic.trim();
  if (topic === "") return { problem: t("meeting.needTopic") };
  if (form.participants.length === 0) return { problem: t("meeting.needParticipant") };
  const rounds = Number(form.rounds);
  if (!Number.isInteger(rounds) || rounds < 1 || rounds > 10) return { problem: t("meeting.badRounds") };
  const input: MeetingInput = {
    topic,
    participants: form.participants,
    rounds,
    moderatorId: form.moderatorId,
  };
  if (form.budgetKind !== "none") {
    const amount = Number(form.budget);
    if (!(amount > 0)) return { problem: t("meeting.badBudget") };
    input.budget = form.budgetKind === "tokens" ? { tokens: Math.round(amount) } : { costUsd: amount };
  }
  if (form.choice) {
    const options = form.options
      .split("\n")
      .map((o) => o.trim())
      .filter(Boolean);
    if (options.length < 2) return { problem: "A choice needs at least two options, one per line." };
    input.decision = { kind: "choice", options };
  }
  return { input };
}

/** The meeting form, in a dialog. */
export function MeetingForm({ channel, agents, onClose }: MeetingFormProps) {
  const { api } = useServices();
  const inGroup = channel.members
    .filter((m) => m.type === "agent")
    .map((m) => agents.find((a) => a.id === m.id))
    .filter((a): a is AgentRecord => a !== undefined);
  const leader = inGroup.find((a) => a.id === channel.leaderAgentId) ?? inGroup[0];
  const [form, setForm] = useState({
    topic: "",
    participants: inGroup.map((a) => a.id),
    rounds: "2",
    moderatorId: leader?.id ?? "",
    budgetKind: "none" as "none" | "tokens" | "cost",
    budget: "",
    choice: false,
    options: "",
  });
  const [problem, setProblem] = useState<string | undefined>(undefined);
  const set = <K extends keyof typeof form>(key: K, value: (typeof form)[K]) =>
    setForm((f) => ({ ...f, [key]: value }));
  const [start, busy] = useAction(async () => {
    const checked = toInput(form);
    if ("problem" in checked) {
      setProblem(checked.problem);
      return;
    }
    setProblem(undefined);
    await meetingApi(api).start(channel.id, checked.input);
    onClose();
  }, t("meeting.started"));

  return (
    <Modal title={t("meeting.start")} onClose={onClose} testId="meeting-form">
      <form
        class="form meeting-form"
        onSubmit={(e) => {
          e.preventDefault();
          void start();
        }}
      >
        <label class="field">
          <span>{t("meeting.topic")}</span>
          <textarea
            rows={2}
            value={form.topic}
            onInput={(e) => set("topic", e.currentTarget.value)}
            placeholder={t("meeting.topicPlaceholder")}
            data-testid="meeting-topic"
          />
        </label>
        <fieldset class="field meeting-participants">
          <legend>{t("meeting.participants")}</legend>
          {inGroup.map((agent) => (
            <label key={agent.id} class="check">
              <input
                type="checkbox"
                checked={form.participants.includes(agent.id)}
                onChange={(e) =>
                  set(
                    "participants",
                    e.currentTarget.checked
                      ? inGroup
                          .map((a) => a.id)
                          .filter((id) => id === agent.id || form.participants.includes(id))
                      : form.participants.filter((id) => id !== agent.id),
                  )
                }
                data-testid={`meeting-participant-${agent.id}`}
              />
              {agent.emoji} {agent.name}
            </label>
          ))}
        </fieldset>
        <div class="form-grid">
          <label class="field">
            <span>{t("meeting.rounds")}</span>
            <input
              type="number"
              min={1}
              max={10}
              value={form.rounds}
              onInput={(e) => set("rounds", e.currentTarget.value)}
              data-testid="meeting-rounds"
            />
          </label>
          <label class="field">
            <span>{t("meeting.moderator")}</span>
            <select
              value={form.moderatorId}
              onChange={(e) => set("moderatorId", e.currentTarget.value)}
              data-testid="meeting-moderator"
            >
              {inGroup.map((a) => (
                <option key={a.id} value={a.id}>
                  {a.emoji} {a.name}
                </option>
              ))}
            </select>
          </label>
        </div>
        <div class="form-grid">
          <label class="field">
            <span>{t("meeting.budget")}</span>
            <select
              value={form.budgetKind}
              onChange={(e) => set("budgetKind", e.currentTarget.value as typeof form.budgetKind)}
              data-testid="meeting-budget-kind"
            >
              <option value="none">{t("meeting.noBudget")}</option>
              <option value="tokens">{t("meeting.tokens")}</option>
              <option value="cost">{t("meeting.cost")}</option>
            </select>
          </label>
          {form.budgetKind !== "none" && (
            <label class="field">
              <span>{form.budgetKind === "tokens" ? t("meeting.atMostTokens") : t("meeting.atMostUsd")}</span>
              <input
                type="number"
                min={0}
                step="any"
                value={form.budget}
                onInput={(e) => set("budget", e.currentTarget.value)}
                data-testid="meeting-budget"
              />
            </label>
          )}
        </div>
        <label class="check">
          <input
            type="checkbox"
            checked={form.choice}
            onChange={(e) => set("choice", e.currentTarget.checked)}
            data-testid="meeting-choice"
          />
          {t("meeting.choice")}
        </label>
        {form.choice && (
          <label class="field">
            <span>{t("meeting.options")}</span>
            <textarea
              rows={3}
              value={form.options}
              onInput={(e) => set("options", e.currentTarget.value)}
              data-testid="meeting-options"
            />
          </label>
        )}
        {problem && (
          <p class="field-error" role="alert" data-testid="meeting-problem">
            {problem}
          </p>
        )}
        <div class="form-actions">
          <button type="button" class="btn" onClick={onClose}>
            {t("common.cancel")}
          </button>
          <button type="submit" class="btn btn-primary" disabled={busy} data-testid="meeting-start">
            {t("meeting.startButton")}
          </button>
        </div>
      </form>
    </Modal>
  );
}
