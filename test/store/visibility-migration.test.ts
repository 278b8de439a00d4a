/**
 * Migration 23 (SQLite) on a database written by schema 22: agents and knowledge bases keep their
 * rows and read as seen by everyone, owned by nobody; applying the step again changes nothing.
 */
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { canUseResource } from "../../src/shared/visibility.js";
import { openDatabase } from "../../src/store/database.js";
import { migrations, schemaVersion } from "../../src/store/migrations.js";
import { createSqliteTeamStore } from "../../src/team/team-store.js";
import { tempDir } from "./helpers.js";

describe("migration 23: owners and visibility", () => {
  it("keeps an old database's agents and bases, seen by everyone, and is idempotent", async () => {
    const file = join(tempDir(), "old.db");
    const old = openDatabase(file, { migrations: migrations.slice(0, 22) });
    expect(schemaVersion(old)).toBe(22);
    old
      .prepare(
        "INSERT INTO team_agents (id, name, emoji, memory, skills_json, created_at, updated_at) VALUES ('writer', 'Writer', '', 1, '[]', 1, 1)",
      )
      .run();
    old
      .prepare(
        "INSERT INTO kb_bases (name, agent_id, description, created_at, updated_at) VALUES ('docs', '', '', 1, 1)",
      )
      .run();
    old.close();

    const db = openDatabase(file);
    expect(schemaVersion(db)).toBe(migrations.length);
    const writer = await createSqliteTeamStore(db).agents.get("writer");
    expect(writer).toMatchObject({ id: "writer", name: "Writer" });
    expect(writer).not.toHaveProperty("ownerId");
    expect(canUseResource({ userId: "someone", role: "member" }, writer!)).toBe(true);
    expect(
      db.prepare("SELECT owner_id, visibility, allowed_json FROM kb_bases WHERE name = 'docs'").get(),
    ).toEqual({
      owner_id: null,
      visibility: "everyone",
      allowed_json: "[]",
    });
    // The step again (a half-applied copy): nothing changes, nothing fails.
    migrations[22]!.up(db);
    expect(db.prepare("SELECT count(*) AS n FROM team_agents").get()).toEqual({ n: 1 });
    db.close();
  });
});
