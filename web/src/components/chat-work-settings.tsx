/**
 * Chat settings about agents at work: what happens to a message sent while an agent answers (the
 * chat's queue mode), and the tools agents may run here without asking ("Always allow" answers),
 * each revocable.
 */
import { useEffect, useState } from "preact/hooks";
import { errorText } from "../api.js";
import { formatTime } from "../format.js";
import { useAction, useReportError, useServices } from "../hooks.js";
import { t } from "../i18n/index.js";
import { defaultQueueMode, QUEUE_MODE_INFO, QUEUE_MODES, queueModeOf } from "../state/queue-mode.js";
import type { AgentRecord, ApprovalGrant, ChannelRecord, QueueMode, SessionUser } from "../types.js";
import { notifySuccess } from "./notices.js";
import { usePersonName } from "./people.js";

/** "When you write while an agent is working": the chat's queue mode, saved as it is picked. */
export function QueueModeSection({ channel, canEdit }: { channel: ChannelRecord; canEdit: boolean }) {
  const { api, store } = useServices();
  const report = useReportError();
  const saved = queueModeOf(channel);
  const [mode, setMode] = useState<QueueMode>(saved);
  const [saving, setSaving] = useState(false);
  useEffect(() => setMode(saved), [saved]);
  const fallback = defaultQueueMode(channel.kind);

  const pick = async (next: QueueMode) => {
    setMode(next);
    setSaving(true);
    try {
      const updated = await api.updateChannel(channel.id, { queueMode: next });
      store.dispatch({ type: "channel_saved", channel: updated });
      notifySuccess(store, t("queue.saved"));
    } catch (err) {
      setMode(saved);
      report(err);
    } finally {
      setSaving(false);
    }
  };

  return (
    <section class="form" data-testid="queue-mode-section">
      <h3 id="queue-mode-title">{t("queue.title")}</h3>
      <div class="field queue-mode-field">
        <select
          value={mode}
          disabled={!canEdit || saving}
          aria-labelledby="queue-mode-title"
          aria-describedby="queue-mode-explanation"
          onChange={(e) => void pick(e.currentTarget.value as QueueMode)}
          data-testid="queue-mode-select"
        >
          {QUEUE_MODES.map((m) => (
            <option key={m} value={m}>
              {t(QUEUE_MODE_INFO[m].label)}
              {m === fallback ? ` ${t("queue.default")}` : ""}
            </option>
          ))}
        </select>
        <p id="queue-mode-explanation" class="muted field-help" data-testid="queue-mode-explanation">
          {t(QUEUE_MODE_INFO[mode].explanation)}
        </p>
      </div>
      {!canEdit && (
        <p class="muted field-help" data-testid="queue-mode-readonly">
          {t("queue.readonly")}
        </p>
      )}
    </section>
  );
}

type Grants =
  | { state: "loading" }
  | { state: "ready"; list: ApprovalGrant[] }
  | { state: "failed"; reason: string };

/** "Always allowed": the chat's grants, each with Revoke for its manager or the person who granted it. */
export function ApprovalGrantsSection({
  channel,
  agents,
  me,
  canEdit,
}: {
  channel: ChannelRecord;
  agents: AgentRecord[];
  me: SessionUser;
  canEdit: boolean;
}) {
  const { api, store } = useServices();
  const nameOf = usePersonName();
  const [grants, setGrants] = useState<Grants>({ state: "loading" });
  useEffect(() => {
    let live = true;
    setGrants({ state: "loading" });
    api
      .listApprovalGrants(channel.id)
      .then((list) => live && setGrants({ state: "ready", list }))
      .catch((err: unknown) => live && setGrants({ state: "failed", reason: errorText(err) }));
    return () => {
      live = false;
    };
  }, [api, channel.id]);

  const [revoke, revoking] = useAction(async (grant: ApprovalGrant) => {
    await api.revokeApprovalGrant(channel.id, grant.agentId, grant.tool);
    setGrants((g) =>
      g.state === "ready"
        ? {
            state: "ready",
            list: g.list.filter((x) => !(x.agentId === grant.agentId && x.tool === grant.tool)),
          }
        : g,
    );
    notifySuccess(store, t("grants.revoked", { agent: grant.agentId, tool: grant.tool }));
  });
  const agentById = new Map(agents.map((a) => [a.id, a]));

  return (
    <section class="form" data-testid="approval-grants">
      <h3>{t("grants.title")}</h3>
      <p class="muted field-help">{t("grants.intro")}</p>
      {grants.state === "loading" && <p class="muted">{t("common.loading")}</p>}
      {grants.state === "failed" && (
        <p class="form-error" role="alert" data-testid="approval-grants-error">
          {t("grants.loadFailed", { reason: grants.reason })}
        </p>
      )}
      {grants.state === "ready" && grants.list.length === 0 && (
        <p class="muted" data-testid="approval-grants-empty">
          {t("grants.empty")}
        </p>
      )}
      {grants.state === "ready" && grants.list.length > 0 && (
        <ul class="member-list grant-list">
          {grants.list.map((grant) => {
            const agent = agentById.get(grant.agentId);
            const mayRevoke = canEdit || grant.grantedBy === me.id;
            return (
              <li
                key={`${grant.agentId}:${grant.tool}`}
                class="member grant"
                data-testid="approval-grant"
                data-agent-id={grant.agentId}
                data-tool={grant.tool}
              >
                <span class="grant-what">
                  <span aria-hidden="true">{agent?.emoji ?? "🤖"} </span>
                  <strong>{agent?.name ?? grant.agentId}</strong> {t("grants.mayRun")}{" "}
                  <code>{grant.tool}</code>
                </span>
                <span class="muted grant-meta">
                  {t("grants.allowedBy", { name: nameOf(grant.grantedBy) ?? t("grants.anotherMember") })} ·{" "}
                  {formatTime(grant.grantedAt)}
                </span>
                {mayRevoke && (
                  <button
                    type="button"
                    class="btn btn-small"
                    disabled={revoking}
                    onClick={() => void revoke(grant)}
                    data-testid="approval-grant-revoke"
                  >
                    {t("grants.revoke")}
                  </button>
                )}
              </li>
            );
          })}
        </ul>
      )}
    </section>
  );
}
