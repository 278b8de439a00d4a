/** People on this server (owner/admin): add, change role, remove. */

import { useEffect, useState } from "preact/hooks";
import { useAction, useReportError, useServices } from "../../hooks.js";
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
  const [remove, removing] = useAction(async (user: SessionUser) => {
    const message = `${user.username} can no longer sign in; their sessions and API tokens end.`;
    if (!(await askConfirm({ title: `Remove ${user.username}?`, message, confirmLabel: "Remove" }))) return;
    await api.deleteUser(user.id);
    await reload();
  });

  return (
    <section class="form" data-testid="settings-users">
      <h3>People</h3>
      {users === undefined ? (
        <p class="muted">Loading…</p>
      ) : (
        <ul class="user-list">
          {users.map((user) => (
            <li key={user.id} class="user-row" data-testid="user-row" data-username={user.username}>
              <strong>{user.username}</strong>
              <select
                value={user.role}
                disabled={changing || user.id === me.id}
                onChange={(e) => void setUserRole(user.id, e.currentTarget.value as Role)}
                data-testid="user-role"
              >
                {ROLES.map((r) => (
                  <option key={r} value={r}>
                    {r}
                  </option>
                ))}
              </select>
              {user.id !== me.id && (
                <button
                  type="button"
                  class="btn btn-small btn-danger"
                  disabled={removing}
                  onClick={() => void remove(user)}
                  data-testid="user-remove"
                >
                  Remove
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
          <span>Username</span>
          <input
            value={username}
            required
            autocomplete="off"
            onInput={(e) => setUsername(e.currentTarget.value)}
            data-testid="user-add-name"
          />
        </label>
        <label class="field">
          <span>Password</span>
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
          <span>Role</span>
          <select
            value={role}
            onChange={(e) => setRole(e.currentTarget.value as Role)}
            data-testid="user-add-role"
          >
            {ROLES.filter((r) => r !== "owner").map((r) => (
              <option key={r} value={r}>
                {r}
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
          Add person
        </button>
      </form>
    </section>
  );
}
