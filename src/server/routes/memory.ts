/**
 * `/api/memory`: people's long-term memories. Everyone may list, delete and import their own; owners
 * and admins may also those of any user (`?userId=`). Answers 501 when the server runs without memory.
 */
import { Hono } from "hono";
import { forbidden, notFound, unavailable } from "../../errors.js";
import { importMemories, parseMemoryRecords } from "../../memory/import.js";
import type { ListMemoriesOptions, MemoryRecord, MemoryStore } from "../../memory/types.js";
import { type AppContext, type AppEnv, authOf } from "../context.js";
import { jsonBody, paramsOf, queryOf } from "../http/validate.js";
import { idParam, memoryDeleteQuerySchema, memoryImportSchema, memoryQuerySchema } from "./team-schemas.js";

const isAdminRole = (role: string) => role === "owner" || role === "admin";

/** The user whose memory the caller asks about: themselves unless an admin names another. */
function targetUser(c: AppContext, userId: string | undefined): string {
  const auth = authOf(c);
  if (userId === undefined || userId === auth.user.id) return auth.user.id;
  if (!isAdminRole(auth.actor.role)) throw forbidden("you can see and delete only your own memories");
  if (!c.get("services").users.get(userId)) throw notFound(`user ${userId} not found`);
  return userId;
}

/** An admin deleting by id alone: find which user the memory belongs to. */
async function ownerOf(c: AppContext, memory: MemoryStore, id: string): Promise<MemoryRecord | undefined> {
  const auth = authOf(c);
  const own = await memory.get(auth.user.id, id);
  if (own || !isAdminRole(auth.actor.role)) return own;
  for (const user of c.get("services").users.list()) {
    const found = await memory.get(user.id, id);
    if (found) return found;
  }
  return undefined;
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
    const { userId, agentId, type, limit, offset } = c.req.valid("query");
    const options: ListMemoriesOptions = {};
    if (agentId !== undefined) options.agentId = agentId;
    if (type !== undefined) options.type = type;
    if (limit !== undefined) options.limit = limit;
    if (offset !== undefined) options.offset = offset;
    return c.json(await memory.list(targetUser(c, userId), options));
  });

  // Many memories at once, as `dimsum memory import` does; nothing is stored when one is wrong.
  app.post("/import", jsonBody(memoryImportSchema), async (c) => {
    const body = c.req.valid("json");
    const userId = targetUser(c, body.userId);
    const allowed = (id: string) => {
      try {
        return targetUser(c, id) === id;
      } catch {
        return false;
      }
    };
    const inputs = parseMemoryRecords(body.memories, {
      userId,
      ...(body.agentId !== undefined ? { agentId: body.agentId } : {}),
      allowUser: allowed,
    });
    const result = await importMemories(memory, inputs, { merge: body.merge ?? false });
    return c.json({ imported: inputs.length, ...result, ms: Math.round(result.ms) });
  });

  app.delete("/:id", paramsOf(idParam), queryOf(memoryDeleteQuerySchema), async (c) => {
    const { id } = c.req.valid("param");
    const { userId } = c.req.valid("query");
    const record =
      userId === undefined ? await ownerOf(c, memory, id) : await memory.get(targetUser(c, userId), id);
    if (!record || !(await memory.forget(record.userId, id))) throw notFound(`memory ${id} not found`);
    return c.body(null, 204);
  });

  return app;
}
