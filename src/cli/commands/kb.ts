/**
 * `dimsum kb add|list|remove|reindex|search|status`: manage knowledge bases in <DIMSUM_HOME>/dimsum.db.
 * `add` and `reindex` show a progress bar on a terminal (plain progress lines otherwise) and stop
 * cleanly on Ctrl-C or SIGTERM: files finished by then stay indexed, the database is closed, and the
 * exit code is 130 (Ctrl-C) or 143 (SIGTERM).
 */

import { join } from "node:path";
import { loadConfig } from "../../config/load-config.js";
import { resolveModel } from "../../config/resolve-model.js";
import { DimsumError } from "../../errors.js";
import { formatBytes } from "../../knowledge/ingest/collect.js";
import { KnowledgeService, type KnowledgeServiceOptions } from "../../knowledge/knowledge-service.js";
import { formatCitation } from "../../knowledge/rag-tool.js";
import { createModelReranker } from "../../knowledge/retrieval/rerank.js";
import type {
  DocumentRecord,
  IngestProgress,
  IngestResult,
  KnowledgeBaseInfo,
} from "../../knowledge/types.js";
import { createEmbedder } from "../../memory/embedder.js";
import { resolveEmbeddingModel } from "../../memory/embedding-config.js";
import { openDatabase } from "../../store/database.js";
import { checkAction, reportActionError } from "../command-errors.js";
import type { CommandIo, TextOut } from "../command-io.js";
import { EXIT_ABORTED, EXIT_FAILURE, EXIT_OK } from "../exit-codes.js";
import { plural } from "../render/plural.js";
import { exitCodeForStop, type StopReason, watchStop } from "../stop-signals.js";

export interface KbCommandOptions {
  /** Work on this agent's own bases (plus shared ones, for reads). */
  agent?: string;
  json?: boolean;
  /** `search`: passages to show (default 5). */
  limit?: number;
  /** `add`: most files per batch. */
  maxFiles?: number;
  /** `add`: largest file in MB. */
  maxFileMb?: number;
  /** `search`: rerank with a model (`--model`, else DIMSUM_MODEL). */
  rerank?: boolean;
  model?: string;
}

interface OutStream extends TextOut {
  isTTY?: boolean;
  columns?: number;
}

export interface KbCommandIo extends CommandIo {
  stdout: OutStream;
  /** Progress goes here, as a bar when it is a terminal. */
  stderr: OutStream;
  /** Cancels `add`/`reindex`; without one, Ctrl-C (SIGINT) or SIGTERM does while they run. */
  signal?: AbortSignal;
}

export const KB_ACTIONS = ["add", "list", "remove", "reindex", "search", "status"] as const;

function usage(message: string): DimsumError {
  return new DimsumError("config", message, {
    hint: "usage: dimsum kb add <kb> <files or folders...> | list [kb] | remove <kb> [doc] | reindex <kb> | search <kb> <query> | status",
  });
}

/** Redraws one status line on a terminal; prints a line per 10% otherwise. */
function progressPrinter(stream: OutStream, label: string) {
  let lastTenth = -1;
  let drawn = false;
  return {
    update(p: IngestProgress) {
      if (p.total === 0) return;
      const ratio = p.done / p.total;
      const size = `${formatBytes(p.bytesDone)} / ${formatBytes(p.bytesTotal)}`;
      if (stream.isTTY) {
        const width = 24;
        const filled = Math.round(ratio * width);
        const bar = `${"█".repeat(filled)}${"░".repeat(width - filled)}`;
        const current = p.current ? `  ${p.current}` : "";
        const line = `${label} ${bar} ${p.done}/${p.total} files  ${size}${current}`;
        const columns = stream.columns ?? 100;
        stream.write(`\r\x1b[2K${line.length > columns - 1 ? `${line.slice(0, columns - 2)}…` : line}`);
        drawn = true;
        return;
      }
      const tenth = Math.floor(ratio * 10);
      if (tenth > lastTenth) {
        lastTenth = tenth;
        stream.write(`${label}: ${p.done}/${p.total} files (${Math.round(ratio * 100)}%), ${size}\n`);
      }
    },
    clear() {
      if (drawn) stream.write("\r\x1b[2K");
      drawn = false;
    },
  };
}

function summary(result: IngestResult): string {
  const seconds = (result.ms / 1000).toFixed(1);
  const head =
    `${result.kb}: ${result.added} added, ${result.updated} updated, ${result.unchanged} unchanged, ` +
    `${result.failed} failed, ${result.skipped} skipped (${formatBytes(result.bytes)} in ${seconds} s)` +
    (result.cancelled ? " — cancelled, files finished before that stay indexed" : "");
  const lines = [head];
  let unsupported = 0;
  for (const file of result.files) {
    if (file.outcome === "skipped" && file.reason?.startsWith("unsupported")) unsupported++;
    else if (file.outcome === "failed" || file.outcome === "skipped") {
      lines.push(`  ${file.outcome}: ${file.source}: ${file.reason ?? ""}`);
    }
    if (file.warning) lines.push(`  warning: ${file.source}: ${file.warning}`);
  }
  if (unsupported > 0) lines.push(`  ${unsupported} files of unsupported types were left out`);
  return `${lines.join("\n")}\n`;
}

function baseLine(base: KnowledgeBaseInfo): string {
  const owner = base.agentId ? `agent ${base.agentId}` : "shared";
  return `${base.name.padEnd(20)}  ${owner.padEnd(16)}  ${String(base.documents).padStart(6)} docs  ${String(base.chunks).padStart(8)} chunks\n`;
}

function documentLine(doc: DocumentRecord): string {
  const pages = doc.pages !== undefined ? `, ${doc.pages} pages` : "";
  const state = doc.status === "ready" ? `${doc.childChunks} chunks` : `FAILED: ${doc.error ?? ""}`;
  return `#${doc.id}  ${doc.mime.padEnd(16)}  ${formatBytes(doc.size).padStart(9)}${pages}  ${state}  ${doc.title} — ${doc.source}\n`;
}

/**
 * Runs `work` with a signal that Ctrl-C, SIGTERM (or the caller's signal) aborts; `stoppedBy` is the
 * signal that did, if one did.
 */
async function cancellable<T>(
  io: KbCommandIo,
  work: (signal: AbortSignal) => Promise<T>,
): Promise<{ value: T; stoppedBy?: StopReason }> {
  if (io.signal) return { value: await work(io.signal) };
  const stop = watchStop();
  const onAbort = () => io.stderr.write("\ncancelling… (files finished so far stay indexed)\n");
  stop.signal.addEventListener("abort", onAbort, { once: true });
  try {
    const value = await work(stop.signal);
    return stop.reason === undefined ? { value } : { value, stoppedBy: stop.reason };
  } finally {
    stop.signal.removeEventListener("abort", onAbort);
    stop.dispose();
  }
}

/** Runs one kb action; returns the exit code. Errors are printed to stderr, never thrown. */
export async function kbCommand(
  action: string,
  args: string[],
  options: KbCommandOptions,
  io: KbCommandIo,
): Promise<number> {
  let db: ReturnType<typeof openDatabase> | undefined;
  try {
    checkAction("kb", KB_ACTIONS, action, usage);
    const [name, ...rest] = args;
    if (action !== "list" && action !== "status" && !name)
      throw usage(`kb ${action} needs a knowledge base name`);
    if (action === "add" && rest.length === 0) throw usage("kb add needs files or folders to add");
    if (action === "search" && rest.join(" ").trim() === "") throw usage("kb search needs a query");
    const config = loadConfig({ cwd: io.cwd, env: io.env });
    const embedding = resolveEmbeddingModel(config);
    const serviceOptions: KnowledgeServiceOptions = { cwd: io.cwd, limits: {} };
    if (embedding) serviceOptions.embedder = createEmbedder(embedding);
    if (options.maxFiles !== undefined) serviceOptions.limits!.maxFiles = options.maxFiles;
    if (options.maxFileMb !== undefined)
      serviceOptions.limits!.maxFileBytes = options.maxFileMb * 1024 * 1024;
    if (action === "search" && options.rerank) {
      const { stream } = await import("../../llm/providers.js");
      serviceOptions.reranker = createModelReranker({ stream, model: resolveModel(config, options.model) });
    }
    db = openDatabase(join(config.home, "dimsum.db"));
    const kb = KnowledgeService.sqlite(db, serviceOptions);
    const agent = options.agent ? { agentId: options.agent } : {};
    const out = (value: unknown, human: string) =>
      io.stdout.write(options.json ? `${JSON.stringify(value)}\n` : human);

    if (action === "add" || action === "reindex") {
      const progress = progressPrinter(
        io.stderr,
        action === "add" ? `adding to ${name}` : `reindexing ${name}`,
      );
      const { value: result, stoppedBy } = await cancellable(io, (signal) => {
        const ingestOptions = { ...agent, signal, onProgress: (p: IngestProgress) => progress.update(p) };
        return action === "add"
          ? kb.ingest(
              name!,
              rest.map((path) => ({ kind: "path" as const, path })),
              ingestOptions,
            )
          : kb.reindex(name!, ingestOptions);
      });
      progress.clear();
      out(result, summary(result));
      if (stoppedBy !== undefined) return exitCodeForStop(stoppedBy);
      if (result.cancelled) return EXIT_ABORTED;
      return result.failed > 0 ? EXIT_FAILURE : EXIT_OK;
    }
    if (action === "list") {
      if (!name) {
        const bases = await kb.listBases(options.agent ? { agentId: options.agent } : { all: true });
        if (options.json) out({ bases, status: await kb.status() }, "");
        else {
          io.stdout.write(
            bases.length === 0
              ? "no knowledge bases yet (dimsum kb add <kb> <files>)\n"
              : bases.map(baseLine).join(""),
          );
          io.stdout.write(`retrieval: ${(await kb.status()).note}\n`);
        }
      } else {
        const docs = await kb.listDocuments(name, options.agent);
        if (options.json) out(docs, "");
        else
          io.stdout.write(docs.length === 0 ? `${name} has no documents\n` : docs.map(documentLine).join(""));
      }
      return EXIT_OK;
    }
    if (action === "remove") {
      if (rest.length === 0) {
        const base = await kb.getBase(name!, options.agent);
        if (!base || !(await kb.removeBase(name!, options.agent))) {
          io.stderr.write(`no knowledge base named "${name}"\n`);
          return EXIT_FAILURE;
        }
        out({ removed: base }, `removed knowledge base ${name} (${base.documents} documents)\n`);
        return EXIT_OK;
      }
      const ref = rest.join(" ");
      const removed = await kb.removeDocument(name!, ref, options.agent);
      if (!removed) {
        io.stderr.write(`no document "${ref}" in ${name}\n`);
        return EXIT_FAILURE;
      }
      out({ removed }, `removed #${removed.id} ${removed.source}\n`);
      return EXIT_OK;
    }
    if (action === "status") {
      const status = await kb.status();
      out(
        status,
        `${status.note}\n${plural(status.bases, "base")}, ${plural(status.documents, "document")}, ${plural(status.childChunks, "chunk")}\n`,
      );
      return EXIT_OK;
    }
    const result = await kb.search({ query: rest.join(" "), kb: name!, topK: options.limit ?? 5, ...agent });
    if (options.json) out(result, "");
    else {
      const lines = [`mode: ${result.trace.mode}${result.trace.rerank.status === "ok" ? " + rerank" : ""}`];
      for (const warning of result.trace.warnings) lines.push(`warning: ${warning}`);
      result.passages.forEach((p, i) => {
        const snippet = p.text.replace(/\s+/g, " ").trim();
        lines.push(`[${i + 1}] ${formatCitation(p.citation)}  (score ${p.score.toFixed(4)})`);
        lines.push(`    ${snippet.length > 300 ? `${snippet.slice(0, 299)}…` : snippet}`);
      });
      if (result.passages.length === 0) lines.push("no passage matched");
      io.stdout.write(`${lines.join("\n")}\n`);
    }
    return EXIT_OK;
  } catch (err) {
    return reportActionError(err, io.stderr);
  } finally {
    db?.close();
  }
}
