/**
 * WAL checkpoints on a worker thread, for the server. By default SQLite checkpoints inside the commit
 * that finds the WAL over 1,000 pages: it copies them into the database file and fsyncs it, about
 * 12 ms on this project's test machine (and as long as the disk likes when it stalls), all on the
 * thread serving requests. Here auto-checkpoints are off for the server's connection, and a worker
 * with a connection of its own runs PASSIVE checkpoints (which never block the writer) a few times a
 * second. If the worker fails, auto-checkpoints come back on.
 */

import { createRequire } from "node:module";
import { Worker } from "node:worker_threads";
import type { Database } from "better-sqlite3";

const DEFAULT_INTERVAL_MS = 250;
const SQLITE_DEFAULT_AUTOCHECKPOINT = 1000;

const WORKER_SOURCE = `
const { parentPort, workerData } = require("node:worker_threads");
const Database = require(workerData.driver);
const db = new Database(workerData.file, { timeout: 1000 });
const checkpoint = () => {
  try {
    db.pragma("wal_checkpoint(PASSIVE)");
  } catch (err) {
    parentPort.postMessage({ error: err instanceof Error ? err.message : String(err) });
  }
};
const timer = setInterval(checkpoint, workerData.intervalMs);
parentPort.on("message", (message) => {
  if (message !== "stop") return;
  clearInterval(timer);
  checkpoint();
  db.close();
  parentPort.close();
});
`;

export interface BackgroundCheckpoints {
  /** Runs a last checkpoint, ends the worker and turns auto-checkpoints back on. */
  stop(): Promise<void>;
}

/** Starts checkpointing `db`'s file from a worker; undefined for in-memory databases or without threads. */
export function startBackgroundCheckpoints(
  db: Database,
  options: { intervalMs?: number; onError?: (err: unknown) => void } = {},
): BackgroundCheckpoints | undefined {
  if (db.memory) return undefined;
  const onError = options.onError ?? (() => undefined);
  let worker: Worker;
  try {
    worker = new Worker(WORKER_SOURCE, {
      eval: true,
      workerData: {
        file: db.name,
        driver: createRequire(import.meta.url).resolve("better-sqlite3"),
        intervalMs: options.intervalMs ?? DEFAULT_INTERVAL_MS,
      },
    });
  } catch (err) {
    onError(err);
    return undefined;
  }
  const restore = () => {
    if (db.open) db.pragma(`wal_autocheckpoint = ${SQLITE_DEFAULT_AUTOCHECKPOINT}`);
  };
  db.pragma("wal_autocheckpoint = 0");
  worker.unref();
  worker.on("message", (message: { error?: string }) => {
    if (message.error) onError(new Error(`background WAL checkpoint failed: ${message.error}`));
  });
  worker.on("error", (err) => {
    restore();
    onError(err);
  });
  const exited = new Promise<void>((resolve) => worker.once("exit", () => resolve()));
  let stopping: Promise<void> | undefined;
  return {
    stop: () => {
      stopping ??= (async () => {
        worker.postMessage("stop");
        await exited;
        restore();
      })();
      return stopping;
    },
  };
}
