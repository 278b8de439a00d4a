/** Shared set-up for the memory tests: temp databases, stores, and an offline embedder. */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach } from "vitest";
import { SqliteMemoryStore, type SqliteMemoryStoreOptions } from "../../src/memory/sqlite-memory-store.js";
import type { Embedder } from "../../src/memory/types.js";
import { type Database, openDatabase } from "../../src/store/database.js";
import { hashEmbedding } from "../../src/testing/fake-embeddings-server.js";

const dirs: string[] = [];
const dbs: Database[] = [];

afterEach(() => {
  for (const db of dbs.splice(0)) if (db.open) db.close();
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A fresh temp folder, removed after the test. */
export function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "dimsum-memory-"));
  dirs.push(dir);
  return dir;
}

/** Opens (and closes after the test) a database file; a new temp file unless one is given. */
export function openDb(file = join(tempDir(), "dimsum.db")): Database {
  const db = openDatabase(file);
  dbs.push(db);
  return db;
}

/** An embedder computing `hashEmbedding` in process, counting calls; `fail` makes it throw. */
export function hashEmbedder(dims = 128): Embedder & { calls: number; fail: boolean } {
  const embedder = {
    model: `test:hash-${dims}`,
    calls: 0,
    fail: false,
    async embed(texts: string[]) {
      embedder.calls++;
      if (embedder.fail) throw new Error("embedding service down");
      return texts.map((t) => hashEmbedding(t, dims));
    },
  };
  return embedder;
}

/** A memory store on a new database, collecting warnings. */
export function newMemoryStore(options: SqliteMemoryStoreOptions = {}, db = openDb()) {
  const warnings: string[] = [];
  const store = new SqliteMemoryStore(db, { warn: (m) => warnings.push(m), ...options });
  return { db, store, warnings };
}
