/**
 * `/api/memory`: people's long-term memories — archival memories (list, search, edit, forget,
 * import) and core blocks (list, set, delete). Everyone may read and change their own; owners and
 * admins may also those of any user (`?userId=`). Answers 501 when the server runs without memory.
 */
import { Hono } from "hono";
import { forbidden, invalid, notFound, unavailable } from "../../errors.js";
import { importMemories, parseMemoryRecords } from "../../memory/import.js";
import type { ListMemoriesOptions, MemoryEdit, MemoryRecord, MemoryStore } from "../../memory/types.js";
import { type AppContext, type AppEnv, authOf } from "../context.js";
import { jsonBody, paramsOf, queryOf } from "../http/validate.js";
import {
  coreBlockSchema,
  coreLabelParam,
  coreScopeQuerySchema,
  idParam,
  memoryEditSchema,
  memoryImportSchema,
  memoryOwnerQuerySchema,
  memoryQuerySchema,
} from "./team-schemas.js";

const isAdminRole = (role: string) => role === "owner" || role === "admin";

/** The user whose memory the caller asks about: themselves unless an admin names another. */
async function targetUser(c: AppContext, userId: string | undefined): Promise<string> {
  const auth = authOf(c);
  if (userId === undefined || userId === auth.user.id) return auth.user.id;
  if (!isAdminRole(auth.actor.role)) throw forbidden("you can see and change only your own memories");
  if (!(await c.get("services").users.get(userId))) throw notFound(`user ${userId} not found`);
  return userId;
}

/** An admin naming a memory by id alone: find which user it belongs to. */
async function ownerOf(c: AppContext, memory: MemoryStore, id: string): Promise<MemoryRecord | undefined> {
  const auth = authOf(c);
  const own = await memory.get(auth.user.id, id);
  if (own || !isAdminRole(auth.actor.role)) return own;
  for (const user of await c.get("services").users.list()) {
    const found = await memory.get(user.id, id);
    if (found) return found;
  }
  return undefined;
}

/** The memory a request names: the caller's (or, for admins, anyone's when `userId` is left out). */
async function findMemory(
  c: AppContext,
  memory: MemoryStore,
  id: string,
  userId: string | undefined,
): Promise<MemoryRecord> {
  const record =
    userId === undefined ? await ownerOf(c, memory, id) : await memory.get(await targetUser(c, userId), id);
  if (!record) throw notFound(`memory ${id} not found`);
  return record;
}

function scopeOf(userId: string, agentId: string | undefined) {
  return agentId === undefined ? { userId } : { userId, agentId };
}

/** The memory routes, mounted at `/api/memory`. */
export function memoryRoutes(memory: MemoryStore | undefined): Hono<AppEnv> {
  const app = new Hono<AppEnv>();

  if (!memory) {
    app.all("*", () => {
      throw unavailable("long-term memory is not enabled on this server");
    });
    return app;
  }

  app.get("/", queryOf(memoryQuerySchema), async (c) => {
    const { userId, agentId, type, limit, offset, q } = c.req.valid("query");
    const person = await targetUser(c, userId);
    if (q) {
      const found = await memory.search({
        ...scopeOf(person, agentId),
        query: q,
        limit: Math.min(limit ?? 50, 100),
        ...(type ? { type } : {}),
      });
      return c.json(found.hits.map((hit) => hit.memory));
    }
    const options: ListMemoriesOptions = {};
    if (agentId !== undefined) options.agentId = agentId;
    if (type !== undefined) options.type = type;
    if (limit !== undefined) options.limit = limit;
    if (offset !== undefined) options.offset = offset;
    return c.json(await memory.list(person, options));
  });

  // Many memories at once, as `dimsum memory import` does; nothing is stored when one is wrong.
  app.post("/import", jsonBody(memoryImportSchema), async (c) => {
    const body = c.req.valid("json");
    const userId = await targetUser(c, body.userId);
    // The records may name other people: an admin may import for any account, others for themselves.
    const auth = authOf(c);
    const known = isAdminRole(auth.actor.role)
      ? new Set((await c.get("services").users.list()).map((u) => u.id))
      : new Set<string>();
    const allowed = (id: string) => id === auth.user.id || known.has(id);
    const inputs = parseMemoryRecords(body.memories, {
      userId,
      ...(body.agentId !== undefined ? { agentId: body.agentId } : {}),
      allowUser: allowed,
    });
    const result = await importMemories(memory, inputs, { merge: body.merge ?? false });
    return c.json({ imported: inputs.length, ...result, ms: Math.round(result.ms) });
  });

  // Core blocks first: `/core/...` would otherwise read as a memory id.
  app.get("/core", queryOf(coreScopeQuerySchema), async (c) => {
    const { userId } = c.req.valid("query");
    return c.json(await memory.allCoreBlocks(await targetUser(c, userId)));
  });

  app.put(
    "/core/:label",
    paramsOf(coreLabelParam),
    queryOf(coreScopeQuerySchema),
    jsonBody(coreBlockSchema),
    async (c) => {
      const { label } = c.req.valid("param");
      const { userId, agentId } = c.req.valid("query");
      const scope = scopeOf(await targetUser(c, userId), agentId);
      const result = await memory.setCoreBlock(scope, label, c.req.valid("json").value);
      if (!result.ok) throw invalid(result.reason);
      return c.json(result.block);
    },
  );

  app.delete("/core/:label", paramsOf(coreLabelParam), queryOf(coreScopeQuerySchema), async (c) => {
    const { label } = c.req.valid("param");
    const { userId, agentId } = c.req.valid("query");
    if (!(await memory.deleteCoreBlock(scopeOf(await targetUser(c, userId), agentId), label)))
      throw notFound(`core memory block ${label} not found`);
    return c.body(null, 204);
  });

  app.patch(
    "/:id",
    paramsOf(idParam),
    queryOf(memoryOwnerQuerySchema),
    jsonBody(memoryEditSchema),
    async (c) => {
      const { id } = c.req.valid("param");
      const record = await findMemory(c, memory, id, c.req.valid("query").userId);
      const body = c.req.valid("json");
      const edit: MemoryEdit = {};
      if (body.text !== undefined) edit.text = body.text;
      if (body.type !== undefined) edit.type = body.type;
      if (body.tags !== undefined) edit.tags = body.tags;
      if (body.importance !== undefined) edit.importance = body.importance;
      const updated = await memory.update(record.userId, id, edit);
      if (!updated) throw notFound(`memory ${id} not found`);
      return c.json(updated);
    },
  );

  app.delete("/:id", paramsOf(idParam), queryOf(memoryOwnerQuerySchema), async (c) => {
    const { id } = c.req.valid("param");
    const record = await findMemory(c, memory, id, c.req.valid("query").userId);
    if (!(await memory.forget(record.userId, id))) throw notFound(`memory ${id} not found`);
    return c.body(null, 204);
  });

  return app;
}
