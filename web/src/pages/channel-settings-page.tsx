/**
 * Group (or direct chat) settings: name, leader, what happens to messages sent while an agent works,
 * members, the tools agents may run here without asking, the collaboration chain and its live flow.
 */

import { useEffect, useState } from "preact/hooks";
import { ChainEditor } from "../components/chain-editor.js";
import { ApprovalGrantsSection, QueueModeSection } from "../components/chat-work-settings.js";
import { askConfirm } from "../components/confirm-dialog.js";
import { ExportTemplateButton } from "../components/export-template-button.js";
import { FlowPanel } from "../components/flow-panel.js";
import { Link } from "../components/link.js";
import { MembersEditor } from "../components/members-editor.js";
import { useAction, useSelector, useServices } from "../hooks.js";
import { t } from "../i18n/index.js";
import { currentFlow } from "../state/chat.js";
import type { ChannelSummary, SessionUser } from "../types.js";
import { useOpenChannel } from "../use-open-channel.js";

function GeneralSection({ channel, canEdit }: { channel: ChannelSummary; canEdit: boolean }) {
  const { api, store, navigate } = useServices();
  const agents = useSelector((s) => s.agents);
  const [name, setName] = useState(channel.name);
  const [leader, setLeader] = useState(channel.leaderAgentId ?? "");
  useEffect(() => {
    setName(channel.name);
    setLeader(channel.leaderAgentId ?? "");
  }, [channel.name, channel.leaderAgentId]);
  const memberAgents = agents.filter((a) => channel.members.some((m) => m.type === "agent" && m.id === a.id));

  const [save, saving] = useAction(async () => {
    const updated = await api.updateChannel(channel.id, { name: name.trim(), leaderAgentId: leader || null });
    store.dispatch({ type: "channel_saved", channel: updated });
    store.dispatch({ type: "notice", kind: "info", text: t("channelSettings.saved") });
  });
  const [remove, removing] = useAction(async () => {
    if (
      !(await askConfirm({
        title: t("channelSettings.deleteTitle", { name: channel.name }),
        message: t("channelSettings.deleteMessage"),
      }))
    )
      return;
    await api.deleteChannel(channel.id);
    store.dispatch({ type: "channel_removed", channelId: channel.id });
    navigate({ name: "home" }, { replace: true });
  });

  return (
    <form
      class="form"
      data-testid="channel-general"
      onSubmit={(e) => {
        e.preventDefault();
        void save();
      }}
    >
      <fieldset class="form-grid" disabled={!canEdit}>
        <label class="field">
          <span>{t("channelSettings.name")}</span>
          <input
            value={name}
            required
            onInput={(e) => setName(e.currentTarget.value)}
            data-testid="channel-name-input"
          />
        </label>
        {channel.kind === "group" && (
          <label class="field">
            <span>{t("channelSettings.leader")}</span>
            <select
              value={leader}
              onChange={(e) => setLeader(e.currentTarget.value)}
              data-testid="channel-leader"
            >
              <option value="">{t("channelSettings.noLeader")}</option>
              {memberAgents.map((a) => (
                <option key={a.id} value={a.id}>
                  {a.emoji} {a.name}
                </option>
              ))}
            </select>
          </label>
        )}
      </fieldset>
      {canEdit && (
        <div class="form-actions">
          <button
            type="button"
            class="btn btn-danger"
            disabled={removing}
            onClick={() => void remove()}
            data-testid="channel-delete"
          >
            {t("channelSettings.delete")}
          </button>
          <button type="submit" class="btn btn-primary" disabled={saving} data-testid="channel-save">
            {t("channelSettings.save")}
          </button>
        </div>
      )}
    </form>
  );
}

/** The settings page of one channel. */
export function ChannelSettingsPage({ channelId, me }: { channelId: string; me: SessionUser }) {
  useOpenChannel(channelId);
  const { api } = useServices();
  const channels = useSelector((s) => s.channels);
  const agents = useSelector((s) => s.agents);
  const chat = useSelector((s) => s.chat);
  const channel = channels.list.find((c) => c.id === channelId);
  if (!channel) {
    return (
      <section class="page" data-testid="channel-settings-page">
        <p class="muted">{channels.loaded ? t("channelSettings.missing") : t("common.loading")}</p>
      </section>
    );
  }
  const canEdit =
    me.role !== "guest" && (me.role === "owner" || me.role === "admin" || channel.createdBy === me.id);
  const flow = chat?.channelId === channelId ? currentFlow(chat) : undefined;
  return (
    <section class="page" data-testid="channel-settings-page" data-channel-id={channelId}>
      <header class="page-head">
        <Link to={{ name: "channel", channelId }} class="back-link" testId="channel-back">
          ← {channel.name}
        </Link>
        <h2>{t("channelSettings.heading")}</h2>
        {channel.kind === "group" && me.role !== "guest" && (
          <>
            <span class="topbar-spacer" />
            <ExportTemplateButton
              load={() => api.exportChannel(channelId)}
              label={t("channelSettings.export")}
              title={t("channelSettings.exportTitle")}
              testId="channel-export"
            />
          </>
        )}
      </header>
      <div class="page-body">
        <GeneralSection channel={channel} canEdit={canEdit} />
        <QueueModeSection channel={channel} canEdit={canEdit} />
        <MembersEditor
          channel={channel}
          agents={agents}
          me={me}
          canEdit={canEdit && channel.kind === "group"}
        />
        <ApprovalGrantsSection channel={channel} agents={agents} me={me} canEdit={canEdit} />
        {channel.kind === "group" && <ChainEditor channel={channel} agents={agents} canEdit={canEdit} />}
        {channel.kind === "group" && (
          <section class="form" data-testid="flow-section">
            {flow ? (
              <FlowPanel flow={flow} agents={agents} />
            ) : (
              <p class="muted" data-testid="flow-none">
                {t("channelSettings.noFlowBefore")} <code>{t("channelSettings.noFlowCommand")}</code>{" "}
                {t("channelSettings.noFlowAfter")}
              </p>
            )}
          </section>
        )}
      </div>
    </section>
  );
}
