/**
 * `recordAudit`: writes one audit entry for a request (who, from where, what), through the server's
 * audit log. Writing never fails the request: the action already happened, so a failed write is
 * logged for the operator instead.
 */
import type { AuditActor, AuditInput } from "../../store/audit/audit-log.js";
import type { AppContext } from "../context.js";

export interface AuditWhat {
  target?: string;
  before?: unknown;
  after?: unknown;
  /** Who, when the request is not signed in (a failed sign-in) or the account is known only now. */
  actor?: AuditActor;
}

/** The caller of a request as the audit log names them. */
export function auditActorOf(c: AppContext): AuditActor | undefined {
  const auth = c.get("auth");
  return auth ? { id: auth.user.id, name: auth.user.username } : undefined;
}

/** Records `action` for the request `c`; a no-op on a server without an audit log. */
export async function recordAudit(c: AppContext, action: string, what: AuditWhat = {}): Promise<void> {
  const { audit, log } = c.get("services");
  if (!audit) return;
  const actor = what.actor ?? auditActorOf(c);
  const userAgent = c.req.header("user-agent");
  const input: AuditInput = {
    action,
    origin: { ip: c.get("clientIp"), ...(userAgent ? { userAgent } : {}) },
    ...(actor ? { actor } : {}),
    ...(what.target !== undefined ? { target: what.target } : {}),
    ...(what.before !== undefined ? { before: what.before } : {}),
    ...(what.after !== undefined ? { after: what.after } : {}),
  };
  try {
    await audit.record(input);
  } catch (err) {
    log.error(`the audit log could not record "${action}"`, err);
  }
}
