/**
 * `dimsum memory list|search|add|forget|import --user A`: look at and edit a user's long-term memory;
 * `import FILE.jsonl` loads many memories in one process (see src/memory/import.ts for the format).
 */
import { readFileSync } from "node:fs";
import { userInfo } from "node:os";
import { join, resolve } from "node:path";
import { loadConfig } from "../../config/load-config.js";
import { DimsumError } from "../../errors.js";
import { createEmbedder } from "../../memory/embedder.js";
import { resolveEmbeddingModel } from "../../memory/embedding-config.js";
import { importMemories, parseMemoryLines } from "../../memory/import.js";
import { SqliteMemoryStore } from "../../memory/sqlite-memory-store.js";
import { MEMORY_TYPES, type MemoryRecord, type MemoryType } from "../../memory/types.js";
import { openDatabase } from "../../store/database.js";
import { checkAction, reportActionError } from "../command-errors.js";
import type { CommandIo, TextOut } from "../command-io.js";
import { EXIT_FAILURE, EXIT_OK } from "../exit-codes.js";

export interface MemoryCommandOptions {
  user?: string;
  agent?: string;
  type?: string;
  limit?: number;
  /** `add`: comma-separated tags. */
  tags?: string;
  /** `add`: 1..10. */
  importance?: number;
  json?: boolean;
  /** `import`: fold lines into near-duplicate memories (off: every line is a new memory, fast). */
  merge?: boolean;
}

export interface MemoryCommandIo extends CommandIo {
  stderr: TextOut & { isTTY?: boolean };
}

export const MEMORY_ACTIONS = ["list", "search", "add", "forget", "import"] as const;

function usage(message: string): DimsumError {
  return new DimsumError("config", message, {
    hint: "usage: dimsum memory list|search <query>|add <text>|forget <id>|import <file.jsonl> --user <id> [--type] [--limit]",
  });
}

function parseType(value: string | undefined): MemoryType | undefined {
  if (value === undefined) return undefined;
  if (!MEMORY_TYPES.includes(value as MemoryType)) {
    throw usage(`--type must be one of ${MEMORY_TYPES.join(", ")} (got "${value}")`);
  }
  return value as MemoryType;
}

function defaultUser(env: MemoryCommandIo["env"]): string | undefined {
  if (env.DIMSUM_USER) return env.DIMSUM_USER;
  try {
    return userInfo().username || undefined;
  } catch {
    return undefined;
  }
}

function line(memory: MemoryRecord, extra = ""): string {
  const day = new Date(memory.updatedAt).toISOString().slice(0, 10);
  const tags = memory.tags.length > 0 ? ` [${memory.tags.join(", ")}]` : "";
  return `#${memory.id}  ${memory.type.padEnd(10)}  imp ${String(memory.importance).padStart(2)}  ${day}${extra}  ${memory.text}${tags}\n`;
}

/** Runs one memory action; returns the exit code. Errors are printed to stderr, never thrown. */
export async function memoryCommand(
  action: string,
  args: string[],
  options: MemoryCommandOptions,
  io: MemoryCommandIo,
): Promise<number> {
  let db: ReturnType<typeof openDatabase> | undefined;
  try {
    checkAction("memory", MEMORY_ACTIONS, action, usage);
    const userId = options.user ?? defaultUser(io.env);
    if (!userId) throw usage("no user: pass --user <id> or set DIMSUM_USER");
    const type = parseType(options.type);
    const config = loadConfig({ cwd: io.cwd, env: io.env });
    const spec = resolveEmbeddingModel(config);
    db = openDatabase(join(config.home, "dimsum.db"));
    const store = new SqliteMemoryStore(db, {
      ...(spec ? { embedder: createEmbedder(spec) } : {}),
      warn: (message) => io.stderr.write(`warning: ${message}\n`),
    });
    const scope = options.agent ? { userId, agentId: options.agent } : { userId };
    const text = args.join(" ").trim();
    const out = (value: unknown, human: string) =>
      io.stdout.write(options.json ? `${JSON.stringify(value)}\n` : human);

    if (action === "list") {
      const memories = await store.list(userId, {
        ...(options.agent ? { agentId: options.agent } : {}),
        ...(type ? { type } : {}),
        limit: options.limit ?? 50,
      });
      const total = await store.count(userId);
      if (options.json) for (const m of memories) out(m, "");
      else
        io.stdout.write(
          memories.length === 0
            ? `no memories for ${userId}\n`
            : `${memories.map((m) => line(m)).join("")}(${memories.length} of ${total})\n`,
        );
    } else if (action === "search") {
      if (text === "") throw usage("search needs a query");
      const result = await store.search({
        ...scope,
        query: text,
        limit: options.limit ?? 10,
        ...(type ? { type } : {}),
      });
      if (options.json) out({ mode: result.mode, hits: result.hits }, "");
      else {
        io.stdout.write(`mode: ${result.mode}\n`);
        for (const hit of result.hits) io.stdout.write(line(hit.memory, `  score ${hit.score.toFixed(4)}`));
        if (result.hits.length === 0) io.stdout.write("no memory matched\n");
      }
    } else if (action === "add") {
      if (text === "") throw usage("add needs the memory text");
      const result = await store.remember({
        ...scope,
        text,
        type: type ?? "semantic",
        ...(options.tags ? { tags: options.tags.split(",") } : {}),
        ...(options.importance !== undefined ? { importance: options.importance } : {}),
      });
      out(
        result,
        result.merged ? `merged into #${result.id}: ${result.memory.text}\n` : `added #${result.id}\n`,
      );
    } else if (action === "import") {
      if (args.length !== 1) throw usage("import needs exactly one JSON Lines file");
      await importFile(
        store,
        args[0]!,
        { userId, ...(options.agent ? { agentId: options.agent } : {}) },
        options,
        io,
      );
    } else {
      if (args.length !== 1) throw usage("forget needs exactly one memory id");
      const id = args[0]!.replace(/^#/, "");
      if (!(await store.forget(userId, id))) {
        io.stderr.write(`no memory #${id} for user ${userId}\n`);
        return EXIT_FAILURE;
      }
      out({ forgotten: id }, `forgot #${id}\n`);
    }
    return EXIT_OK;
  } catch (err) {
    return reportActionError(err, io.stderr);
  } finally {
    db?.close();
  }
}

/** `memory import FILE.jsonl`: every line checked first, then stored in batches with progress on stderr. */
async function importFile(
  store: SqliteMemoryStore,
  file: string,
  scope: { userId: string; agentId?: string },
  options: MemoryCommandOptions,
  io: MemoryCommandIo,
): Promise<void> {
  let text: string;
  try {
    text = readFileSync(resolve(io.cwd, file), "utf8");
  } catch (err) {
    throw new DimsumError("config", `cannot read ${file}: ${(err as Error).message}`, {
      hint: "pass a JSON Lines file, one memory per line",
    });
  }
  const inputs = parseMemoryLines(text, scope);
  const tty = io.stderr.isTTY === true;
  const result = await importMemories(store, inputs, {
    merge: options.merge === true,
    onProgress: ({ done, total }) =>
      io.stderr.write(tty ? `\r\x1b[2Kimporting ${done}/${total}` : `imported ${done}/${total}\n`),
  });
  if (tty && inputs.length > 0) io.stderr.write("\n");
  if (result.warning) io.stderr.write(`warning: ${result.warning}\n`);
  const summary = {
    imported: inputs.length,
    added: result.added,
    merged: result.merged,
    ms: Math.round(result.ms),
  };
  io.stdout.write(
    options.json
      ? `${JSON.stringify(summary)}\n`
      : `imported ${inputs.length} memories (${result.added} added, ${result.merged} merged into near-duplicates) in ${(result.ms / 1000).toFixed(1)} s\n`,
  );
}
