/** The landing page after login: pick a chat, or get started when there are none. */
import { Link } from "../components/link.js";
import { useSelector } from "../hooks.js";
import type { SessionUser } from "../types.js";

/** The home page. */
export function HomePage({ me }: { me: SessionUser }) {
  const channels = useSelector((s) => s.channels);
  const agents = useSelector((s) => s.agents);
  return (
    <section class="page home" data-testid="home-page">
      <div class="home-card">
        <h2>
          Hello, <span data-testid="home-username">{me.username}</span> 👋
        </h2>
        {channels.loaded && channels.list.length === 0 ? (
          <p>
            You have no chats yet. Use <strong>+ New chat</strong> to talk with one agent or to start a group
            of agents.
          </p>
        ) : (
          <p>
            Pick a chat on the left. In a group, type <kbd>@</kbd> to address one agent, or <code>@all</code>{" "}
            for every agent.
          </p>
        )}
        <p class="muted">
          {agents.length} agent{agents.length === 1 ? "" : "s"} on this server.{" "}
          <Link to={{ name: "agents" }}>Manage agents</Link>
        </p>
      </div>
    </section>
  );
}
