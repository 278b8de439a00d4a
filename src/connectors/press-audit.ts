/**
 * The audit entries of decisions taken with a messenger's buttons (approval prompts, a flow card's
 * approval): the same actions as in the web UI (`approval.decide`, `approval.grant`), by the linked
 * account that pressed, with the platform, connector and chat in the entry. Writing never fails the
 * press: the decision is already taken, so a failed write is reported instead.
 */
import type { AuditInput } from "../store/audit/audit-log.js";
import type { ConnectorRecord } from "./types.js";

/** Where the connectors write audit entries (the server's audit log). */
export type AuditSink = (entry: AuditInput) => Promise<unknown>;

export interface PressDecision {
  action: "approval.decide" | "approval.grant";
  /** The account the presser is linked to (or their guest account) and its name. */
  actor: { id: string; name?: string };
  /** `runId/callId`, or `flow:<id>/<step>`. */
  target: string;
  decision: "approve" | "reject";
  tool?: string;
  chatId: string;
  /** The presser on the platform. */
  externalUser: { id: string; name?: string };
}

/** Records a decision taken in a messenger; a no-op without an audit log. */
export async function auditPress(
  sink: AuditSink | undefined,
  connector: ConnectorRecord,
  what: PressDecision,
  onError: (err: unknown) => void,
): Promise<void> {
  if (!sink) return;
  try {
    await sink({
      action: what.action,
      actor: what.actor,
      target: what.target,
      after: {
        decision: what.decision,
        ...(what.tool ? { tool: what.tool } : {}),
        via: "messenger",
        channel: connector.type,
        connectorId: connector.id,
        chatId: what.chatId,
        externalUser: what.externalUser,
      },
      origin: { userAgent: `dimsum-connector/${connector.type}` },
    });
  } catch (err) {
    onError(err);
  }
}
