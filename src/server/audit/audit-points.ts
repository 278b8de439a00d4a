/**
 * Which requests the audit log records: one table of points (method, path, action), read by one
 * middleware mounted before every `/api` route. A point records after the route answered: on
 * success, or (sign-in) on the refusal it is about. What the caller sent is the entry's "after"
 * value and, where it matters, what was there before is read first ("before"); secrets in either are
 * redacted by the log itself. Actions that do not come over HTTP call `recordAudit` (record.ts).
 */
import type { MiddlewareHandler } from "hono";
import type { AppContext, AppEnv } from "../context.js";
import { type AuditWhat, recordAudit } from "./record.js";

interface Point {
  method: "GET" | "POST" | "PUT" | "PATCH" | "DELETE";
  path: RegExp;
  /** The action; a function may choose by the request (and skip with undefined). */
  action: string | ((c: AppContext, body: unknown) => string | undefined);
  /** The statuses recorded (default: 2xx). */
  on?: (status: number) => boolean;
  /** What the entry is about; default: the path's first capture, else the answer's `id`/`name`. */
  target?: (match: RegExpMatchArray, answer: Record<string, unknown> | undefined) => string | undefined;
  /** What was there before the change (read before the route runs). */
  before?: (c: AppContext, match: RegExpMatchArray) => Promise<unknown>;
  /** What to write as "after" (default: the request's JSON body). */
  after?: (body: unknown, match: RegExpMatchArray, c: AppContext) => unknown;
  /** Who, when the request was not signed in. */
  actor?: (body: unknown, answer: Record<string, unknown> | undefined) => AuditWhat["actor"];
}

const ok = (status: number) => status >= 200 && status < 300;
const seg = "([^/]+)";
const p = (pattern: string) => new RegExp(`^/api${pattern.replaceAll(":s", seg)}/?$`);
const field = (value: unknown, key: string): unknown =>
  value && typeof value === "object" ? (value as Record<string, unknown>)[key] : undefined;
const str = (value: unknown): string | undefined => (typeof value === "string" ? value : undefined);
const nothing = () => undefined;
const decode = (part: string | undefined) => (part === undefined ? undefined : decodeURIComponent(part));

/** The audited actions (README: Audit log lists them). */
export const AUDIT_POINTS: readonly Point[] = [
  // Signing in and out
  {
    method: "POST",
    path: p("/auth/login"),
    action: (c) => (ok(c.res.status) ? "auth.sign_in" : "auth.sign_in_failed"),
    on: (status) => ok(status) || status === 401 || status === 429,
    target: nothing,
    after: nothing,
    actor: (body, answer) => {
      const user = field(answer, "user");
      const id = str(field(user, "id"));
      const name = str(field(user, "username")) ?? str(field(body, "username"));
      return { ...(id ? { id } : {}), ...(name ? { name } : {}) };
    },
  },
  {
    method: "POST",
    path: p("/auth/setup"),
    action: "account.create",
    target: (_m, answer) => str(field(field(answer, "user"), "id")),
    after: (body) => ({ username: field(body, "username"), role: "owner" }),
    actor: (_body, answer) => ({
      ...(str(field(field(answer, "user"), "id")) ? { id: str(field(field(answer, "user"), "id")) } : {}),
      ...(str(field(field(answer, "user"), "username"))
        ? { name: str(field(field(answer, "user"), "username")) }
        : {}),
    }),
  },
  { method: "POST", path: p("/auth/logout"), action: "auth.sign_out", target: nothing, after: nothing },
  {
    method: "POST",
    path: p("/auth/logout-all"),
    action: "auth.sign_out_all",
    target: nothing,
    after: nothing,
  },
  { method: "DELETE", path: p("/auth/sessions/:s"), action: "auth.session_revoke", after: nothing },
  {
    method: "POST",
    path: p("/auth/password"),
    action: "account.password_change",
    target: nothing,
    after: () => ({ password: "changed" }),
  },
  // Accounts (owners and admins)
  {
    method: "POST",
    path: p("/users"),
    action: "account.create",
    after: (body) => ({ username: field(body, "username"), role: field(body, "role") }),
  },
  {
    method: "PATCH",
    path: p("/users/:s"),
    action: (_c, body) =>
      field(body, "role") !== undefined
        ? field(body, "password") !== undefined
          ? "account.role_and_password_change"
          : "account.role_change"
        : field(body, "password") !== undefined
          ? "account.password_reset"
          : field(body, "disabled") === true
            ? "account.disable"
            : "account.enable",
    before: async (c, m) => {
      const user = await c.get("services").users.get(decode(m[1]) ?? "");
      return user ? { username: user.username, role: user.role } : undefined;
    },
    after: (body) => ({
      ...(field(body, "role") !== undefined ? { role: field(body, "role") } : {}),
      ...(field(body, "password") !== undefined ? { password: "reset" } : {}),
      ...(field(body, "disabled") !== undefined ? { disabled: field(body, "disabled") } : {}),
    }),
  },
  {
    method: "DELETE",
    path: p("/users/:s"),
    action: "account.delete",
    before: async (c, m) => {
      const user = await c.get("services").users.get(decode(m[1]) ?? "");
      return user ? { username: user.username, role: user.role } : undefined;
    },
    after: nothing,
  },
  // Single sign-on set-up (the sign-ins themselves are recorded by routes/sso.ts)
  {
    method: "PUT",
    path: p("/sso/providers/:s"),
    action: "sso.provider_save",
    before: async (c, m) => (await c.get("services").sso.store.views()).find((v) => v.id === decode(m[1])),
  },
  {
    method: "DELETE",
    path: p("/sso/providers/:s"),
    action: "sso.provider_delete",
    before: async (c, m) => (await c.get("services").sso.store.views()).find((v) => v.id === decode(m[1])),
    after: nothing,
  },
  {
    method: "PUT",
    path: p("/sso/password-sign-in"),
    action: "sso.password_sign_in",
    target: nothing,
    before: async (c) => ({ enabled: await c.get("services").sso.store.passwordSignIn() }),
  },
  // API tokens
  { method: "POST", path: p("/tokens"), action: "token.create" },
  { method: "DELETE", path: p("/tokens/:s"), action: "token.revoke", after: nothing },
  // Settings and provider keys
  {
    method: "PUT",
    path: p("/settings"),
    action: "settings.update",
    target: nothing,
    before: async (c) => settingsBefore(c),
  },
  {
    method: "PUT",
    path: p("/settings/providers/:s"),
    action: (_c, body) => (str(field(body, "apiKey")) ? "provider.key_set" : "provider.update"),
    before: async (c, m) => providerBefore(c, decode(m[1])),
  },
  {
    method: "DELETE",
    path: p("/settings/providers/:s"),
    action: "provider.delete",
    before: async (c, m) => providerBefore(c, decode(m[1])),
    after: nothing,
  },
  {
    method: "POST",
    path: p("/http-tools"),
    action: "http_tool.add",
    target: (_m, a) => str(field(a, "name")),
  },
  { method: "PATCH", path: p("/http-tools/:s"), action: "http_tool.update" },
  { method: "DELETE", path: p("/http-tools/:s"), action: "http_tool.delete", after: nothing },
  // MCP servers
  { method: "POST", path: p("/mcp"), action: "mcp.add", target: (_m, a) => str(field(a, "name")) },
  { method: "DELETE", path: p("/mcp/:s"), action: "mcp.delete", after: nothing },
  { method: "POST", path: p("/mcp/:s/connect"), action: "mcp.connect", after: nothing },
  { method: "POST", path: p("/mcp/:s/disconnect"), action: "mcp.disconnect", after: nothing },
  { method: "POST", path: p("/mcp/:s/signin"), action: "mcp.sign_in_start", after: nothing },
  { method: "DELETE", path: p("/mcp/:s/signin"), action: "mcp.sign_out", after: nothing },
  // Remote agents
  {
    method: "POST",
    path: p("/remote-agents"),
    action: "remote_agent.add",
    target: (_m, a) => str(field(a, "name")),
  },
  { method: "PATCH", path: p("/remote-agents/:s"), action: "remote_agent.update" },
  { method: "DELETE", path: p("/remote-agents/:s"), action: "remote_agent.delete", after: nothing },
  // Connectors
  { method: "POST", path: p("/connectors"), action: "connector.create" },
  { method: "PATCH", path: p("/connectors/:s"), action: "connector.update" },
  { method: "DELETE", path: p("/connectors/:s"), action: "connector.delete", after: nothing },
  { method: "POST", path: p("/connectors/:s/start"), action: "connector.start", after: nothing },
  { method: "POST", path: p("/connectors/:s/stop"), action: "connector.stop", after: nothing },
  {
    method: "PATCH",
    path: p("/connectors/:s/chats/:s"),
    action: "connector.bind_chat",
    target: (m) => `${decode(m[1])}/${decode(m[2])}`,
  },
  {
    method: "PUT",
    path: p("/connectors/:s/people/:s/link"),
    action: "connector.link_person",
    target: (m) => `${decode(m[1])}/${decode(m[2])}`,
  },
  {
    method: "POST",
    path: p("/account/messenger-link"),
    action: "connector.link_code",
    target: nothing,
    after: nothing,
  },
  // Approvals and grants
  {
    method: "POST",
    path: p("/runs/:s/approvals/:s"),
    action: (_c, body) =>
      field(body, "always") === true && field(body, "decision") === "approve"
        ? "approval.grant"
        : "approval.decide",
    target: (m) => `${decode(m[1])}/${decode(m[2])}`,
  },
  {
    method: "POST",
    path: p("/channels/:s/mcp-apps/:s/:s/approvals/:s"),
    action: "approval.decide",
    target: (m) => `${decode(m[2])}/${decode(m[3])}/${decode(m[4])}`,
  },
  {
    // A flow step that needs approval, approved (the flow's other actions are not audited).
    method: "POST",
    path: p("/flows/:s/actions"),
    action: (_c, body) => (field(body, "action") === "approve" ? "approval.decide" : undefined),
    target: (m) => `flow:${decode(m[1])}`,
  },
  {
    method: "DELETE",
    path: p("/channels/:s/approvals/:s/:s"),
    action: "approval.grant_revoke",
    target: (m) => `${decode(m[1])}/${decode(m[2])}/${decode(m[3])}`,
    after: nothing,
  },
  // Exports and imports
  { method: "GET", path: p("/agents/:s/export"), action: "export.agent", after: nothing },
  { method: "GET", path: p("/channels/:s/export"), action: "export.team", after: nothing },
  {
    method: "POST",
    path: p("/templates/import"),
    action: "import.template",
    target: (_m, a) => str(field(a, "id")) ?? str(field(field(a, "channel"), "id")),
    after: (body) => ({ kind: field(body, "kind"), name: field(body, "name") }),
  },
  {
    method: "POST",
    path: p("/memory/import"),
    action: "import.memory",
    target: nothing,
    after: (body) => ({
      count: Array.isArray(field(body, "memories"))
        ? (field(body, "memories") as unknown[]).length
        : undefined,
    }),
  },
  // Deletions
  { method: "DELETE", path: p("/channels/:s"), action: "chat.delete", after: nothing },
  { method: "DELETE", path: p("/messages/:s"), action: "message.delete", after: nothing },
  { method: "DELETE", path: p("/memory/:s"), action: "memory.delete", after: nothing },
  { method: "DELETE", path: p("/memory/core/:s"), action: "memory.core_delete", after: nothing },
  { method: "POST", path: p("/kb"), action: "knowledge.create", target: (_m, a) => str(field(a, "name")) },
  { method: "DELETE", path: p("/kb/:s"), action: "knowledge.delete", after: nothing },
  {
    method: "DELETE",
    path: p("/kb/:s/documents/:s"),
    action: "knowledge.document_delete",
    target: (m) => `${decode(m[1])}/${decode(m[2])}`,
    after: nothing,
  },
  { method: "DELETE", path: p("/agents/:s"), action: "agent.delete", after: nothing },
  // Budgets
  { method: "POST", path: p("/budgets"), action: "budget.create" },
  {
    method: "PUT",
    path: p("/budgets/:s"),
    action: "budget.update",
    before: async (c, m) => (await c.get("services").budgets?.get(decode(m[1]) ?? "")) ?? null,
  },
  {
    method: "DELETE",
    path: p("/budgets/:s"),
    action: "budget.delete",
    before: async (c, m) => (await c.get("services").budgets?.get(decode(m[1]) ?? "")) ?? null,
    after: nothing,
  },
];

async function settingsBefore(c: AppContext): Promise<unknown> {
  const view = await c.get("services").settings.view();
  return view;
}

async function providerBefore(c: AppContext, name: string | undefined): Promise<unknown> {
  const view = await c.get("services").settings.view();
  return view.providers.find((provider) => provider.name === name) ?? null;
}

async function jsonOf(read: () => Promise<unknown>): Promise<unknown> {
  try {
    return await read();
  } catch {
    return undefined;
  }
}

function matchPoint(method: string, path: string): { point: Point; match: RegExpMatchArray } | undefined {
  for (const point of AUDIT_POINTS) {
    if (point.method !== method) continue;
    const match = point.path.exec(path);
    if (match) return { point, match };
  }
  return undefined;
}

/** The middleware that records the audited requests (mount on `/api/*`, after authentication). */
export function auditRequests(): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const found = c.get("services").audit ? matchPoint(c.req.method, c.req.path) : undefined;
    if (!found) return next();
    const { point, match } = found;
    const before = point.before ? await point.before(c, match).catch(() => undefined) : undefined;
    await next();
    const status = c.res.status;
    if (!(point.on ?? ok)(status)) return;
    const body =
      c.req.method === "GET" || c.req.method === "DELETE" ? undefined : await jsonOf(() => c.req.json());
    const json = c.res.headers.get("content-type")?.includes("application/json");
    const answer = json
      ? ((await jsonOf(() => c.res.clone().json())) as Record<string, unknown> | undefined)
      : undefined;
    const action = typeof point.action === "string" ? point.action : point.action(c, body);
    if (!action) return;
    const target = point.target
      ? point.target(match, answer)
      : (decode(match[1]) ?? str(field(answer, "id")) ?? str(field(answer, "name")));
    const after = point.after ? point.after(body, match, c) : body;
    const actor = point.actor?.(body, answer);
    await recordAudit(c, action, {
      ...(target !== undefined ? { target } : {}),
      ...(before !== undefined ? { before } : {}),
      ...(after !== undefined ? { after } : {}),
      ...(actor && (actor.id || actor.name) ? { actor } : {}),
    });
  };
}
