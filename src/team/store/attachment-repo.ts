/** Attachments: the bytes once per sha256, links per chat. */
import { one, run, type SqlDatabase, sql } from "../../store/sql-database.js";
import type { AttachmentMeta, AttachmentRepository } from "./repositories.js";

interface MetaRow {
  id: string;
  name: string;
  mime_type: string;
  kind: AttachmentMeta["kind"];
  size: number | string;
}

const metaOf = (row: MetaRow): AttachmentMeta => ({
  id: row.id,
  name: row.name,
  mimeType: row.mime_type,
  kind: row.kind,
  size: Number(row.size),
});

const LINKED = `FROM attachment_links l JOIN attachments a ON a.id = l.attachment_id
  WHERE l.channel_id = ? AND l.attachment_id = ?`;

const SQL = {
  blob: sql(
    `INSERT INTO attachments (id, mime_type, kind, size, data, created_at) VALUES (?, ?, ?, ?, ?, ?)
     ON CONFLICT (id) DO NOTHING`,
  ),
  link: sql(
    `INSERT INTO attachment_links (channel_id, attachment_id, name, created_by, created_at) VALUES (?, ?, ?, ?, ?)
     ON CONFLICT (channel_id, attachment_id) DO UPDATE SET name = excluded.name`,
  ),
  meta: sql(`SELECT a.id, l.name, a.mime_type, a.kind, a.size ${LINKED}`),
  read: sql(`SELECT a.id, l.name, a.mime_type, a.kind, a.size, a.data ${LINKED}`),
} as const;

const READ = "read an attachment from";

/** The attachments and attachment_links tables. */
export class AttachmentRepo implements AttachmentRepository {
  constructor(private readonly db: SqlDatabase) {}

  put(...args: Parameters<AttachmentRepository["put"]>): Promise<AttachmentMeta> {
    const [file, link] = args;
    return this.db.transaction("store an attachment in", function* () {
      yield* run(SQL.blob, [file.id, file.mimeType, file.kind, file.data.length, file.data, link.at]);
      yield* run(SQL.link, [link.channelId, file.id, link.name, link.by, link.at]);
      const row = yield* one<MetaRow>(SQL.meta, [link.channelId, file.id]);
      if (!row) throw new Error("the attachment was not stored");
      return metaOf(row);
    });
  }

  async meta(channelId: string, id: string): Promise<AttachmentMeta | undefined> {
    const row = await this.db.one<MetaRow>(READ, SQL.meta, [channelId, id]);
    return row ? metaOf(row) : undefined;
  }

  async read(channelId: string, id: string): Promise<{ meta: AttachmentMeta; data: Buffer } | undefined> {
    const row = await this.db.one<MetaRow & { data: Buffer | null }>(READ, SQL.read, [channelId, id]);
    return row?.data ? { meta: metaOf(row), data: row.data } : undefined;
  }
}
