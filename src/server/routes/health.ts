/**
 * Health probes for containers and load balancers, public (no session, no token) and telling nothing
 * a stranger could use: `GET /healthz` answers while the process serves HTTP (liveness), `GET /readyz`
 * also asks the database (readiness: SQLite file or PostgreSQL) and answers 503 while it cannot.
 * Mounted through `ServerDeps.publicRoutes`, before the session guards; never cached.
 */
import type { DimsumApp, ServerLog } from "../context.js";

export const LIVENESS_PATH = "/healthz";
export const READINESS_PATH = "/readyz";

/** How long the database may take to answer a readiness probe before it counts as down. */
const CHECK_TIMEOUT_MS = 3000;

export interface HealthChecks {
  /** Resolves when the database answers a trivial query; rejects (or hangs) when it cannot. */
  database(): Promise<void>;
  /** Where a failed check's details go (the probe's answer only says which check failed). */
  log: Pick<ServerLog, "warn">;
}

/** The readiness answer: each check's verdict, `ok` or `unreachable`. */
export interface ReadinessBody {
  status: "ready" | "unready";
  checks: { database: "ok" | "unreachable" };
}

/** Mounts `/healthz` and `/readyz`; pass it in `ServerDeps.publicRoutes`. */
export function mountHealthRoutes(checks: HealthChecks): (app: DimsumApp) => void {
  // One failure is logged once until the database answers again, not at every probe.
  let failing = false;
  return (app) => {
    app.get(LIVENESS_PATH, (c) => {
      c.header("Cache-Control", "no-store");
      return c.json({ status: "ok" });
    });
    app.get(READINESS_PATH, async (c) => {
      c.header("Cache-Control", "no-store");
      const error = await withTimeout(checks.database(), CHECK_TIMEOUT_MS).then(
        () => undefined,
        (err: unknown) => err,
      );
      if (error === undefined) {
        failing = false;
        const body: ReadinessBody = { status: "ready", checks: { database: "ok" } };
        return c.json(body);
      }
      if (!failing) {
        failing = true;
        checks.log.warn(
          `readiness: the database does not answer (${error instanceof Error ? error.message : String(error)}); ${READINESS_PATH} answers 503 until it does`,
        );
      }
      const body: ReadinessBody = { status: "unready", checks: { database: "unreachable" } };
      return c.json(body, 503);
    });
  };
}

function withTimeout(check: Promise<void>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
  });
  return Promise.race([check, timeout]).finally(() => clearTimeout(timer));
}
