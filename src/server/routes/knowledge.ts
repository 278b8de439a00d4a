/**
 * `/api/kb`: knowledge bases over HTTP. Owners and admins manage bases and upload documents
 * (multipart, ingested as a background job the caller polls); members may list and search. Mount
 * with `createServer({ routes: [..., mountKnowledgeRoutes(service)] })`, after the server's auth guards.
 */
import { Hono } from "hono";
import * as z from "zod";
import { DimsumError, forbidden, notFound } from "../../errors.js";
import type { IngestSource } from "../../knowledge/index.js";
import { DEFAULT_MAX_FILE_BYTES, formatOf, type KnowledgeService } from "../../knowledge/index.js";
import { formatBytes } from "../../knowledge/ingest/collect.js";
import { BASE_NAME } from "../../knowledge/knowledge-service.js";
import { canChangeVisibility, canUseResource, type Visibility } from "../../shared/visibility.js";
import { requireRole } from "../auth/middleware.js";
import { type AppContext, type AppEnv, actorOf, type DimsumApp } from "../context.js";
import { jsonBody, paramsOf, queryOf } from "../http/validate.js";
import { teamErrorHandler } from "./team-errors.js";
import { visibilityFields } from "./team-schemas.js";

export interface KnowledgeRoutesOptions {
  /** Largest uploaded file, in bytes (default 20 MB). */
  maxFileBytes?: number;
  /** Most files in one upload (default 100). */
  maxFiles?: number;
}

export const DEFAULT_MAX_UPLOAD_FILES = 100;

// Checked here so a bad name is the caller's fault (400), not a configuration problem of the server.
const baseName = z
  .string()
  .min(1, "required")
  .max(64, "at most 64 characters")
  .regex(BASE_NAME, "use letters, digits, '-', '_' or '.', starting with a letter or digit");
const agentQuery = z.object({ agentId: z.string().min(1).max(40).optional() });
const nameParam = z.object({ name: baseName });
const docParams = z.object({ name: baseName, id: z.string().min(1).max(4096) });
const jobParam = z.object({ id: z.string().min(1).max(100) });
const createSchema = z.object({
  name: baseName,
  agentId: z.string().min(1).max(40).optional(),
  description: z.string().max(1000, "at most 1000 characters").optional(),
  ...visibilityFields,
});
const visibilitySchema = z.object(visibilityFields);
const searchQuery = agentQuery.extend({
  q: z.string().trim().min(1, "give the words to look for").max(2000, "at most 2000 characters"),
  topK: z.coerce.number().int().min(1).max(50).optional(),
});
const uploadQuery = agentQuery.extend({ force: z.enum(["1", "true"]).optional() });

const managers = requireRole("owner", "admin");
const readers = requireRole("owner", "admin", "member");

/**
 * The file name an upload is stored under: its last path segment only, so `../x.md` or `a\b.md`
 * cannot name anything outside the base; undefined for names that stay unsafe (`..`, empty, NUL).
 */
export function safeUploadName(raw: string): string | undefined {
  const name = raw.split(/[/\\]/).pop()?.trim() ?? "";
  if (name === "" || name === "." || name === ".." || name.length > 255) return undefined;
  // Control characters would end up in citations and logs.
  if (/[\p{Cc}]/u.test(name)) return undefined;
  return name;
}

function uploadedFiles(body: Record<string, unknown>): File[] {
  const files: File[] = [];
  for (const value of Object.values(body)) {
    for (const item of Array.isArray(value) ? value : [value]) {
      if (item instanceof File) files.push(item);
    }
  }
  return files;
}

/** Checks every file before any is ingested, so a bad batch adds nothing. */
async function toSources(files: File[], options: Required<KnowledgeRoutesOptions>): Promise<IngestSource[]> {
  if (files.length === 0) {
    throw new DimsumError("invalid", "no files in the upload; send them as multipart/form-data file fields");
  }
  if (files.length > options.maxFiles) {
    throw new DimsumError(
      "invalid",
      `${files.length} files in one upload, more than the limit of ${options.maxFiles}; upload fewer at a time`,
    );
  }
  const checked = files.map((file) => {
    const name = safeUploadName(file.name);
    if (!name) {
      throw new DimsumError("invalid", `"${file.name}" is not a usable file name; rename the file`);
    }
    if (!formatOf(name)) {
      throw new DimsumError(
        "invalid",
        `${name}: unsupported file type; upload Markdown, text, HTML, PDF or source code files`,
      );
    }
    if (file.size > options.maxFileBytes) {
      throw new DimsumError(
        "too_large",
        `${name} is ${formatBytes(file.size)}, over the ${formatBytes(options.maxFileBytes)} limit per file; split it or leave it out`,
      );
    }
    return { name, file };
  });
  const sources: IngestSource[] = [];
  for (const { name, file } of checked) {
    sources.push({ kind: "bytes", name, data: new Uint8Array(await file.arrayBuffer()) });
  }
  return sources;
}

/** The knowledge base routes, mounted at `/api/kb`. */
export function knowledgeRoutes(
  service: KnowledgeService,
  options: KnowledgeRoutesOptions = {},
): Hono<AppEnv> {
  const limits = {
    maxFileBytes: options.maxFileBytes ?? DEFAULT_MAX_FILE_BYTES,
    maxFiles: options.maxFiles ?? DEFAULT_MAX_UPLOAD_FILES,
  };
  const app = new Hono<AppEnv>();
  // A base the caller may not see is answered as one that does not exist (the same 404).
  const requireBase = async (c: AppContext, name: string, agentId: string | undefined) => {
    const base = await service.getBase(name, agentId);
    if (!base || !canUseResource(actorOf(c), base)) throw notFound(`knowledge base "${name}" not found`);
    return base;
  };

  // The upload limits let the page state them before anyone uploads.
  app.get("/", readers, async (c) => {
    const [status, bases] = await Promise.all([service.status(), service.listBases({ all: true })]);
    const actor = actorOf(c);
    return c.json({ status, bases: bases.filter((b) => canUseResource(actor, b)), limits });
  });

  app.post("/", managers, jsonBody(createSchema), async (c) => {
    const { name, agentId, description, visibility, allowedUsers } = c.req.valid("json");
    const existing = await service.getBase(name, agentId);
    if (existing && !canUseResource(actorOf(c), existing))
      throw notFound(`knowledge base "${name}" not found`);
    // The creator owns the base; asking for an existing one returns it unchanged.
    const created: Parameters<KnowledgeService["createBase"]>[1] = { ownerId: actorOf(c).userId };
    if (agentId) created.agentId = agentId;
    if (description) created.description = description;
    if (visibility) created.visibility = visibility;
    if (allowedUsers) created.allowedUsers = allowedUsers;
    return c.json(await service.createBase(name, created), 201);
  });

  // Who sees the base: its owner or an admin may change it.
  app.patch(
    "/:name",
    readers,
    paramsOf(nameParam),
    queryOf(agentQuery),
    jsonBody(visibilitySchema),
    async (c) => {
      const { name } = c.req.valid("param");
      const { agentId } = c.req.valid("query");
      const base = await requireBase(c, name, agentId);
      if (!canChangeVisibility(actorOf(c), base)) {
        throw forbidden(
          "Only the knowledge base's owner or an admin can change who sees it.",
          "ask its owner",
        );
      }
      const { visibility, allowedUsers } = c.req.valid("json");
      const patch: { visibility?: Visibility; allowedUsers?: string[] } = {};
      if (visibility) patch.visibility = visibility;
      if (allowedUsers) patch.allowedUsers = allowedUsers;
      const next = await service.setVisibility(name, agentId, patch);
      if (!next) throw notFound(`knowledge base "${name}" not found`);
      return c.json(next);
    },
  );

  // Jobs first: `/jobs/:id` would otherwise read as the base "jobs".
  app.get("/jobs/:id", readers, paramsOf(jobParam), (c) => {
    const job = service.job(c.req.valid("param").id);
    if (!job) throw notFound("ingestion job not found");
    return c.json(job.snapshot());
  });

  app.post("/jobs/:id/cancel", managers, paramsOf(jobParam), (c) => {
    const job = service.job(c.req.valid("param").id);
    if (!job) throw notFound("ingestion job not found");
    job.cancel();
    return c.json(job.snapshot(), 202);
  });

  app.delete("/:name", managers, paramsOf(nameParam), queryOf(agentQuery), async (c) => {
    const { name } = c.req.valid("param");
    await requireBase(c, name, c.req.valid("query").agentId);
    if (!(await service.removeBase(name, c.req.valid("query").agentId)))
      throw notFound(`knowledge base "${name}" not found`);
    return c.body(null, 204);
  });

  app.get("/:name/documents", readers, paramsOf(nameParam), queryOf(agentQuery), async (c) => {
    const { name } = c.req.valid("param");
    const { agentId } = c.req.valid("query");
    await requireBase(c, name, agentId);
    return c.json(await service.listDocuments(name, agentId));
  });

  app.delete("/:name/documents/:id", managers, paramsOf(docParams), queryOf(agentQuery), async (c) => {
    const { name, id } = c.req.valid("param");
    const { agentId } = c.req.valid("query");
    await requireBase(c, name, agentId);
    if (!(await service.removeDocument(name, id, agentId)))
      throw notFound(`document "${id}" in ${name} not found`);
    return c.body(null, 204);
  });

  app.post("/:name/upload", managers, paramsOf(nameParam), queryOf(uploadQuery), async (c) => {
    const { name } = c.req.valid("param");
    const { agentId, force } = c.req.valid("query");
    const existing = await service.getBase(name, agentId);
    if (existing && !canUseResource(actorOf(c), existing))
      throw notFound(`knowledge base "${name}" not found`);
    const type = (c.req.header("content-type") ?? "").toLowerCase();
    if (!type.startsWith("multipart/form-data")) {
      throw new DimsumError("invalid", "send the files as multipart/form-data");
    }
    const body = await c.req.parseBody({ all: true }).catch((err: unknown) => {
      throw new DimsumError("invalid", `unreadable multipart body: ${(err as Error).message}`);
    });
    const sources = await toSources(uploadedFiles(body), limits);
    const ingest: { agentId?: string; force?: boolean } = {};
    if (agentId) ingest.agentId = agentId;
    if (force) ingest.force = true;
    const job = service.startIngest(name, sources, ingest);
    return c.json({ jobId: job.id, files: sources.length }, 202);
  });

  app.get("/:name/search", readers, paramsOf(nameParam), queryOf(searchQuery), async (c) => {
    const { name } = c.req.valid("param");
    const { q, topK, agentId } = c.req.valid("query");
    await requireBase(c, name, agentId);
    const query: Parameters<KnowledgeService["search"]>[0] = {
      query: q,
      kb: name,
      signal: c.req.raw.signal,
      viewer: actorOf(c),
    };
    if (topK) query.topK = topK;
    if (agentId) query.agentId = agentId;
    return c.json(await service.search(query));
  });

  return app;
}

/** Builds the mount function for `ServerDeps.routes`. */
export function mountKnowledgeRoutes(
  service: KnowledgeService,
  options: KnowledgeRoutesOptions = {},
): (app: DimsumApp) => void {
  return (app) => {
    const api = new Hono<AppEnv>();
    // Set before `app.route`, which wraps every handler of `api` with this handler.
    api.onError(teamErrorHandler);
    api.route("/", knowledgeRoutes(service, options));
    app.route("/api/kb", api);
  };
}
