/**
 * The app root: login gate, then the shell (top bar, channel drawer, notices, current page, and the
 * message search panel).
 */
import { useEffect, useState } from "preact/hooks";
import { useRoute, useSelector, useServices } from "../hooks.js";
import { t, useLocale } from "../i18n/index.js";
import { AgentsPage } from "../pages/agents-page.js";
import { ChannelSettingsPage } from "../pages/channel-settings-page.js";
import { ChatPage } from "../pages/chat-page.js";
import { ConnectorsPage } from "../pages/connectors-page.js";
import { HomePage } from "../pages/home-page.js";
import { KnowledgePage } from "../pages/knowledge-page.js";
import { LoginPage } from "../pages/login-page.js";
import { MemoryPage } from "../pages/memory-page.js";
import { NotFoundPage } from "../pages/not-found-page.js";
import { SchedulesPage } from "../pages/schedules-page.js";
import { SettingsPage } from "../pages/settings-page.js";
import { TemplatesPage } from "../pages/templates-page.js";
import { type Services, ServicesContext } from "../services.js";
import { endSession } from "../session.js";
import { totalUnread } from "../state/channels.js";
import { type Route, routeChannel } from "../state/route.js";
import { applyTheme, loadTheme, nextTheme, type ThemeChoice } from "../theme.js";
import type { SessionUser } from "../types.js";
import { ConfirmDialogHost } from "./confirm-dialog.js";
import { KeyboardHelp, useKeyboardHelp } from "./keyboard-help.js";
import { MessageSearch, type SearchMemory } from "./message-search.js";
import { Notices } from "./notices.js";
import { Sidebar } from "./sidebar.js";

// Shown on the search button; the shortcut itself accepts either key everywhere.
const SHORTCUT_LABEL =
  typeof navigator !== "undefined" && /Mac|iPhone|iPad/.test(navigator.userAgent) ? "⌘K" : "Ctrl K";

const THEME_ICON: Record<ThemeChoice, string> = { system: "🌓", light: "☀️", dark: "🌙" };
const THEME_NAME = { system: "app.theme.system", light: "app.theme.light", dark: "app.theme.dark" } as const;

function ThemeToggle() {
  const [theme, setTheme] = useState<ThemeChoice>(loadTheme);
  return (
    <button
      type="button"
      class="icon-btn"
      title={t("app.themeTitle", { theme: t(THEME_NAME[theme]) })}
      aria-label={t("app.themeLabel", { theme: t(THEME_NAME[theme]) })}
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
    status === "unauthorized"
      ? t("app.sessionExpired")
      : status === "connecting"
        ? t("app.connecting")
        : t("app.reconnecting");
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

function SearchButton({ onOpen }: { onOpen: () => void }) {
  return (
    <button
      type="button"
      class="search-trigger"
      aria-label={t("app.searchMessages")}
      aria-keyshortcuts="Control+K Meta+K"
      title={`${t("app.searchMessages")} (${SHORTCUT_LABEL})`}
      onClick={onOpen}
      data-testid="search-open"
    >
      <span aria-hidden="true">🔍</span>
      <span class="search-trigger-text">{t("app.searchMessages")}</span>
      <kbd class="search-trigger-key">{SHORTCUT_LABEL}</kbd>
    </button>
  );
}

/** Whether the search panel is open and what it remembers; Ctrl/⌘+K opens it from anywhere. */
function useSearchPanel(): {
  open: boolean;
  memory: SearchMemory;
  show: () => void;
  hide: (memory: SearchMemory) => void;
} {
  const [open, setOpen] = useState(false);
  const [memory, setMemory] = useState<SearchMemory>({ query: "", onlyThisChannel: false });
  useEffect(() => {
    const onKey = (event: KeyboardEvent) => {
      if (event.key.toLowerCase() !== "k" || !(event.ctrlKey || event.metaKey) || event.altKey) return;
      event.preventDefault();
      setOpen(true);
    };
    window.addEventListener("keydown", onKey);
    return () => window.removeEventListener("keydown", onKey);
  }, []);
  return {
    open,
    memory,
    show: () => setOpen(true),
    hide: (next) => {
      setMemory(next);
      setOpen(false);
    },
  };
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
      return <SettingsPage me={me} section={route.section} />;
    case "schedules":
      return <SchedulesPage me={me} />;
    case "templates":
      return <TemplatesPage me={me} />;
    case "knowledge":
      return <KnowledgePage me={me} />;
    case "connectors":
      return <ConnectorsPage me={me} />;
    case "memory":
      return <MemoryPage me={me} agentId={route.agentId} />;
    case "not_found":
      return <NotFoundPage path={route.path} />;
  }
}

function Shell({ me }: { me: SessionUser }) {
  const services = useServices();
  const route = useRoute();
  const [drawerOpen, setDrawerOpen] = useState(false);
  const unread = useSelector((s) => totalUnread(s.channels.list));
  const channelId = routeChannel(route);
  const search = useSearchPanel();
  const keys = useKeyboardHelp();
  const openSearch = () => {
    setDrawerOpen(false);
    search.show();
  };

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
    // Stopped first: the server then closes this socket with 4401, which must not read as "signed out elsewhere".
    services.live.stop();
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
          aria-label={t("app.channels")}
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
        <SearchButton onOpen={openSearch} />
        <span class="topbar-spacer" />
        <ConnectionStatus />
        <ThemeToggle />
        <span class="topbar-user muted" data-testid="current-user">
          {me.username}
        </span>
        <button type="button" class="btn btn-small" onClick={() => void logout()} data-testid="logout">
          {t("app.logout")}
        </button>
      </header>
      <Sidebar route={route} onSearch={openSearch} onShortcuts={keys.show} />
      <button
        type="button"
        class="drawer-backdrop"
        aria-label={t("app.closeChannels")}
        tabIndex={-1}
        onClick={() => setDrawerOpen(false)}
      />
      <Notices />
      <main class="content">
        <Page route={route} me={me} />
      </main>
      {search.open && (
        <MessageSearch me={me} channelId={channelId} memory={search.memory} onClose={search.hide} />
      )}
      {keys.open && <KeyboardHelp onClose={keys.hide} />}
      <ConfirmDialogHost />
    </div>
  );
}

function Root() {
  const auth = useSelector((s) => s.auth);
  // Read here so a change of language re-renders the whole app in it.
  useLocale();
  if (auth.phase === "loading") {
    return (
      <div class="splash" data-testid="app-loading">
        <span aria-hidden="true">🥟</span> {t("common.loading")}
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
