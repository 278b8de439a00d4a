/**
 * The landing page after login: a warning with the way out when no model can answer yet, then the
 * chats (a few recent ones as links, since on a phone the list sits in the ☰ drawer), or how to
 * start one.
 */

import { HomeComposer } from "../components/home-composer.js";
import { Link } from "../components/link.js";
import { ModelNotice } from "../components/model-notice.js";
import { plural } from "../format.js";
import { useSelector } from "../hooks.js";
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
          Hello, <span data-testid="home-username">{me.username}</span> 👋
        </h2>
        <ModelNotice />
        {canChat && <HomeComposer />}
        {channels.loaded && channels.list.length === 0 ? (
          <p data-testid="home-hint">
            You have no chats yet. Use <strong>+ New chat</strong>
            <span class="phone-only"> (in the ☰ menu)</span> to talk with one agent or to start a group of
            agents.
          </p>
        ) : (
          <>
            <p data-testid="home-hint">
              <span class="wide-only">Start a chat above, or go on with a recent one. </span>
              <span class="phone-only">
                Start a chat above, or go on with one below (☰ lists them all).{" "}
              </span>
              In a group, type <kbd>@</kbd> to address one agent, or <code>@all</code> for every agent.
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
          {plural(agents.length, "agent")} on this server.{" "}
          {isAdmin && (
            <Link to={{ name: "agents" }} testId="home-manage-agents">
              Manage agents
            </Link>
          )}
        </p>
      </div>
    </section>
  );
}
