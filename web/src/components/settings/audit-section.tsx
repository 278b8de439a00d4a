/**
 * The audit log (owners and admins): who did what, when and from where, filtered by person, action
 * and time; exported as CSV or JSON Lines; its hash chain checked; and how long entries are kept.
 */

import { useEffect, useState } from "preact/hooks";
import { describeUserAgent, formatJson, formatTime } from "../../format.js";
import { useAction, useReportError, useServices } from "../../hooks.js";
import { t } from "../../i18n/index.js";
import type { AuditEntry, AuditFilters } from "../../types.js";

/** A `<input type="date">` value as the start of that day (local time), in ms. */
function dayStart(value: string): number | undefined {
  if (!value) return undefined;
  const time = new Date(`${value}T00:00:00`).getTime();
  return Number.isNaN(time) ? undefined : time;
}

function Changes({ entry }: { entry: AuditEntry }) {
  const hasBefore = entry.before !== null && entry.before !== undefined;
  const hasAfter = entry.after !== null && entry.after !== undefined;
  if (!hasBefore && !hasAfter) return null;
  return (
    <details class="audit-changes">
      <summary>{t("settings.audit.changes")}</summary>
      {hasBefore && (
        <>
          <strong>{t("settings.audit.before")}</strong>
          <pre>{formatJson(entry.before)}</pre>
        </>
      )}
      {hasAfter && (
        <>
          <strong>{t("settings.audit.after")}</strong>
          <pre>{formatJson(entry.after)}</pre>
        </>
      )}
    </details>
  );
}

function Retention() {
  const { api } = useServices();
  const report = useReportError();
  const [days, setDays] = useState<string>("");
  useEffect(() => {
    api
      .auditSettings()
      .then((s) => setDays(String(s.retentionDays)))
      .catch(report);
  }, [api]);
  const [save, saving] = useAction(
    () => api.setAuditRetention(Number(days)),
    (saved) =>
      saved.retentionDays === 0
        ? t("settings.audit.retentionForever")
        : t("settings.audit.retentionSaved", { days: saved.retentionDays }),
  );
  return (
    <form
      class="inline-form audit-retention"
      onSubmit={(e) => {
        e.preventDefault();
        void save();
      }}
    >
      <label>
        {t("settings.audit.retention")}{" "}
        <input
          type="number"
          min={0}
          max={36500}
          step={1}
          required
          value={days}
          onInput={(e) => setDays(e.currentTarget.value)}
          data-testid="audit-retention"
        />{" "}
        {t("settings.audit.retentionDays")}
      </label>
      <button
        type="submit"
        class="btn btn-small"
        disabled={saving || days === ""}
        data-testid="audit-retention-save"
      >
        {t("settings.audit.save")}
      </button>
    </form>
  );
}

/** The Audit tab. */
export function AuditSection() {
  const { api, store } = useServices();
  const report = useReportError();
  const [actor, setActor] = useState("");
  const [action, setAction] = useState("");
  const [from, setFrom] = useState("");
  const [to, setTo] = useState("");
  const [filters, setFilters] = useState<AuditFilters>({});
  const [entries, setEntries] = useState<AuditEntry[] | undefined>(undefined);
  const [more, setMore] = useState(false);

  const load = (applied: AuditFilters, before?: number) =>
    api
      .auditEntries(applied, before)
      .then(({ entries: page }) => {
        setEntries((shown) => (before === undefined ? page : [...(shown ?? []), ...page]));
        setMore(page.length === 100);
      })
      .catch(report);
  useEffect(() => {
    void load(filters);
  }, [api, filters]);

  const apply = () => {
    const until = dayStart(to);
    const next: AuditFilters = {};
    if (actor.trim()) next.actor = actor.trim();
    if (action.trim()) next.action = action.trim();
    const start = dayStart(from);
    if (start !== undefined) next.from = start;
    // The "until" day is included: up to the start of the next.
    if (until !== undefined) next.to = until + 24 * 60 * 60 * 1000;
    setFilters(next);
  };
  const [verify, verifying] = useAction(async () => {
    const result = await api.auditVerify();
    store.dispatch(
      result.ok
        ? { type: "notice", kind: "info", text: t("settings.audit.verified", { count: result.checked }) }
        : {
            type: "notice",
            kind: "error",
            text: t("settings.audit.tampered", {
              problems: result.problems.map((p) => p.message).join("; "),
            }),
          },
    );
  });

  return (
    <div class="settings-section audit-section" data-testid="audit-section">
      <p class="muted">{t("settings.audit.intro")}</p>
      <form
        class="inline-form audit-filters"
        onSubmit={(e) => {
          e.preventDefault();
          apply();
        }}
      >
        <label>
          {t("settings.audit.actor")}{" "}
          <input
            value={actor}
            placeholder={t("settings.audit.actorPlaceholder")}
            onInput={(e) => setActor(e.currentTarget.value)}
            data-testid="audit-actor"
          />
        </label>
        <label>
          {t("settings.audit.action")}{" "}
          <input
            value={action}
            placeholder={t("settings.audit.actionPlaceholder")}
            onInput={(e) => setAction(e.currentTarget.value)}
            data-testid="audit-action"
          />
        </label>
        <label>
          {t("settings.audit.from")}{" "}
          <input
            type="date"
            value={from}
            onInput={(e) => setFrom(e.currentTarget.value)}
            data-testid="audit-from"
          />
        </label>
        <label>
          {t("settings.audit.to")}{" "}
          <input
            type="date"
            value={to}
            onInput={(e) => setTo(e.currentTarget.value)}
            data-testid="audit-to"
          />
        </label>
        <button type="submit" class="btn btn-primary btn-small" data-testid="audit-apply">
          {t("settings.audit.apply")}
        </button>
      </form>
      <div class="inline-form audit-actions">
        <a
          class="btn btn-small"
          href={api.auditExportUrl(filters, "csv")}
          download
          data-testid="audit-export-csv"
        >
          {t("settings.audit.exportCsv")}
        </a>
        <a
          class="btn btn-small"
          href={api.auditExportUrl(filters, "jsonl")}
          download
          data-testid="audit-export-jsonl"
        >
          {t("settings.audit.exportJsonl")}
        </a>
        <button
          type="button"
          class="btn btn-small"
          disabled={verifying}
          onClick={() => void verify()}
          data-testid="audit-verify"
        >
          {t("settings.audit.verify")}
        </button>
      </div>
      {entries === undefined ? (
        <p class="muted">{t("common.loading")}</p>
      ) : entries.length === 0 ? (
        <p class="muted">{t("settings.audit.empty")}</p>
      ) : (
        <div class="table-scroll">
          <table class="table audit-table" data-testid="audit-list">
            <thead>
              <tr>
                <th>{t("settings.audit.time")}</th>
                <th>{t("settings.audit.actor")}</th>
                <th>{t("settings.audit.action")}</th>
                <th>{t("settings.audit.target")}</th>
                <th class="wide-only">{t("settings.audit.origin")}</th>
                <th>{t("settings.audit.changes")}</th>
              </tr>
            </thead>
            <tbody>
              {entries.map((entry) => (
                <tr key={entry.seq} data-testid="audit-row" data-action={entry.action}>
                  <td class="nowrap" title={new Date(entry.at).toISOString()}>
                    {formatTime(entry.at)}
                  </td>
                  <td>{entry.actorName ?? entry.actorId ?? t("settings.audit.unknownActor")}</td>
                  <td>
                    <code>{entry.action}</code>
                  </td>
                  <td>{entry.target ?? ""}</td>
                  <td class="wide-only" title={entry.userAgent ?? undefined}>
                    {[
                      entry.ip,
                      entry.userAgent ? describeUserAgent(entry.userAgent) : undefined,
                      entry.instance,
                    ]
                      .filter(Boolean)
                      .join(" · ")}
                  </td>
                  <td>
                    <Changes entry={entry} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {more && entries && (
        <button
          type="button"
          class="btn btn-small"
          onClick={() => void load(filters, entries.at(-1)?.seq)}
          data-testid="audit-more"
        >
          {t("settings.audit.more")}
        </button>
      )}
      <h3>{t("settings.audit.retentionTitle")}</h3>
      <Retention />
    </div>
  );
}
