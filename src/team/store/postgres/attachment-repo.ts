/** Attachments in PostgreSQL: the bytes once per sha256, links per chat (only the SQL differs). */
import type { PgDatabase } from "../../../store/postgres/pg-database.js";
import type { AttachmentMeta, AttachmentRepository } from "../repositories.js";

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
  size: Number(row.size),
});

const SELECT = `SELECT a.id, l.name, a.mime_type, a.kind, a.size FROM attachment_links l
  JOIN attachments a ON a.id = l.attachment_id WHERE l.channel_id = $1 AND l.attachment_id = $2`;

export class PgAttachmentRepo implements AttachmentRepository {
  readonly #db: PgDatabase;

  constructor(db: PgDatabase) {
    this.#db = db;
  }

  async put(...args: Parameters<AttachmentRepository["put"]>): Promise<AttachmentMeta> {
    const [file, link] = args;
    return this.#db.transaction(async (tx) => {
      await tx.run(
        `INSERT INTO attachments (id, mime_type, kind, size, data, created_at) VALUES ($1, $2, $3, $4, $5, $6)
         ON CONFLICT (id) DO NOTHING`,
        [file.id, file.mimeType, file.kind, file.data.length, file.data, link.at],
      );
      await tx.run(
        `INSERT INTO attachment_links (channel_id, attachment_id, name, created_by, created_at)
         VALUES ($1, $2, $3, $4, $5) ON CONFLICT (channel_id, attachment_id) DO UPDATE SET name = excluded.name`,
        [link.channelId, file.id, link.name, link.by, link.at],
      );
      const row = await tx.one<MetaRow>(SELECT, [link.channelId, file.id]);
      if (!row) throw new Error("the attachment was not stored");
      return metaOf(row);
    });
  }

  async meta(channelId: string, id: string): Promise<AttachmentMeta | undefined> {
    const row = await this.#db.one<MetaRow>(SELECT, [channelId, id]);
    return row ? metaOf(row) : undefined;
  }

  async read(channelId: string, id: string): Promise<{ meta: AttachmentMeta; data: Buffer } | undefined> {
    const row = await this.#db.one<MetaRow & { data: Buffer }>(
      `SELECT a.id, l.name, a.mime_type, a.kind, a.size, a.data FROM attachment_links l
       JOIN attachments a ON a.id = l.attachment_id WHERE l.channel_id = $1 AND l.attachment_id = $2`,
      [channelId, id],
    );
    return row ? { meta: metaOf(row), data: row.data } : undefined;
  }
}
