/** The auth layer's events: what the user and session stores emit, after the database changed. */
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { type AuthEvent, AuthEvents } from "../../src/server/auth/auth-events.js";
import { SessionStore } from "../../src/server/auth/session-store.js";
import { UserStore } from "../../src/server/auth/user-store.js";
import { openDatabase } from "../../src/store/database.js";
import { tempDir } from "./helpers.js";

function stores() {
  const db = openDatabase(join(tempDir(), "dimsum.db"));
  const errors: unknown[] = [];
  const events = new AuthEvents((err) => errors.push(err));
  const seen: AuthEvent[] = [];
  events.on((event) => seen.push(event));
  const users = new UserStore(db, { events, hashParams: { N: 1024, r: 8, p: 1 } });
  const sessions = new SessionStore(db, { events });
  return { db, events, seen, errors, users, sessions };
}

describe("auth events", () => {
  it("a role change, a password change and a deletion are told once each, after they happened", async () => {
    const { seen, users, sessions, db } = stores();
    const bob = await users.create({ username: "bob", password: "bob-password-1", role: "admin" });
    expect(seen).toEqual([]);
    await users.update(bob.id, { role: "admin" });
    expect(seen).toEqual([]); // no change, no event
    await users.update(bob.id, { role: "member" });
    expect(seen).toEqual([{ type: "role_changed", userId: bob.id, role: "member", previousRole: "admin" }]);
    await users.update(bob.id, { password: "bob-password-2" });
    expect(seen.at(-1)).toEqual({ type: "password_changed", userId: bob.id });
    await sessions.create(bob.id);
    expect(await users.delete(bob.id)).toBe(true);
    expect(seen.at(-1)).toEqual({ type: "user_deleted", userId: bob.id });
    expect(await users.delete(bob.id)).toBe(false);
    expect(seen.filter((e) => e.type === "user_deleted")).toHaveLength(1);
    expect((db.prepare("SELECT count(*) AS n FROM auth_sessions").get() as { n: number }).n).toBe(0);
  });

  it("revocations name exactly the sessions that ended, and why", async () => {
    const { seen, users, sessions } = stores();
    const ann = await users.create({ username: "ann", password: "ann-password-1", role: "member" });
    const [a, b, c] = [
      await sessions.create(ann.id),
      await sessions.create(ann.id),
      await sessions.create(ann.id),
    ];
    expect(await sessions.revoke(ann.id, a.session.id, "logout")).toBe(true);
    expect(await sessions.revoke(ann.id, a.session.id)).toBe(false);
    expect(await sessions.revokeAll(ann.id, c.session.id, "password_changed")).toBe(1);
    expect(await sessions.revokeAll(ann.id, c.session.id)).toBe(0);
    expect(seen).toEqual([
      { type: "sessions_ended", userId: ann.id, sessionIds: [a.session.id], reason: "logout" },
      { type: "sessions_ended", userId: ann.id, sessionIds: [b.session.id], reason: "password_changed" },
    ]);
    expect(await sessions.isActive(c.session.id)).toBe(true);
  });

  it("a throwing listener neither stops the others nor the change", async () => {
    const { events, errors, users, seen } = stores();
    events.on(() => {
      throw new Error("listener broke");
    });
    const after: string[] = [];
    events.on((e) => after.push(e.type));
    const eve = await users.create({ username: "eve", password: "eve-password-1", role: "member" });
    expect(await users.delete(eve.id)).toBe(true);
    expect(seen.map((e) => e.type)).toEqual(["user_deleted"]);
    expect(after).toEqual(["user_deleted"]);
    expect(errors).toHaveLength(1);
  });
});
