/**
 * Group commit for the server: the writes of one turn of the event loop share one transaction,
 * committed when the turn ends. A run makes a dozen small writes (its messages, their search index,
 * its lifecycle, its trace); alone, each pays for a commit that rewrites the same index pages. Under
 * load many runs' writes land in the same turn, so they also share their commits.
 *
 * Repositories call `joinGroupCommit(db)` before they touch the database; it does nothing unless the
 * server enabled group commit on that connection. Their own transactions become savepoints inside
 * the shared one, so each still succeeds or fails as a whole. What a crash can lose is only what the
 * current turn wrote (a few milliseconds of work); nothing is lost that an earlier turn wrote.
 *
 * Other processes (the CLI) write between turns. A second connection in the same thread must not
 * write while a turn is open: its busy wait would block the thread that has to commit.
 */
import type { Database } from "better-sqlite3";

interface State {
  db: Database;
  /** True while the open transaction is the shared one this module began. */
  open: boolean;
  onError: (err: unknown) => void;
  scheduled: NodeJS.Immediate | undefined;
}

const states = new WeakMap<Database, State>();

function commit(state: State): void {
  if (state.scheduled) clearImmediate(state.scheduled);
  state.scheduled = undefined;
  if (!state.open) return;
  state.open = false;
  // A failed statement can roll the whole transaction back (SQLITE_FULL, SQLITE_IOERR): nothing to commit.
  if (!state.db.open || !state.db.inTransaction) return;
  try {
    state.db.exec("COMMIT");
  } catch (err) {
    try {
      if (state.db.inTransaction) state.db.exec("ROLLBACK");
    } catch {
      // The connection is unusable; the next write reports that to its caller.
    }
    state.onError(err);
  }
}

/** Turns group commit on for a connection; `onError` hears about commits that failed. */
export function enableGroupCommit(db: Database, onError: (err: unknown) => void): void {
  if (states.has(db)) return;
  const state: State = { db, open: false, onError, scheduled: undefined };
  states.set(db, state);
  // Whoever closes the connection, the turn's writes are committed first (close would roll them back).
  const close = db.close.bind(db);
  db.close = () => {
    commit(state);
    states.delete(db);
    return close();
  };
}

/** Makes the caller's coming reads and writes part of this turn's shared transaction, if enabled. */
export function joinGroupCommit(db: Database): void {
  const state = states.get(db);
  if (!state || state.open || db.inTransaction) return;
  // IMMEDIATE takes the write lock now: a deferred transaction that read first could not write if
  // another process (the CLI) committed in between.
  db.exec("BEGIN IMMEDIATE");
  state.open = true;
  state.scheduled = setImmediate(() => commit(state));
}
