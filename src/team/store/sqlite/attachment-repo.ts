/** Attachments in SQLite: the bytes once per sha256, links per chat. */
import type { Database, Statement } from "better-sqlite3";
import type { AttachmentMeta, AttachmentRepository } from "../repositories.js";
import { guard } from "./sql-guard.js";

interface MetaRow {
  id: string;
  name: string;
  mime_type: string;
  kind: AttachmentMeta["kind"];
  size: number;
}

const metaOf = (row: MetaRow): AttachmentMeta => ({
  id: row.id,
  name: row.name,
  mimeType: row.mime_type,
  kind: row.kind,
  size: row.size,
});

const SELECT = `SELECT a.id, l.name, a.mime_type, a.kind, a.size FROM attachment_links l
  JOIN attachments a ON a.id = l.attachment_id WHERE l.channel_id = ? AND l.attachment_id = ?`;

/** The attachments and attachment_links tables. */
export class SqliteAttachmentRepo implements AttachmentRepository {
  readonly #db: Database;
  readonly #put: (
    file: Parameters<AttachmentRepository["put"]>[0],
    link: Parameters<AttachmentRepository["put"]>[1],
  ) => void;
  readonly #meta: Statement<[string, string], MetaRow>;
  readonly #data: Statement<[string], Buffer>;

  constructor(db: Database) {
    this.#db = db;
    const blob = db.prepare(
      `INSERT INTO attachments (id, mime_type, kind, size, data, created_at) VALUES (?, ?, ?, ?, ?, ?)
       ON CONFLICT (id) DO NOTHING`,
    );
    const link = db.prepare(
      `INSERT INTO attachment_links (channel_id, attachment_id, name, created_by, created_at) VALUES (?, ?, ?, ?, ?)
       ON CONFLICT (channel_id, attachment_id) DO UPDATE SET name = excluded.name`,
    );
    this.#put = db.transaction((file, to) => {
      blob.run(file.id, file.mimeType, file.kind, file.data.length, file.data, to.at);
      link.run(to.channelId, file.id, to.name, to.by, to.at);
    });
    this.#meta = db.prepare<[string, string], MetaRow>(SELECT);
    this.#data = db.prepare<[string], Buffer>("SELECT data FROM attachments WHERE id = ?").pluck();
  }

  put(...args: Parameters<AttachmentRepository["put"]>): Promise<AttachmentMeta> {
    const [file, link] = args;
    return guard(this.#db, "store an attachment in", () => {
      this.#put(file, link);
      const row = this.#meta.get(link.channelId, file.id);
      if (!row) throw new Error("the attachment was not stored");
      return metaOf(row);
    });
  }

  meta(channelId: string, id: string): Promise<AttachmentMeta | undefined> {
    return guard(this.#db, "read an attachment from", () => {
      const row = this.#meta.get(channelId, id);
      return row ? metaOf(row) : undefined;
    });
  }

  read(channelId: string, id: string): Promise<{ meta: AttachmentMeta; data: Buffer } | undefined> {
    return guard(this.#db, "read an attachment from", () => {
      const row = this.#meta.get(channelId, id);
      if (!row) return undefined;
      const data = this.#data.get(id);
      return data ? { meta: metaOf(row), data } : undefined;
    });
  }
}
