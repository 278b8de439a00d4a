/** The app root: login gate, then the shell (top bar, channel drawer, current page, notices). */
import { useEffect, useState } from "preact/hooks";
import { useRoute, useSelector, useServices } from "../hooks.js";
import { AgentsPage } from "../pages/agents-page.js";
import { ChannelSettingsPage } from "../pages/channel-settings-page.js";
import { ChatPage } from "../pages/chat-page.js";
import { ConnectorsPage } from "../pages/connectors-page.js";
import { HomePage } from "../pages/home-page.js";
import { KnowledgePage } from "../pages/knowledge-page.js";
import { LoginPage } from "../pages/login-page.js";
import { SchedulesPage } from "../pages/schedules-page.js";
import { SettingsPage } from "../pages/settings-page.js";
import { type Services, ServicesContext } from "../services.js";
import { endSession } from "../session.js";
import { totalUnread } from "../state/channels.js";
import { type Route, routeChannel } from "../state/route.js";
import { applyTheme, loadTheme, nextTheme, type ThemeChoice } from "../theme.js";
import type { SessionUser } from "../types.js";
import { Notices } from "./notices.js";
import { Sidebar } from "./sidebar.js";

const THEME_ICON: Record<ThemeChoice, string> = { system: "🌓", light: "☀️", dark: "🌙" };

function ThemeToggle() {
  const [theme, setTheme] = useState<ThemeChoice>(loadTheme);
  return (
    <button
      type="button"
      class="icon-btn"
      title={`Theme: ${theme} (click to change)`}
      aria-label={`Theme: ${theme}`}
      onClick={() => {
        const next = nextTheme(theme);
        applyTheme(next);
        setTheme(next);
      }}
      data-testid="theme-toggle"
      data-theme-choice={theme}
    >
      {THEME_ICON[theme]}
    </button>
  );
}

function ConnectionStatus() {
  const status = useSelector((s) => s.connection);
  if (status === "open" || status === "idle" || status === "closed") return null;
  const text =
    status === "unauthorized" ? "Session expired" : status === "connecting" ? "Connecting…" : "Reconnecting…";
  return (
    <span
      class={`connection connection-${status}`}
      role="status"
      data-testid="connection-status"
      data-status={status}
    >
      {text}
    </span>
  );
}

function Page({ route, me }: { route: Route; me: SessionUser }) {
  switch (route.name) {
    case "home":
      return <HomePage me={me} />;
    case "channel":
      return <ChatPage key={route.channelId} channelId={route.channelId} me={me} />;
    case "channel_settings":
      return <ChannelSettingsPage key={route.channelId} channelId={route.channelId} me={me} />;
    case "agents":
      return <AgentsPage selected={undefined} me={me} />;
    case "agent_new":
      return <AgentsPage selected="new" me={me} />;
    case "agent":
      return <AgentsPage selected={route.agentId} me={me} />;
    case "settings":
      return <SettingsPage me={me} />;
    case "schedules":
      return <SchedulesPage me={me} />;
    case "knowledge":
      return <KnowledgePage me={me} />;
    case "connectors":
      return <ConnectorsPage me={me} />;
  }
}

function Shell({ me }: { me: SessionUser }) {
  const services = useServices();
  const route = useRoute();
  const [drawerOpen, setDrawerOpen] = useState(false);
  const unread = useSelector((s) => totalUnread(s.channels.list));
  const channelId = routeChannel(route);

  useEffect(() => setDrawerOpen(false), [route]);
  useEffect(() => {
    document.title = unread > 0 ? `(${unread}) Dimsum` : "Dimsum";
  }, [unread]);
  useEffect(() => {
    if (channelId) return;
    services.live.follow(undefined);
    services.store.dispatch({ type: "close_channel" });
  }, [channelId, services]);

  const logout = async () => {
    try {
      await services.api.logout();
    } finally {
      await endSession(services);
    }
  };

  return (
    <div class={`shell${drawerOpen ? " drawer-open" : ""}`} data-testid="app-shell">
      <header class="topbar">
        <button
          type="button"
          class="icon-btn drawer-toggle"
          aria-label="Channels"
          aria-expanded={drawerOpen}
          onClick={() => setDrawerOpen(!drawerOpen)}
          data-testid="drawer-toggle"
        >
          ☰{unread > 0 && <span class="dot-unread" data-testid="drawer-unread" />}
        </button>
        <a
          class="brand"
          href="/"
          onClick={(e) => {
            e.preventDefault();
            services.navigate({ name: "home" });
          }}
        >
          <span aria-hidden="true">🥟</span> Dimsum
        </a>
        <span class="topbar-spacer" />
        <ConnectionStatus />
        <ThemeToggle />
        <span class="topbar-user muted" data-testid="current-user">
          {me.username}
        </span>
        <button type="button" class="btn btn-small" onClick={() => void logout()} data-testid="logout">
          Log out
        </button>
      </header>
      <Sidebar route={route} />
      <button
        type="button"
        class="drawer-backdrop"
        aria-label="Close channels"
        tabIndex={-1}
        onClick={() => setDrawerOpen(false)}
      />
      <main class="content">
        <Page route={route} me={me} />
      </main>
      <Notices />
    </div>
  );
}

function Root() {
  const auth = useSelector((s) => s.auth);
  if (auth.phase === "loading") {
    return (
      <div class="splash" data-testid="app-loading">
        <span aria-hidden="true">🥟</span> Loading…
      </div>
    );
  }
  if (auth.phase === "login") {
    return (
      <>
        <LoginPage key={String(auth.needsSetup)} needsSetup={auth.needsSetup} reason={auth.reason} />
        <Notices />
      </>
    );
  }
  return <Shell me={auth.user} />;
}

/** The whole app, given its services. */
export function App({ services }: { services: Services }) {
  return (
    <ServicesContext.Provider value={services}>
      <Root />
    </ServicesContext.Provider>
  );
}
