/** People on this server (owner/admin): add, change role, disable and enable, remove. */

import { useEffect, useState } from "preact/hooks";
import { useAction, useReportError, useServices } from "../../hooks.js";
import { t } from "../../i18n/index.js";
import { roleName } from "../../role-name.js";
import type { Role, SessionUser } from "../../types.js";
import { askConfirm } from "../confirm-dialog.js";

const ROLES: Role[] = ["owner", "admin", "member", "guest"];

/** The users section. */
export function UsersSection({ me }: { me: SessionUser }) {
  const { api } = useServices();
  const report = useReportError();
  const [users, setUsers] = useState<SessionUser[] | undefined>(undefined);
  const [username, setUsername] = useState("");
  const [password, setPassword] = useState("");
  const [role, setRole] = useState<Role>("member");
  const reload = () => api.listUsers().then(setUsers).catch(report);
  useEffect(() => {
    void reload();
  }, [api]);

  const [create, creating] = useAction(async () => {
    await api.createUser({ username: username.trim(), password, role });
    setUsername("");
    setPassword("");
    await reload();
  });
  const [setUserRole, changing] = useAction(async (id: string, next: Role) => {
    await api.updateUser(id, { role: next });
    await reload();
  });
  const [setDisabled, disabling] = useAction(
    async (user: SessionUser, disabled: boolean) => {
      await api.updateUser(user.id, { disabled });
      await reload();
      return { name: user.username, disabled };
    },
    ({ name, disabled }) =>
      disabled ? t("settings.users.disabledNotice", { name }) : t("settings.users.enabledNotice", { name }),
  );
  const [remove, removing] = useAction(async (user: SessionUser) => {
    const message = t("settings.users.removeMessage", { name: user.username });
    if (
      !(await askConfirm({
        title: t("settings.users.removeTitle", { name: user.username }),
        message,
        confirmLabel: t("settings.users.remove"),
      }))
    )
      return;
    await api.deleteUser(user.id);
    await reload();
  });

  return (
    <section class="form" data-testid="settings-users">
      <h3>{t("settings.users.title")}</h3>
      {users === undefined ? (
        <p class="muted">{t("common.loading")}</p>
      ) : (
        <ul class="user-list">
          {users.map((user) => (
            <li key={user.id} class="user-row" data-testid="user-row" data-username={user.username}>
              <strong>{user.username}</strong>
              {user.disabled && (
                <span class="badge" data-testid="user-disabled">
                  {t("settings.users.disabled")}
                </span>
              )}
              <select
                value={user.role}
                disabled={changing || user.id === me.id}
                onChange={(e) => void setUserRole(user.id, e.currentTarget.value as Role)}
                data-testid="user-role"
              >
                {ROLES.map((r) => (
                  <option key={r} value={r}>
                    {roleName(r)}
                  </option>
                ))}
              </select>
              {user.id !== me.id && (
                <button
                  type="button"
                  class="btn btn-small"
                  disabled={disabling}
                  onClick={() => void setDisabled(user, !user.disabled)}
                  data-testid="user-disable"
                >
                  {user.disabled ? t("settings.users.enable") : t("settings.users.disable")}
                </button>
              )}
              {user.id !== me.id && (
                <button
                  type="button"
                  class="btn btn-small btn-danger"
                  disabled={removing}
                  onClick={() => void remove(user)}
                  data-testid="user-remove"
                >
                  {t("settings.users.remove")}
                </button>
              )}
            </li>
          ))}
        </ul>
      )}
      <form
        class="inline-form"
        onSubmit={(e) => {
          e.preventDefault();
          void create();
        }}
      >
        <label class="field">
          <span>{t("login.username")}</span>
          <input
            value={username}
            required
            autocomplete="off"
            onInput={(e) => setUsername(e.currentTarget.value)}
            data-testid="user-add-name"
          />
        </label>
        <label class="field">
          <span>{t("login.password")}</span>
          <input
            type="password"
            value={password}
            required
            minLength={8}
            autocomplete="new-password"
            onInput={(e) => setPassword(e.currentTarget.value)}
            data-testid="user-add-password"
          />
        </label>
        <label class="field">
          <span>{t("settings.users.role")}</span>
          <select
            value={role}
            onChange={(e) => setRole(e.currentTarget.value as Role)}
            data-testid="user-add-role"
          >
            {ROLES.filter((r) => r !== "owner").map((r) => (
              <option key={r} value={r}>
                {roleName(r)}
              </option>
            ))}
          </select>
        </label>
        <button
          type="submit"
          class="btn btn-small btn-primary"
          disabled={creating}
          data-testid="user-add-submit"
        >
          {t("settings.users.add")}
        </button>
      </form>
    </section>
  );
}
