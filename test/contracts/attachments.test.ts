/** The attachment repository on SQLite and PostgreSQL: bytes once by content, readable per linked chat. */
import { createHash } from "node:crypto";
import { expect, it } from "vitest";
import { postgresDatabase, sqliteDatabase } from "../../src/store/sql-database.js";
import { AttachmentRepo } from "../../src/team/store/attachment-repo.js";
import type { AttachmentRepository } from "../../src/team/store/repositories.js";
import { pngImage } from "../support/attachment-files.js";
import { type Backend, describeBackends } from "./backends.js";

async function exec(backend: Backend, sql: string, params: unknown[]): Promise<void> {
  if (backend.kind === "sqlite") backend.db.prepare(sql.replace(/\$\d+/g, "?")).run(...params);
  else await backend.db.run(sql, params);
}

async function count(backend: Backend): Promise<number> {
  if (backend.kind === "sqlite")
    return (backend.db.prepare("SELECT count(*) AS n FROM attachments").get() as { n: number }).n;
  return Number((await backend.db.one<{ n: string }>("SELECT count(*) AS n FROM attachments"))?.n);
}

describeBackends("attachment repository", (open) => {
  it("stores the bytes once and serves them only through the chats they are linked to", async () => {
    const backend = await open();
    const repo: AttachmentRepository = new AttachmentRepo(
      backend.kind === "sqlite" ? sqliteDatabase(backend.db) : postgresDatabase(backend.db),
    );
    for (const id of ["a", "b", "c"]) {
      await exec(
        backend,
        "INSERT INTO team_channels (id, kind, name, created_by, created_at, updated_at) VALUES ($1, 'direct', $2, 'u', 1, 1)",
        [id, `chat ${id}`],
      );
    }
    const data = pngImage(3, 3);
    const id = createHash("sha256").update(data).digest("hex");
    const file = { id, mimeType: "image/png", kind: "image" as const, data };
    const first = await repo.put(file, { channelId: "a", name: "one.png", by: "u1", at: 10 });
    expect(first).toEqual({ id, name: "one.png", mimeType: "image/png", kind: "image", size: data.length });
    await repo.put(file, { channelId: "b", name: "two.png", by: "u2", at: 11 });
    expect(await count(backend)).toBe(1);
    expect((await repo.meta("b", id))?.name).toBe("two.png");
    const read = await repo.read("a", id);
    expect(read?.data.equals(data)).toBe(true);
    expect(await repo.read("c", id)).toBeUndefined();
    expect(await repo.meta("c", id)).toBeUndefined();
    await exec(backend, "DELETE FROM team_channels WHERE id = $1", ["a"]);
    expect(await repo.read("a", id)).toBeUndefined();
    expect((await repo.read("b", id))?.data.equals(data)).toBe(true);
  });
});
