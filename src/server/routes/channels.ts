/**
 * `/api/channels`: direct chats and groups, their members and collaboration chain. The facade decides
 * who may see or manage a channel; these routes also check that invited people have accounts.
 */
import { Hono } from "hono";
import { DimsumError } from "../../errors.js";
import type { Team } from "../../team/types.js";
import { type AppContext, type AppEnv, actorOf } from "../context.js";
import { jsonBody, paramsOf } from "../http/validate.js";
import {
  chainSchema,
  channelInputSchema,
  channelPatchSchema,
  channelPrefsSchema,
  grantParams,
  idParam,
  memberParams,
  memberSchema,
} from "./team-schemas.js";

/** 400 naming each user id without an account (a typo would otherwise add a member nobody is). */
async function requireUsers(c: AppContext, userIds: readonly string[], path: string): Promise<void> {
  const { users } = c.get("services");
  const found = await Promise.all(userIds.map((id) => users.get(id)));
  const issues = userIds.flatMap((id, index) =>
    found[index] ? [] : [{ path: path.replace("*", String(index)), message: `no user with id "${id}"` }],
  );
  if (issues.length > 0) throw new DimsumError("invalid", "unknown user id", { issues });
}

/** The channel routes, mounted at `/api/channels`. */
export function channelRoutes(team: Team): Hono<AppEnv> {
  const app = new Hono<AppEnv>();

  app.get("/", async (c) => c.json(await team.listChannels(actorOf(c))));

  app.post("/", jsonBody(channelInputSchema), async (c) => {
    const input = c.req.valid("json");
    await requireUsers(c, input.userIds, "userIds.*");
    return c.json(await team.createChannel(actorOf(c), input), 201);
  });

  app.get("/:id", paramsOf(idParam), async (c) => {
    return c.json(await team.getChannel(actorOf(c), c.req.valid("param").id));
  });

  // The names of the people in a chat, for anyone who may read it (members see who wrote what
  // without the admin-only account list): id and username of each person member, nothing else.
  app.get("/:id/people", paramsOf(idParam), async (c) => {
    const channel = await team.getChannel(actorOf(c), c.req.valid("param").id);
    const { users } = c.get("services");
    const ids = channel.members.flatMap((m) => (m.type === "user" ? [m.id] : []));
    const found = await Promise.all(ids.map((id) => users.get(id)));
    return c.json(found.flatMap((user) => (user ? [{ id: user.id, username: user.username }] : [])));
  });

  app.get("/:id/runs", paramsOf(idParam), async (c) => {
    return c.json(await team.listChannelRuns(actorOf(c), c.req.valid("param").id));
  });

  app.patch("/:id", paramsOf(idParam), jsonBody(channelPatchSchema), async (c) => {
    return c.json(await team.updateChannel(actorOf(c), c.req.valid("param").id, c.req.valid("json")));
  });

  // One person's pin and archive of a chat: theirs alone, so anyone who can see the chat may set them.
  app.put("/:id/prefs", paramsOf(idParam), jsonBody(channelPrefsSchema), async (c) => {
    return c.json(await team.setChannelPrefs(actorOf(c), c.req.valid("param").id, c.req.valid("json")));
  });

  // Names a direct chat after its first exchange (the web UI calls it once the first answer is in).
  app.post("/:id/title", paramsOf(idParam), async (c) => {
    return c.json(await team.titleChannel(actorOf(c), c.req.valid("param").id));
  });

  app.delete("/:id", paramsOf(idParam), async (c) => {
    await team.deleteChannel(actorOf(c), c.req.valid("param").id);
    return c.body(null, 204);
  });

  app.post("/:id/members", paramsOf(idParam), jsonBody(memberSchema), async (c) => {
    const member = c.req.valid("json");
    if (member.type === "user") await requireUsers(c, [member.id], "id");
    return c.json(await team.addMember(actorOf(c), c.req.valid("param").id, member));
  });

  app.delete("/:id/members/:type/:memberId", paramsOf(memberParams), async (c) => {
    const { id, type, memberId } = c.req.valid("param");
    return c.json(await team.removeMember(actorOf(c), id, { type, id: memberId }));
  });

  app.put("/:id/chain", paramsOf(idParam), jsonBody(chainSchema), async (c) => {
    return c.json(await team.setChain(actorOf(c), c.req.valid("param").id, c.req.valid("json").steps));
  });

  // "Approve always" answers: tools an agent runs in this chat without asking again.
  app.get("/:id/approvals", paramsOf(idParam), async (c) => {
    return c.json(await team.listApprovalGrants(actorOf(c), c.req.valid("param").id));
  });

  app.delete("/:id/approvals/:agentId/:tool", paramsOf(grantParams), async (c) => {
    const { id, agentId, tool } = c.req.valid("param");
    await team.revokeApprovalGrant(actorOf(c), id, agentId, tool);
    return c.body(null, 204);
  });

  return app;
}
