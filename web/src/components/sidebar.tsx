/** The channel list (direct chats and groups, with unread counts) and the app's navigation. */
import { useState } from "preact/hooks";
import { useAction, useSelector, useServices } from "../hooks.js";
import { t } from "../i18n/index.js";
import { sidebarSections } from "../state/channels.js";
import { type Route, routeChannel } from "../state/route.js";
import type { AgentRecord, ChannelSummary } from "../types.js";
import { Link } from "./link.js";
import { Modal } from "./modal.js";
import { NewChannelForm } from "./new-channel-form.js";

/** The icon shown before a channel's name: `#` for groups, the agent's emoji for direct chats. */
export function channelIcon(channel: ChannelSummary, agents: AgentRecord[]): string {
  if (channel.kind === "group") return "#";
  const agentId = channel.leaderAgentId ?? channel.members.find((m) => m.type === "agent")?.id;
  return agents.find((a) => a.id === agentId)?.emoji ?? "🤖";
}

/** Pin and archive of one chat, for this person alone (kept on the server). */
function ChannelActions({ channel }: { channel: ChannelSummary }) {
  const { api, store } = useServices();
  const [change, busy] = useAction(async (patch: { pinned?: boolean; archived?: boolean }) => {
    const prefs = await api.setChannelPrefs(channel.id, patch);
    store.dispatch({ type: "channel_prefs", channelId: channel.id, prefs });
  });
  const pinned = channel.pinnedAt !== undefined;
  const archived = channel.archivedAt !== undefined;
  return (
    <span class="channel-actions">
      {!archived && (
        <button
          type="button"
          class="icon-btn channel-action"
          aria-label={t(pinned ? "sidebar.unpinNamed" : "sidebar.pinNamed", { name: channel.name })}
          title={pinned ? t("sidebar.unpin") : t("sidebar.pin")}
          aria-pressed={pinned}
          disabled={busy}
          onClick={() => void change({ pinned: !pinned })}
          data-testid="channel-pin"
        >
          📌
        </button>
      )}
      <button
        type="button"
        class="icon-btn channel-action"
        aria-label={t(archived ? "sidebar.restoreNamed" : "sidebar.archiveNamed", { name: channel.name })}
        title={archived ? t("sidebar.restore") : t("sidebar.archive")}
        disabled={busy}
        onClick={() => void change(archived ? { archived: false } : { archived: true, pinned: false })}
        data-testid={archived ? "channel-unarchive" : "channel-archive"}
      >
        {archived ? "↩" : "🗄"}
      </button>
    </span>
  );
}

function ChannelSection({
  title,
  list,
  route,
  testId,
}: {
  title: string;
  list: ChannelSummary[];
  route: Route;
  testId: string;
}) {
  const agents = useSelector((s) => s.agents);
  const openId = routeChannel(route);
  return (
    <section class="side-section" data-testid={testId}>
      {title && <h3 class="side-heading">{title}</h3>}
      {list.length === 0 && <p class="muted side-empty">{t("sidebar.noneYet")}</p>}
      <ul class="channel-list">
        {list.map((channel) => (
          <li key={channel.id} class="channel-item" data-channel-id={channel.id}>
            <Link
              to={{ name: "channel", channelId: channel.id }}
              class={`channel-link${openId === channel.id ? " active" : ""}${channel.unread > 0 ? " has-unread" : ""}`}
              current={openId === channel.id}
              testId={`channel-item-${channel.id}`}
            >
              <span class="channel-icon" aria-hidden="true">
                {channelIcon(channel, agents)}
              </span>
              <span class="channel-name" data-testid="channel-name">
                {channel.name}
              </span>
              {channel.unread > 0 && (
                <span
                  class="badge badge-unread"
                  data-testid="channel-unread"
                  title={t("sidebar.unread", { count: channel.unread })}
                >
                  {channel.unread > 99 ? "99+" : channel.unread}
                </span>
              )}
            </Link>
            <ChannelActions channel={channel} />
          </li>
        ))}
      </ul>
    </section>
  );
}

/** The sidebar; on phones it is the drawer. `onSearch` opens the message search panel. */
export function Sidebar({
  route,
  onSearch,
  onShortcuts,
}: {
  route: Route;
  onSearch: () => void;
  onShortcuts: () => void;
}) {
  const channels = useSelector((s) => s.channels);
  const auth = useSelector((s) => s.auth);
  const [creating, setCreating] = useState(false);
  const { pinned, direct, groups, archived } = sidebarSections(channels.list);
  const canCreate = auth.phase === "ready" && auth.user.role !== "guest";
  return (
    <nav class="sidebar" aria-label={t("app.channels")} data-testid="sidebar">
      <div class="side-nav">
        <button type="button" class="nav-link nav-button" onClick={onSearch} data-testid="nav-search">
          🔍 {t("app.searchMessages")}
        </button>
        <Link
          to={{ name: "agents" }}
          class={`nav-link${route.name.startsWith("agent") ? " active" : ""}`}
          testId="nav-agents"
        >
          🧑‍🚀 {t("nav.agents")}
        </Link>
        {auth.phase === "ready" && auth.user.role !== "guest" && (
          <Link
            to={{ name: "templates" }}
            class={`nav-link${route.name === "templates" ? " active" : ""}`}
            testId="nav-templates"
          >
            🧩 {t("nav.templates")}
          </Link>
        )}
        <Link
          to={{ name: "schedules" }}
          class={`nav-link${route.name === "schedules" ? " active" : ""}`}
          testId="nav-schedules"
        >
          ⏰ {t("nav.schedules")}
        </Link>
        {auth.phase === "ready" && auth.user.role !== "guest" && (
          <Link
            to={{ name: "knowledge" }}
            class={`nav-link${route.name === "knowledge" ? " active" : ""}`}
            testId="nav-knowledge"
          >
            📚 {t("nav.knowledge")}
          </Link>
        )}
        {auth.phase === "ready" && (auth.user.role === "owner" || auth.user.role === "admin") && (
          <Link
            to={{ name: "connectors" }}
            class={`nav-link${route.name === "connectors" ? " active" : ""}`}
            testId="nav-connectors"
          >
            🔌 {t("nav.connectors")}
          </Link>
        )}
        {auth.phase === "ready" && auth.user.role !== "guest" && (
          <Link
            to={{ name: "memory" }}
            class={`nav-link${route.name === "memory" ? " active" : ""}`}
            testId="nav-memory"
          >
            🧠 {t("nav.memory")}
          </Link>
        )}
        <Link
          to={{ name: "settings" }}
          class={`nav-link${route.name === "settings" ? " active" : ""}`}
          testId="nav-settings"
        >
          ⚙️ {t("settings.title")}
        </Link>
      </div>
      {canCreate && (
        <button
          type="button"
          class="btn btn-primary btn-block"
          onClick={() => setCreating(true)}
          data-testid="new-channel"
        >
          + {t("sidebar.newChat")}
        </button>
      )}
      {!channels.loaded && <p class="muted side-empty">{t("common.loading")}</p>}
      {pinned.length > 0 && (
        <ChannelSection
          title={t("sidebar.pinned")}
          list={pinned}
          route={route}
          testId="channel-list-pinned"
        />
      )}
      <ChannelSection title={t("sidebar.direct")} list={direct} route={route} testId="channel-list-direct" />
      <ChannelSection title={t("sidebar.groups")} list={groups} route={route} testId="channel-list-groups" />
      {archived.length > 0 && (
        <details class="side-archived" data-testid="channel-list-archived">
          <summary class="side-heading">{t("sidebar.archived", { count: archived.length })}</summary>
          <ChannelSection title="" list={archived} route={route} testId="channel-list-archived-items" />
        </details>
      )}
      <button
        type="button"
        class="nav-link nav-button side-shortcuts muted"
        onClick={onShortcuts}
        aria-keyshortcuts="?"
        data-testid="nav-shortcuts"
      >
        ⌨️ {t("sidebar.shortcuts")} <kbd>?</kbd>
      </button>
      {creating && (
        <Modal title={t("sidebar.newChat")} onClose={() => setCreating(false)} testId="new-channel-dialog">
          <NewChannelForm onDone={() => setCreating(false)} />
        </Modal>
      )}
    </nav>
  );
}
