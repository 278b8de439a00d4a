/**
 * The landing page after login: a warning with the way out when no model can answer yet, then the
 * chats (a few recent ones as links, since on a phone the list sits in the ☰ drawer), or how to
 * start one.
 */
import { Link } from "../components/link.js";
import { ModelNotice } from "../components/model-notice.js";
import { plural } from "../format.js";
import { useSelector } from "../hooks.js";
import type { SessionUser } from "../types.js";

const RECENT = 5;

/** The home page. */
export function HomePage({ me }: { me: SessionUser }) {
  const channels = useSelector((s) => s.channels);
  const agents = useSelector((s) => s.agents);
  const isAdmin = me.role === "owner" || me.role === "admin";
  const recent = [...channels.list].sort((a, b) => b.updatedAt - a.updatedAt).slice(0, RECENT);
  return (
    <section class="page home" data-testid="home-page">
      <div class="home-card">
        <h2>
          Hello, <span data-testid="home-username">{me.username}</span> 👋
        </h2>
        <ModelNotice />
        {channels.loaded && channels.list.length === 0 ? (
          <p data-testid="home-hint">
            You have no chats yet. Use <strong>+ New chat</strong>
            <span class="phone-only"> (in the ☰ menu)</span> to talk with one agent or to start a group of
            agents.
          </p>
        ) : (
          <>
            <p data-testid="home-hint">
              <span class="wide-only">Pick a chat on the left, or one of these. </span>
              <span class="phone-only">Pick a chat below, or open ☰ for all of them. </span>
              In a group, type <kbd>@</kbd> to address one agent, or <code>@all</code> for every agent.
            </p>
            {recent.length > 0 && (
              <ul class="home-recent" data-testid="home-recent">
                {recent.map((c) => (
                  <li key={c.id}>
                    <Link to={{ name: "channel", channelId: c.id }} class="home-recent-link">
                      <span aria-hidden="true">{c.kind === "group" ? "#" : "@"}</span> {c.name}
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
