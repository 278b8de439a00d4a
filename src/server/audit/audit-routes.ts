/**
 * `/api/audit` (owners and admins): the audit log with filters (actor, action, time), its export as
 * CSV or JSON Lines, the chain's verification, and the retention.
 */
import { Hono } from "hono";
import { z } from "zod";
import { unavailable } from "../../errors.js";
import type { AuditEntry, AuditLog, AuditQuery } from "../../store/audit/audit-log.js";
import { requireRole } from "../auth/middleware.js";
import type { AppContext, AppEnv } from "../context.js";
import { jsonBody, queryOf } from "../http/validate.js";
import { recordAudit } from "./record.js";

const time = z.coerce.number().int().min(0).optional();
const filterSchema = z.object({
  actor: z.string().trim().min(1).max(200).optional(),
  action: z.string().trim().min(1).max(100).optional(),
  from: time,
  to: time,
  before: z.coerce.number().int().min(1).optional(),
  limit: z.coerce.number().int().min(1).max(1000).optional(),
  format: z.enum(["csv", "jsonl"]).optional(),
});
const retentionSchema = z.object({ retentionDays: z.number().int().min(0).max(36500) });

type Filters = z.output<typeof filterSchema>;

function queryFrom(f: Filters): AuditQuery {
  return {
    ...(f.actor ? { actor: f.actor } : {}),
    ...(f.action ? { action: f.action } : {}),
    ...(f.from !== undefined ? { from: f.from } : {}),
    ...(f.to !== undefined ? { to: f.to } : {}),
    ...(f.before !== undefined ? { beforeSeq: f.before } : {}),
    ...(f.limit !== undefined ? { limit: f.limit } : {}),
  };
}

function view(entry: AuditEntry) {
  return {
    seq: entry.seq,
    at: entry.at,
    actorId: entry.actorId,
    actorName: entry.actorName,
    action: entry.action,
    target: entry.target,
    ip: entry.ip,
    userAgent: entry.userAgent,
    instance: entry.instance,
    before: entry.before,
    after: entry.after,
    hash: entry.hash,
  };
}

const CSV_COLUMNS = [
  "seq",
  "time",
  "actor_id",
  "actor_name",
  "action",
  "target",
  "ip",
  "user_agent",
  "instance",
  "before",
  "after",
  "hash",
] as const;

/** One CSV field: quoted when needed; a leading formula character is defused for spreadsheets. */
function csvField(value: unknown): string {
  if (value === null || value === undefined) return "";
  let text = typeof value === "string" ? value : JSON.stringify(value);
  if (/^[=+\-@\t\r]/.test(text)) text = `'${text}`;
  return /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

function csvLine(entry: AuditEntry): string {
  return `${[
    entry.seq,
    new Date(entry.at).toISOString(),
    entry.actorId,
    entry.actorName,
    entry.action,
    entry.target,
    entry.ip,
    entry.userAgent,
    entry.instance,
    entry.before,
    entry.after,
    entry.hash,
  ]
    .map(csvField)
    .join(",")}\r\n`;
}

function logOf(c: AppContext): AuditLog {
  const audit = c.get("services").audit;
  if (!audit) throw unavailable("this server keeps no audit log");
  return audit;
}

/** The audit routes, mounted at `/api/audit`. */
export function auditRoutes(): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  app.use("*", requireRole("owner", "admin"));

  app.get("/", queryOf(filterSchema), async (c) => {
    const entries = await logOf(c).list(queryFrom(c.req.valid("query")));
    return c.json({ entries: entries.map(view) });
  });

  // The whole selection, newest first, streamed a page at a time.
  app.get("/export", queryOf(filterSchema), async (c) => {
    const filters = c.req.valid("query");
    const audit = logOf(c);
    const format = filters.format ?? "jsonl";
    const { limit: _limit, before: _before, ...rest } = filters;
    const entries = audit.all(queryFrom(rest));
    await recordAudit(c, "export.audit", { after: { format, ...queryFrom(rest) } });
    const encoder = new TextEncoder();
    const stream = new ReadableStream<Uint8Array>({
      async start(controller) {
        if (format === "csv") controller.enqueue(encoder.encode(`${CSV_COLUMNS.join(",")}\r\n`));
      },
      async pull(controller) {
        const next = await entries.next();
        if (next.done) {
          controller.close();
          return;
        }
        const entry = next.value;
        controller.enqueue(
          encoder.encode(format === "csv" ? csvLine(entry) : `${JSON.stringify(view(entry))}\n`),
        );
      },
    });
    const stamp = new Date().toISOString().slice(0, 10);
    return new Response(stream, {
      headers: {
        "content-type": format === "csv" ? "text/csv; charset=utf-8" : "application/x-ndjson; charset=utf-8",
        "content-disposition": `attachment; filename="dimsum-audit-${stamp}.${format === "csv" ? "csv" : "jsonl"}"`,
      },
    });
  });

  app.get("/verify", async (c) => c.json(await logOf(c).verify()));

  app.get("/settings", async (c) => c.json({ retentionDays: await logOf(c).retentionDays() }));

  app.put("/settings", jsonBody(retentionSchema), async (c) => {
    const audit = logOf(c);
    const before = { retentionDays: await audit.retentionDays() };
    const after = c.req.valid("json");
    await audit.setRetentionDays(after.retentionDays);
    await recordAudit(c, "settings.audit_retention", { before, after });
    return c.json(after);
  });

  return app;
}
