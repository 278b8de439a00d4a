/** Schedules: the list with next runs, on/off, run now and delete; recent runs of one; a create form. */

import { useEffect, useState } from "preact/hooks";
import { askConfirm } from "../components/confirm-dialog.js";
import { describeTiming, type Schedule, type ScheduleRun, scheduleApi } from "../components/schedule-api.js";
import { ScheduleCreateForm } from "../components/schedule-form.js";
import { formatTime, oneLine } from "../format.js";
import { useAction, useReportError, useSelector, useServices } from "../hooks.js";
import { t } from "../i18n/index.js";
import type { SessionUser } from "../types.js";

// Runs end on their own; the page looks again this often while it is open.
const REFRESH_MS = 5000;

function statusBadge(status: ScheduleRun["status"]): string {
  return `badge badge-${status === "skipped" ? "step-skipped" : status}`;
}

function RunList({ schedule }: { schedule: Schedule }) {
  const { api } = useServices();
  const report = useReportError();
  const [runs, setRuns] = useState<ScheduleRun[] | undefined>(undefined);
  useEffect(() => {
    let live = true;
    const load = () =>
      scheduleApi(api)
        .runs(schedule.id)
        .then((list) => live && setRuns(list))
        .catch(report);
    void load();
    const timer = setInterval(load, REFRESH_MS);
    return () => {
      live = false;
      clearInterval(timer);
    };
  }, [api, schedule.id, schedule.lastRunAt]);

  if (runs === undefined) return <p class="muted">{t("schedules.loadingRuns")}</p>;
  if (runs.length === 0) return <p class="muted">{t("schedules.noRuns")}</p>;
  return (
    <ul class="session-list" data-testid="schedule-runs">
      {runs.map((run) => (
        <li key={run.id} data-testid="schedule-run" data-status={run.status}>
          <span class={statusBadge(run.status)}>{run.status}</span>{" "}
          <span class="muted">
            {formatTime(run.startedAt)} · {run.trigger}
          </span>
          {(run.output || run.error) && (
            <details>
              <summary data-testid="schedule-run-summary">
                {oneLine(run.error ?? run.output ?? "", 120)}
              </summary>
              <pre class="tool-pre" data-testid="schedule-run-text">
                {run.status === "done" ? run.output : run.error}
              </pre>
            </details>
          )}
        </li>
      ))}
    </ul>
  );
}

/** The schedules page. */
export function SchedulesPage({ me }: { me: SessionUser }) {
  const { api } = useServices();
  const report = useReportError();
  const channels = useSelector((s) => s.channels.list);
  const [schedules, setSchedules] = useState<Schedule[] | undefined>(undefined);
  const [selected, setSelected] = useState<string | undefined>(undefined);
  const client = scheduleApi(api);

  const reload = () => client.list().then(setSchedules).catch(report);
  useEffect(() => {
    void reload();
    const timer = setInterval(() => void reload(), REFRESH_MS);
    return () => clearInterval(timer);
  }, [api]);

  const [toggle] = useAction(
    async (s: Schedule) => {
      await client.update(s.id, { enabled: !s.enabled });
      await reload();
      return s.enabled
        ? t("schedules.turnedOff", { name: s.name })
        : t("schedules.turnedOn", { name: s.name });
    },
    (text) => text,
  );
  const [runNow] = useAction(async (s: Schedule) => {
    const run = await client.runNow(s.id);
    if (run.status === "skipped") throw new Error(run.error ?? "A run is still in progress.");
    setSelected(s.id);
    await reload();
  });
  const [remove] = useAction(
    async (s: Schedule) => {
      if (
        !(await askConfirm({
          title: t("schedules.deleteTitle", { name: s.name }),
          message: t("schedules.deleteMessage"),
        }))
      )
        return;
      await client.remove(s.id);
      if (selected === s.id) setSelected(undefined);
      await reload();
      return t("schedules.deleted", { name: s.name });
    },
    (text) => text,
  );

  const channelName = (id: string) => channels.find((c) => c.id === id)?.name ?? id;
  const shown = schedules?.find((s) => s.id === selected);

  return (
    <section class="page" data-testid="schedules-page">
      <header class="page-head">
        <h2>{t("schedules.title")}</h2>
        <span class="muted">{t("schedules.intro")}</span>
      </header>
      <div class="page-body">
        {schedules === undefined ? (
          <p class="muted">{t("common.loading")}</p>
        ) : schedules.length === 0 ? (
          <p class="muted" data-testid="schedules-empty">
            {t("schedules.empty")}
          </p>
        ) : (
          <table class="table" data-testid="schedule-list">
            <thead>
              <tr>
                <th>{t("schedules.name")}</th>
                <th>{t("schedules.when")}</th>
                <th>{t("schedules.what")}</th>
                <th>{t("schedules.next")}</th>
                <th>{t("schedules.on")}</th>
                <th />
              </tr>
            </thead>
            <tbody>
              {schedules.map((s) => (
                <tr key={s.id} data-testid="schedule-row" data-schedule-id={s.id}>
                  <td>
                    <button
                      type="button"
                      class="btn btn-small"
                      aria-pressed={selected === s.id}
                      title={t("schedules.showRuns")}
                      onClick={() => setSelected(selected === s.id ? undefined : s.id)}
                      data-testid="schedule-show-runs"
                    >
                      {s.name}
                    </button>
                    {s.running && <span class="badge badge-running">{t("tools.status.running")}</span>}
                  </td>
                  <td data-label={t("schedules.when")}>{describeTiming(s.timing)}</td>
                  <td data-label={t("schedules.what")}>
                    {s.target.type === "agent"
                      ? `@${s.target.agentId} in ${channelName(s.target.channelId)}`
                      : `chain in ${channelName(s.target.channelId)}`}
                  </td>
                  <td data-label={t("schedules.next")} data-testid="schedule-next">
                    {s.nextRunAt ? formatTime(s.nextRunAt) : "—"}
                  </td>
                  <td data-label={t("schedules.on")}>
                    <input
                      type="checkbox"
                      checked={s.enabled}
                      aria-label={s.enabled ? t("schedules.turnOff") : t("schedules.turnOn")}
                      onChange={() => void toggle(s)}
                      data-testid="schedule-enabled"
                    />
                  </td>
                  <td>
                    <button
                      type="button"
                      class="btn btn-small"
                      disabled={s.running}
                      onClick={() => void runNow(s)}
                      data-testid="schedule-run-now"
                    >
                      {t("schedules.runNow")}
                    </button>{" "}
                    <button
                      type="button"
                      class="btn btn-small btn-danger"
                      onClick={() => void remove(s)}
                      data-testid="schedule-delete"
                    >
                      {t("common.delete")}
                    </button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
        {shown && (
          <section class="form" data-testid="schedule-detail">
            <h3>Recent runs of “{shown.name}”</h3>
            <RunList schedule={shown} />
          </section>
        )}
        {me.role !== "guest" && <ScheduleCreateForm onCreated={() => void reload()} />}
      </div>
    </section>
  );
}
