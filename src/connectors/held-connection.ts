/**
 * A persistent connection to a platform (DingTalk Stream, Feishu's long connection) kept open by one
 * server instance at a time: it is opened while this instance holds the connector's lease (renewed
 * every `renewMs`), closed when the lease is lost to another instance or the signal aborts. With
 * several instances sharing the database, one holds the connection and the others stand by, so a
 * platform that hands each event to any one connection never splits a chat across instances.
 */
import { abortableSleep } from "../shared/abortable-sleep.js";
import { messageOf } from "./kind-helpers.js";
import type { DriverContext } from "./types.js";

/** How often the lease is renewed while the connection is open (well inside its 60 s). */
export const RENEW_MS = 15_000;
/** A renewal that has not succeeded within this long means another instance holds the lease. */
const LOST_AFTER_MS = 3_000;

export interface Connection {
  /** Opens the connection (the SDK reconnects by itself after that). */
  open(): Promise<void>;
  /** Closes it; no more events are taken. */
  close(): Promise<void> | void;
}

/** Runs until `signal` aborts; never rejects. */
export async function holdConnection(
  context: DriverContext,
  signal: AbortSignal,
  connection: Connection,
  renewMs = RENEW_MS,
): Promise<void> {
  const { lease } = context;
  let open = false;
  let failures = 0;
  const close = async () => {
    if (!open) return;
    open = false;
    await Promise.resolve(connection.close()).catch((err: unknown) =>
      context.log.warn(`closing the connection failed: ${messageOf(err)}`),
    );
  };
  while (!signal.aborted) {
    let held = true;
    if (lease) {
      const wait = open ? AbortSignal.any([signal, AbortSignal.timeout(LOST_AFTER_MS)]) : signal;
      try {
        held = await lease.hold(wait);
      } catch (err) {
        failures++;
        context.report(`taking the connection lease failed: ${messageOf(err)}`);
        await abortableSleep(context.backoff(failures), signal);
        continue;
      }
    }
    if (signal.aborted) break;
    if (!held) {
      // Another instance took the connection over.
      await close();
      continue;
    }
    if (!open) {
      try {
        await connection.open();
        open = true;
        failures = 0;
      } catch (err) {
        failures++;
        context.report(`connecting failed: ${messageOf(err)}`);
        await abortableSleep(context.backoff(failures), signal);
        continue;
      }
    }
    await abortableSleep(renewMs, signal);
  }
  await close();
  await lease?.release().catch(() => undefined);
}

/** `holdConnection` for a connection that `open` hands back as something to close. */
export function holdOpened(
  context: DriverContext,
  signal: AbortSignal,
  open: () => Promise<{ close(): void }>,
  renewMs = RENEW_MS,
): Promise<void> {
  let opened: { close(): void } | undefined;
  return holdConnection(
    context,
    signal,
    {
      open: async () => {
        opened = await open();
      },
      close: () => {
        opened?.close();
        opened = undefined;
      },
    },
    renewMs,
  );
}
