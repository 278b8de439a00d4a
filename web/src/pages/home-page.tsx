/**
 * The landing page after login: a warning with the way out when no model can answer yet, then the
 * chats (a few recent ones as links, since on a phone the list sits in the ☰ drawer), or how to
 * start one.
 */

import { HomeComposer } from "../components/home-composer.js";
import { Link } from "../components/link.js";
import { ModelNotice } from "../components/model-notice.js";
import { useSelector } from "../hooks.js";
import { t } from "../i18n/index.js";
import { recentChats } from "../state/channels.js";
import type { SessionUser } from "../types.js";

const RECENT = 8;

/** The home page. */
export function HomePage({ me }: { me: SessionUser }) {
  const channels = useSelector((s) => s.channels);
  const agents = useSelector((s) => s.agents);
  const isAdmin = me.role === "owner" || me.role === "admin";
  const recent = recentChats(channels.list, RECENT);
  const canChat = me.role !== "guest";
  return (
    <section class="page home" data-testid="home-page">
      <div class="home-card">
        <h2>
          {t("home.hello")} <span data-testid="home-username">{me.username}</span> 👋
        </h2>
        <ModelNotice />
        {canChat && <HomeComposer />}
        {channels.loaded && channels.list.length === 0 ? (
          <p data-testid="home-hint">
            {t("home.noChats.before")} <strong>+ {t("sidebar.newChat")}</strong>
            <span class="phone-only"> {t("home.noChats.menu")}</span> {t("home.noChats.after")}
          </p>
        ) : (
          <>
            <p data-testid="home-hint">
              <span class="wide-only">{t("home.startWide")} </span>
              <span class="phone-only">{t("home.startPhone")} </span>
              {t("home.mentionBefore")} <kbd>@</kbd> {t("home.mentionMiddle")} <code>@all</code>{" "}
              {t("home.mentionAfter")}
            </p>
            {recent.length > 0 && (
              <ul class="home-recent" data-testid="home-recent">
                {recent.map((c) => (
                  <li key={c.id}>
                    <Link
                      to={{ name: "channel", channelId: c.id }}
                      class="home-recent-link"
                      testId="home-recent-chat"
                    >
                      <span class="home-recent-icon" aria-hidden="true">
                        {c.pinnedAt !== undefined ? "📌" : c.kind === "group" ? "#" : "💬"}
                      </span>
                      <span class="home-recent-name">{c.name}</span>
                      {c.unread > 0 && <span class="badge badge-unread">{c.unread}</span>}
                    </Link>
                  </li>
                ))}
              </ul>
            )}
          </>
        )}
        <p class="muted" data-testid="home-agents">
          {t("home.agentCount", { count: agents.length })}{" "}
          {isAdmin && (
            <Link to={{ name: "agents" }} testId="home-manage-agents">
              {t("home.manageAgents")}
            </Link>
          )}
        </p>
      </div>
    </section>
  );
}
