/** Shared set-up for the store tests: temp database files, sample messages, a compiled store for child processes. */
import {
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach } from "vitest";
import type { Message } from "../../src/llm/types.js";
import { type Database, openDatabase } from "../../src/store/database.js";
import { SqliteSessionStore, type SqliteSessionStoreOptions } from "../../src/store/sqlite-session-store.js";
import { projectRoot } from "../support/fixtures.js";

const dirs: string[] = [];
const dbs: Database[] = [];

afterEach(() => {
  for (const db of dbs.splice(0)) if (db.open) db.close();
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A fresh temp folder, removed after the test. */
export function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "dimsum-store-"));
  dirs.push(dir);
  return dir;
}

/** Opens (and closes after the test) a database file. */
export function openTracked(file: string, options?: Parameters<typeof openDatabase>[1]): Database {
  const db = openDatabase(file, options);
  dbs.push(db);
  return db;
}

/** A store on a new database file in a temp folder, with every warning collected. */
export function newStore(options: SqliteSessionStoreOptions = {}) {
  const file = join(tempDir(), "home", "dimsum.db");
  const db = openTracked(file);
  const warnings: string[] = [];
  const store = new SqliteSessionStore(db, { logger: { warn: (m) => warnings.push(m) }, ...options });
  return { file, db, store, warnings };
}

/** An assistant turn calling `n` tools, plus one result per call. */
export function toolTurn(prefix: string, n: number, resultText = "ok"): Message[] {
  const calls = Array.from({ length: n }, (_, i) => ({
    type: "tool_call" as const,
    id: `${prefix}-call-${i}`,
    name: "read_file",
    arguments: JSON.stringify({ path: `f${i}.txt` }),
  }));
  const results: Message[] = calls.map((c) => ({
    role: "tool",
    toolCallId: c.id,
    toolName: c.name,
    content: `${resultText} ${c.id}`,
  }));
  return [
    { role: "assistant", content: [{ type: "text", text: `calling ${n} tools` }, ...calls] },
    ...results,
  ];
}

/**
 * Transpiles src/store and its one runtime dependency (src/errors.ts) into a temp folder so a child
 * process can import the current source without a build. Returns the URL-able path of store/index.js.
 */
export async function compileStoreForChild(): Promise<string> {
  // Loaded only here: the compiler is heavy and only the crash test needs it.
  const { default: ts } = await import("typescript");
  const out = tempDir();
  const compile = (from: string, to: string) => {
    const source = readFileSync(from, "utf8");
    const { outputText } = ts.transpileModule(source, {
      compilerOptions: {
        module: ts.ModuleKind.ESNext,
        target: ts.ScriptTarget.ES2022,
        verbatimModuleSyntax: true,
      },
      fileName: from,
    });
    writeFileSync(to, outputText);
  };
  mkdirSync(join(out, "store"));
  const storeSrc = join(projectRoot, "src/store");
  for (const file of readdirSync(storeSrc).filter((f) => f.endsWith(".ts"))) {
    compile(join(storeSrc, file), join(out, "store", file.replace(/\.ts$/, ".js")));
  }
  compile(join(projectRoot, "src/errors.ts"), join(out, "errors.js"));
  // Migration 9 re-indexes memory and knowledge text with the store's (pure) text analysis.
  mkdirSync(join(out, "store", "text"));
  const textSrc = join(storeSrc, "text");
  for (const file of readdirSync(textSrc).filter((f) => f.endsWith(".ts"))) {
    compile(join(textSrc, file), join(out, "store", "text", file.replace(/\.ts$/, ".js")));
  }
  writeFileSync(join(out, "package.json"), JSON.stringify({ type: "module" }));
  // Bare imports (better-sqlite3) resolve through this link to the project's dependencies.
  symlinkSync(join(projectRoot, "node_modules"), join(out, "node_modules"), "dir");
  return join(out, "store", "index.js");
}
