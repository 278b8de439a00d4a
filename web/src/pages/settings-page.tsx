/** Settings: models and providers, API tokens, MCP servers, people and sessions. */
import { AccountSection } from "../components/settings/account-section.js";
import { McpSection } from "../components/settings/mcp-section.js";
import { ProvidersSection } from "../components/settings/providers-section.js";
import { ShellSection } from "../components/settings/shell-section.js";
import { TokensSection } from "../components/settings/tokens-section.js";
import { UsersSection } from "../components/settings/users-section.js";
import type { SessionUser } from "../types.js";

/** The settings page; admin-only sections are hidden from other roles. */
export function SettingsPage({ me }: { me: SessionUser }) {
  const isAdmin = me.role === "owner" || me.role === "admin";
  return (
    <section class="page" data-testid="settings-page">
      <header class="page-head">
        <h2>Settings</h2>
        <span class="muted">
          Signed in as <strong data-testid="settings-username">{me.username}</strong> ({me.role})
        </span>
      </header>
      <div class="page-body">
        {isAdmin && <ProvidersSection />}
        <TokensSection />
        {isAdmin && <McpSection />}
        {isAdmin && <ShellSection />}
        {isAdmin && <UsersSection me={me} />}
        <AccountSection />
      </div>
    </section>
  );
}
