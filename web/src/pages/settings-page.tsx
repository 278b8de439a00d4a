/**
 * Settings, one tab at a time (`/settings/<section>`): providers and the default model, API tokens,
 * MCP servers, remote A2A agents, people, your account, this browser's notifications, spend and the audit log. Admin-only tabs are hidden from other roles.
 */
import { Link } from "../components/link.js";
import { AccountSection } from "../components/settings/account-section.js";
import { AuditSection } from "../components/settings/audit-section.js";
import { CapacitySection } from "../components/settings/capacity-section.js";
import { HttpToolsSection } from "../components/settings/http-tools-section.js";
import { McpSection } from "../components/settings/mcp-section.js";
import { NotificationsSection } from "../components/settings/notifications-section.js";
import { ProvidersSection } from "../components/settings/providers-section.js";
import { RemoteAgentsSection } from "../components/settings/remote-agents-section.js";
import { ShellSection } from "../components/settings/shell-section.js";
import { SignInSection } from "../components/settings/sign-in-section.js";
import { SpendSection } from "../components/settings/spend-section.js";
import { TokensSection } from "../components/settings/tokens-section.js";
import { UsersSection } from "../components/settings/users-section.js";
import { type MessageKey, t } from "../i18n/index.js";
import { roleName } from "../role-name.js";
import type { SettingsSection } from "../state/route.js";
import type { SessionUser } from "../types.js";

const TABS: ReadonlyArray<{ id: SettingsSection; label: MessageKey; adminOnly: boolean }> = [
  { id: "providers", label: "settings.tab.providers", adminOnly: true },
  { id: "tokens", label: "settings.tab.tokens", adminOnly: false },
  { id: "mcp", label: "settings.tab.mcp", adminOnly: false },
  { id: "remote-agents", label: "settings.tab.remoteAgents", adminOnly: true },
  { id: "http-tools", label: "settings.tab.httpTools", adminOnly: true },
  { id: "shell", label: "settings.tab.shell", adminOnly: true },
  { id: "people", label: "settings.tab.people", adminOnly: true },
  { id: "sign-in", label: "settings.tab.signIn", adminOnly: true },
  { id: "account", label: "settings.tab.account", adminOnly: false },
  { id: "notifications", label: "settings.tab.notifications", adminOnly: false },
  { id: "spend", label: "settings.tab.spend", adminOnly: false },
  { id: "audit", label: "settings.tab.audit", adminOnly: true },
  { id: "capacity", label: "settings.tab.capacity", adminOnly: true },
];

function Section({ id, me }: { id: SettingsSection; me: SessionUser }) {
  switch (id) {
    case "providers":
      return <ProvidersSection />;
    case "tokens":
      return <TokensSection />;
    case "mcp":
      return <McpSection isAdmin={me.role === "owner" || me.role === "admin"} />;
    case "remote-agents":
      return <RemoteAgentsSection />;
    case "http-tools":
      return <HttpToolsSection />;
    case "shell":
      return <ShellSection />;
    case "people":
      return <UsersSection me={me} />;
    case "sign-in":
      return <SignInSection />;
    case "account":
      return <AccountSection me={me} />;
    case "notifications":
      return <NotificationsSection />;
    case "spend":
      return <SpendSection isAdmin={me.role === "owner" || me.role === "admin"} />;
    case "audit":
      return <AuditSection />;
    case "capacity":
      return <CapacitySection />;
  }
}

/** The settings page; `section` picks the tab (default: Providers for admins, Account otherwise). */
export function SettingsPage({ me, section }: { me: SessionUser; section?: SettingsSection | undefined }) {
  const isAdmin = me.role === "owner" || me.role === "admin";
  const tabs = TABS.filter((t) => isAdmin || !t.adminOnly);
  const shown =
    tabs.find((t) => t.id === section) ?? tabs.find((t) => t.id === (isAdmin ? "providers" : "account"));
  const current = shown?.id ?? "account";
  return (
    <section class="page" data-testid="settings-page" data-section={current}>
      <header class="page-head">
        <h2>{t("settings.title")}</h2>
        <span class="muted">
          {t("settings.signedInAs")} <strong data-testid="settings-username">{me.username}</strong> (
          {roleName(me.role)})
        </span>
      </header>
      <nav class="tabs" aria-label={t("settings.sections")} data-testid="settings-tabs">
        {tabs.map((tab) => (
          <Link
            key={tab.id}
            to={{ name: "settings", section: tab.id }}
            class={`tab${tab.id === current ? " active" : ""}`}
            current={tab.id === current}
            testId={`settings-tab-${tab.id}`}
          >
            {t(tab.label)}
          </Link>
        ))}
      </nav>
      {section !== undefined && shown?.id !== section && (
        <p class="notice notice-info" data-testid="settings-admin-only">
          {t("settings.adminOnly")}
        </p>
      )}
      <div class="page-body">
        <Section id={current} me={me} />
      </div>
    </section>
  );
}
