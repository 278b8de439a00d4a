/**
 * Settings → Sign-in (owners and admins): the OpenID Connect providers people sign in with (Keycloak,
 * Entra ID, Okta, Google Workspace…), what each lets in (email domains, new accounts or
 * invited people only) and which role its groups give; and whether password sign-in stays on for
 * everyone or only for the owner. Client secrets are never shown, only that one is saved.
 */
import { useEffect, useState } from "preact/hooks";
import type { SignInProvider, SignInProviderInput, SignInSettings } from "../../api.js";
import { useAction, useReportError, useServices } from "../../hooks.js";
import { t } from "../../i18n/index.js";
import { askConfirm } from "../confirm-dialog.js";

const BLANK: SignInProviderInput & { id: string } = {
  id: "",
  name: "",
  issuer: "",
  clientId: "",
  clientSecret: "",
  allowedDomains: [],
  roleClaim: "groups",
  roleMap: {},
  newAccounts: "invited",
};

/** `admins=admin, staff=member` ↔ the role map. */
function roleMapText(map: SignInProviderInput["roleMap"]): string {
  return Object.entries(map)
    .map(([value, role]) => `${value}=${role}`)
    .join(", ");
}

function parseRoleMap(text: string): SignInProviderInput["roleMap"] {
  const map: SignInProviderInput["roleMap"] = {};
  for (const pair of text.split(/[,\n]/)) {
    const [value, role] = pair.split("=").map((s) => s.trim());
    if (value && (role === "admin" || role === "member" || role === "guest")) map[value] = role;
  }
  return map;
}

function ProviderForm({
  initial,
  editing,
  callbackUrl,
  onSaved,
  onCancel,
}: {
  initial: SignInProviderInput & { id: string };
  editing: boolean;
  callbackUrl: string;
  onSaved: () => Promise<void>;
  onCancel: () => void;
}) {
  const { api } = useServices();
  const [form, setForm] = useState(initial);
  const [domains, setDomains] = useState(initial.allowedDomains.join(", "));
  const [roles, setRoles] = useState(roleMapText(initial.roleMap));
  const set = <K extends keyof typeof form>(key: K, value: (typeof form)[K]) =>
    setForm((f) => ({ ...f, [key]: value }));
  const [save, saving] = useAction(
    async (event: Event) => {
      event.preventDefault();
      const { id, clientSecret, ...rest } = form;
      await api.saveSignInProvider(id.trim(), {
        ...rest,
        allowedDomains: domains
          .split(/[,\s]+/)
          .map((d) => d.trim())
          .filter(Boolean),
        roleMap: parseRoleMap(roles),
        // Empty while editing: the saved secret stays.
        ...(clientSecret || !editing ? { clientSecret: clientSecret ?? "" } : {}),
      });
      await onSaved();
      return form.name;
    },
    (name) => t("settings.signIn.saved", { name }),
  );
  return (
    <form class="form sign-in-form" onSubmit={(e) => void save(e)} data-testid="sign-in-form">
      <div class="field-row">
        <label class="field">
          <span>{t("settings.signIn.id")}</span>
          <input
            required
            disabled={editing}
            pattern="[a-z0-9][a-z0-9-]{0,31}"
            value={form.id}
            onInput={(e) => set("id", e.currentTarget.value)}
            data-testid="sign-in-id"
          />
        </label>
        <label class="field">
          <span>{t("settings.signIn.name")}</span>
          <input
            required
            value={form.name}
            placeholder="Keycloak"
            onInput={(e) => set("name", e.currentTarget.value)}
            data-testid="sign-in-name"
          />
        </label>
      </div>
      <label class="field">
        <span>{t("settings.signIn.issuer")}</span>
        <input
          required
          type="url"
          value={form.issuer}
          placeholder="https://sso.example.com/realms/team"
          onInput={(e) => set("issuer", e.currentTarget.value)}
          data-testid="sign-in-issuer"
        />
      </label>
      <div class="field-row">
        <label class="field">
          <span>{t("settings.signIn.clientId")}</span>
          <input
            required
            value={form.clientId}
            onInput={(e) => set("clientId", e.currentTarget.value)}
            data-testid="sign-in-client-id"
          />
        </label>
        <label class="field">
          <span>{t("settings.signIn.clientSecret")}</span>
          <input
            type="password"
            autocomplete="off"
            value={form.clientSecret ?? ""}
            placeholder={editing ? t("settings.signIn.secretKept") : ""}
            onInput={(e) => set("clientSecret", e.currentTarget.value)}
            data-testid="sign-in-client-secret"
          />
        </label>
      </div>
      <p class="muted sign-in-note">
        {t("settings.signIn.redirectUri")} <code>{callbackUrl.replace(":id", form.id || "<id>")}</code>
      </p>
      <label class="field">
        <span>{t("settings.signIn.domains")}</span>
        <input
          value={domains}
          placeholder="example.com"
          onInput={(e) => setDomains(e.currentTarget.value)}
          data-testid="sign-in-domains"
        />
      </label>
      <div class="field-row">
        <label class="field">
          <span>{t("settings.signIn.roleClaim")}</span>
          <input
            value={form.roleClaim}
            onInput={(e) => set("roleClaim", e.currentTarget.value)}
            data-testid="sign-in-role-claim"
          />
        </label>
        <label class="field">
          <span>{t("settings.signIn.roleMap")}</span>
          <input
            value={roles}
            placeholder="dimsum-admins=admin, staff=member"
            onInput={(e) => setRoles(e.currentTarget.value)}
            data-testid="sign-in-role-map"
          />
        </label>
      </div>
      <label class="field">
        <span>{t("settings.signIn.newAccounts")}</span>
        <select
          value={form.newAccounts}
          onChange={(e) => set("newAccounts", e.currentTarget.value === "create" ? "create" : "invited")}
          data-testid="sign-in-new-accounts"
        >
          <option value="invited">{t("settings.signIn.invitedOnly")}</option>
          <option value="create">{t("settings.signIn.createAccounts")}</option>
        </select>
      </label>
      <div class="form-actions">
        <button class="btn btn-primary" type="submit" disabled={saving} data-testid="sign-in-save">
          {t("settings.signIn.save")}
        </button>
        <button class="btn" type="button" onClick={onCancel}>
          {t("common.cancel")}
        </button>
      </div>
    </form>
  );
}

export function SignInSection() {
  const { api } = useServices();
  const report = useReportError();
  const [settings, setSettings] = useState<SignInSettings | undefined>(undefined);
  const [editing, setEditing] = useState<SignInProvider | "new" | undefined>(undefined);
  const reload = () => api.getSignIn().then(setSettings).catch(report);
  useEffect(() => {
    void reload();
  }, [api]);

  const [remove] = useAction(
    async (provider: SignInProvider) => {
      const yes = await askConfirm({
        title: t("settings.signIn.removeTitle", { name: provider.name }),
        message: t("settings.signIn.removeMessage"),
        confirmLabel: t("settings.signIn.remove"),
      });
      if (!yes) return undefined;
      await api.removeSignInProvider(provider.id);
      await reload();
      return provider.name;
    },
    (name) => (name ? t("settings.signIn.removed", { name }) : undefined),
  );
  const [togglePassword, toggling] = useAction(async (enabled: boolean) => {
    await api.setPasswordSignIn(enabled);
    await reload();
  });

  if (!settings) return <p class="muted">{t("common.loading")}</p>;
  return (
    <section class="form" data-testid="settings-sign-in">
      <h3>{t("settings.signIn.title")}</h3>
      <p class="muted">{t("settings.signIn.intro")}</p>
      {settings.providers.length === 0 ? (
        <p class="muted" data-testid="sign-in-empty">
          {t("settings.signIn.empty")}
        </p>
      ) : (
        <ul class="remote-agent-list">
          {settings.providers.map((p) => (
            <li key={p.id} class="remote-agent" data-testid="sign-in-provider" data-provider={p.id}>
              <div class="remote-agent-head">
                <strong>{p.name}</strong>
                <code class="muted">{p.id}</code>
                <span class="badge">
                  {p.newAccounts === "create"
                    ? t("settings.signIn.createAccounts")
                    : t("settings.signIn.invitedOnly")}
                </span>
                <span class="remote-agent-actions">
                  <button type="button" class="btn btn-small" onClick={() => setEditing(p)}>
                    {t("settings.signIn.edit")}
                  </button>
                  <button type="button" class="btn btn-small btn-danger" onClick={() => void remove(p)}>
                    {t("settings.signIn.remove")}
                  </button>
                </span>
              </div>
              <p class="muted sign-in-note">
                {p.issuer}
                {p.allowedDomains.length > 0 && ` · ${p.allowedDomains.map((d) => `@${d}`).join(", ")}`}
              </p>
            </li>
          ))}
        </ul>
      )}
      {editing ? (
        <ProviderForm
          key={editing === "new" ? "new" : editing.id}
          initial={editing === "new" ? BLANK : { ...editing, clientSecret: "" }}
          editing={editing !== "new"}
          callbackUrl={settings.callbackUrl}
          onSaved={async () => {
            setEditing(undefined);
            await reload();
          }}
          onCancel={() => setEditing(undefined)}
        />
      ) : (
        <div>
          <button type="button" class="btn" onClick={() => setEditing("new")} data-testid="sign-in-add">
            {t("settings.signIn.add")}
          </button>
        </div>
      )}
      <label class="check">
        <input
          type="checkbox"
          checked={settings.passwordSignIn}
          disabled={toggling || (settings.passwordSignIn && settings.providers.length === 0)}
          onChange={(e) => void togglePassword(e.currentTarget.checked)}
          data-testid="sign-in-password-toggle"
        />
        <span>{t("settings.signIn.passwordForEveryone")}</span>
      </label>
    </section>
  );
}
