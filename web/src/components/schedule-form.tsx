/** The form that creates a schedule: when (cron with time zone, once, every N minutes) and what. */
import { useState } from "preact/hooks";
import { useAction, useSelector, useServices } from "../hooks.js";
import { t } from "../i18n/index.js";
import type { ChannelSummary } from "../types.js";
import { emptyScheduleForm, formToScheduleInput, type ScheduleForm, scheduleApi } from "./schedule-api.js";

/** Agents that can answer in a channel: the agent of a direct chat, the agent members of a group. */
function agentsIn(channel: ChannelSummary | undefined): string[] {
  if (!channel) return [];
  if (channel.kind === "direct") return channel.leaderAgentId ? [channel.leaderAgentId] : [];
  return channel.members.filter((m) => m.type === "agent").map((m) => m.id);
}

export interface ScheduleFormProps {
  onCreated: () => void;
}

/** The create form. */
export function ScheduleCreateForm({ onCreated }: ScheduleFormProps) {
  const { api } = useServices();
  const channels = useSelector((s) => s.channels.list);
  const agents = useSelector((s) => s.agents);
  const [form, setForm] = useState<ScheduleForm>(() => emptyScheduleForm());
  const [problem, setProblem] = useState<string | undefined>(undefined);
  const set = <K extends keyof ScheduleForm>(key: K, value: ScheduleForm[K]) =>
    setForm((f) => ({ ...f, [key]: value }));

  const channel = channels.find((c) => c.id === form.channelId);
  const agentIds = agentsIn(channel);
  const chainPossible = channel?.kind === "group" && channel.chain.length > 0;

  const [create, busy] = useAction(
    async () => {
      const result = formToScheduleInput(form);
      if ("problem" in result) {
        setProblem(result.problem);
        return undefined;
      }
      setProblem(undefined);
      const created = await scheduleApi(api).create(result.input);
      setForm(emptyScheduleForm(form.timezone));
      onCreated();
      return t("schedules.created", { name: created.name });
    },
    (text) => text,
  );

  return (
    <form
      class="form"
      data-testid="schedule-form"
      onSubmit={(e) => {
        e.preventDefault();
        void create();
      }}
    >
      <h3>{t("schedules.new")}</h3>
      <label class="field">
        <span>{t("schedules.name")}</span>
        <input
          value={form.name}
          onInput={(e) => set("name", e.currentTarget.value)}
          data-testid="schedule-name"
        />
      </label>
      <div class="segmented" role="radiogroup" aria-label={t("schedules.when")}>
        {(
          [
            ["cron", t("schedules.kind.cron")],
            ["once", t("schedules.kind.once")],
            ["interval", t("schedules.kind.interval")],
          ] as const
        ).map(([kind, label]) => (
          <label key={kind} class={form.kind === kind ? "active" : ""} data-testid={`schedule-kind-${kind}`}>
            <input
              type="radio"
              name="schedule-kind"
              checked={form.kind === kind}
              onChange={() => set("kind", kind)}
            />
            {label}
          </label>
        ))}
      </div>
      {form.kind === "cron" && (
        <div class="form-grid">
          <label class="field">
            <span>{t("schedules.cron")}</span>
            <input
              class="code-input"
              value={form.expression}
              onInput={(e) => set("expression", e.currentTarget.value)}
              data-testid="schedule-cron"
            />
          </label>
          <label class="field">
            <span>{t("schedules.timezone")}</span>
            <input
              value={form.timezone}
              onInput={(e) => set("timezone", e.currentTarget.value)}
              data-testid="schedule-timezone"
            />
          </label>
        </div>
      )}
      {form.kind === "once" && (
        <label class="field">
          <span>{t("schedules.at")}</span>
          <input
            type="datetime-local"
            value={form.at}
            onInput={(e) => set("at", e.currentTarget.value)}
            data-testid="schedule-at"
          />
        </label>
      )}
      {form.kind === "interval" && (
        <label class="field">
          <span>{t("schedules.everyMinutes")}</span>
          <input
            type="number"
            min={1}
            value={form.minutes}
            onInput={(e) => set("minutes", e.currentTarget.value)}
            data-testid="schedule-minutes"
          />
        </label>
      )}
      <label class="field">
        <span>{t("schedules.channel")}</span>
        <select
          value={form.channelId}
          onChange={(e) => {
            const next = channels.find((c) => c.id === e.currentTarget.value);
            setForm((f) => ({
              ...f,
              channelId: e.currentTarget.value,
              agentId: agentsIn(next)[0] ?? "",
              targetType: next?.kind === "group" && next.chain.length > 0 ? f.targetType : "agent",
            }));
          }}
          data-testid="schedule-channel"
        >
          <option value="">{t("schedules.pickChannel")}</option>
          {channels.map((c) => (
            <option key={c.id} value={c.id}>
              {c.kind === "group" ? `# ${c.name}` : c.name}
            </option>
          ))}
        </select>
      </label>
      {chainPossible && (
        <div class="segmented" role="radiogroup" aria-label={t("schedules.target")}>
          {(
            [
              ["agent", t("schedules.target.agent")],
              ["chain", t("schedules.target.chain")],
            ] as const
          ).map(([type, label]) => (
            <label
              key={type}
              class={form.targetType === type ? "active" : ""}
              data-testid={`schedule-target-${type}`}
            >
              <input
                type="radio"
                name="schedule-target"
                checked={form.targetType === type}
                onChange={() => set("targetType", type)}
              />
              {label}
            </label>
          ))}
        </div>
      )}
      {form.targetType === "agent" && (
        <label class="field">
          <span>{t("schedules.agent")}</span>
          <select
            value={form.agentId}
            onChange={(e) => set("agentId", e.currentTarget.value)}
            data-testid="schedule-agent"
          >
            <option value="">{channel ? t("flow.pickAgent") : t("schedules.pickChannelFirst")}</option>
            {agentIds.map((id) => {
              const agent = agents.find((a) => a.id === id);
              return (
                <option key={id} value={id}>
                  {agent ? `${agent.emoji} ${agent.name} (@${id})` : `@${id}`}
                </option>
              );
            })}
          </select>
        </label>
      )}
      <label class="field field-wide">
        <span>{form.targetType === "agent" ? t("schedules.prompt") : t("schedules.chainInput")}</span>
        <textarea
          rows={3}
          value={form.prompt}
          onInput={(e) => set("prompt", e.currentTarget.value)}
          data-testid="schedule-prompt"
        />
      </label>
      <label class="field">
        <span>{t("schedules.missed")}</span>
        <select
          value={form.missedPolicy}
          onChange={(e) => set("missedPolicy", e.currentTarget.value === "run_once" ? "run_once" : "skip")}
          data-testid="schedule-missed"
        >
          <option value="skip">{t("schedules.missedSkip")}</option>
          <option value="run_once">{t("schedules.missedRunOnce")}</option>
        </select>
      </label>
      {problem && (
        <p class="form-error" role="alert" data-testid="schedule-form-problem">
          {problem}
        </p>
      )}
      <div class="form-actions">
        <button type="submit" class="btn btn-primary" disabled={busy} data-testid="schedule-create">
          {t("schedules.create")}
        </button>
      </div>
    </form>
  );
}
