/** Small helpers the connector kinds share: settings validation and background retry loops. */
import * as z from "zod";
import { invalid } from "../errors.js";
import { abortableSleep } from "../shared/abortable-sleep.js";
import type { ConnectorSettings, DriverContext } from "./types.js";

/** An http(s) URL without a trailing slash. */
export const httpUrl = z
  .url({ protocol: /^https?$/, message: "an http(s) URL" })
  .max(500)
  .transform((url) => url.replace(/\/+$/, ""));

/**
 * Parses settings with a schema; a failure names each bad field as the form shows it (`labels`),
 * with its key in brackets for API callers.
 */
export function parseWith(
  schema: z.ZodType,
  settings: ConnectorSettings,
  label: string,
  labels: Record<string, string> = {},
): ConnectorSettings {
  const result = schema.safeParse(settings);
  if (result.success) {
    const parsed = result.data as Record<string, ConnectorSettings[string] | undefined>;
    return Object.fromEntries(
      Object.entries(parsed).filter(
        (entry): entry is [string, ConnectorSettings[string]] => entry[1] !== undefined,
      ),
    );
  }
  const issues = result.error.issues
    .map((issue) => {
      const key = issue.path.map(String).join(".");
      const shown = labels[key] ? `${labels[key]} (${key})` : key || "settings";
      return `${shown}: ${issue.message}`;
    })
    .join("; ");
  throw invalid(`Invalid settings for a ${label} connector: ${issues}.`, "fix them and save again");
}

/** The error text of anything thrown. */
export function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/**
 * Runs `attempt` until it succeeds or the signal aborts, waiting the context's backoff between
 * failures and reporting each failure (and the recovery) as the connector's error.
 */
export async function retryUntilDone(
  context: DriverContext,
  signal: AbortSignal,
  what: string,
  attempt: () => Promise<void>,
): Promise<void> {
  for (let failures = 0; !signal.aborted; ) {
    try {
      await attempt();
      if (failures > 0) context.report(undefined);
      return;
    } catch (err) {
      if (signal.aborted) return;
      failures++;
      context.report(`${what} failed: ${messageOf(err)}`);
      await abortableSleep(context.backoff(failures), signal);
    }
  }
}

/**
 * Fetches a first access token as a connector starts: wrong credentials fail the start; an outage
 * (a retryable error) is reported as the connector's error and only delays the first reply.
 */
export async function tokenAtStart(
  context: DriverContext,
  fetchToken: () => Promise<unknown>,
): Promise<void> {
  try {
    await fetchToken();
  } catch (err) {
    if (err instanceof Error && "retryable" in err && err.retryable === true) context.report(messageOf(err));
    else throw err;
  }
}
