import { type ChildProcess, spawn } from "node:child_process";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { SqliteSessionStore } from "../../src/store/sqlite-session-store.js";
import { findToolPairIssues } from "../../src/store/tool-pairs.js";
import type { SessionRef } from "../../src/store/types.js";
import { compileStoreForChild, openTracked, tempDir, toolTurn } from "./helpers.js";

const fixture = join(import.meta.dirname, "fixtures", "crash-writer.mjs");
const ref: SessionRef = { userId: "crash", sessionId: "window1" };

/** Starts the writer and resolves once it printed `line` (it is writing from then on). */
function startWriter(storeModule: string, dbFile: string, mode: "loop" | "hold", line: string) {
  const child = spawn(process.execPath, [fixture, storeModule, dbFile, mode], {
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stderr = "";
  child.stderr.on("data", (d) => {
    stderr += d;
  });
  const started = new Promise<void>((resolve, reject) => {
    let stdout = "";
    child.stdout.on("data", (d) => {
      stdout += d;
      if (stdout.includes(`${line}\n`)) resolve();
    });
    child.on("exit", (code) => reject(new Error(`writer exited early (${code}): ${stderr}`)));
  });
  return { child, started };
}

function killHard(child: ChildProcess): Promise<NodeJS.Signals | null> {
  return new Promise((resolve) => {
    child.on("exit", (_code, signal) => resolve(signal));
    child.kill("SIGKILL");
  });
}

/** Reopens the file the way a restarted CLI would and checks everything the issue promises. */
async function reopenAndCheck(dbFile: string) {
  const db = openTracked(dbFile);
  expect(db.pragma("integrity_check", { simple: true })).toBe("ok");
  const warnings: string[] = [];
  const store = new SqliteSessionStore(db, { logger: { warn: (m) => warnings.push(m) } });

  const history = await store.loadMessages(ref, { includeCompacted: true });
  const issues = findToolPairIssues(history.map((m) => m.message));
  expect(issues.unanswered).toEqual([]);
  expect(issues.orphans).toEqual([]);
  // Whole batches or nothing: positions run 1..n without holes.
  expect(history.map((m) => m.seq)).toEqual(history.map((_, i) => i + 1));

  const running = db.prepare("SELECT id FROM runs WHERE status = 'running'").pluck().all() as string[];
  expect(running.length).toBeLessThanOrEqual(1);
  const recovered = await store.recoverInterruptedRuns(ref);
  expect(recovered.runs.map((r) => r.id)).toEqual(running);
  for (const run of recovered.runs) {
    expect(run.status).toBe("interrupted");
    expect(run.note).toMatch(/interrupted/);
  }
  expect(recovered.syntheticResults).toEqual([]);
  expect((await store.listRuns(ref)).filter((r) => r.status === "running")).toEqual([]);
  expect(warnings).toEqual([]);

  // The conversation continues: a new run with a full tool round is stored and reads back.
  const runId = `parent-${history.length}`;
  await store.startRun(ref, { runId, model: "fake:model", prompt: "continue" });
  const appended = await store.appendMessages(ref, runId, [
    { role: "user", content: "continue" },
    ...toolTurn(runId, 2),
  ]);
  await store.finishRun(ref, runId, { status: "done", iterations: 1 });
  const after = await store.loadMessages(ref, { includeCompacted: true });
  expect(after.slice(-appended.length)).toEqual(appended);
  expect(findToolPairIssues(after.map((m) => m.message)).unanswered).toEqual([]);
  db.close();
  return { messages: after.length, recovered };
}

describe("crash safety (SIGKILL while writing)", () => {
  it("keeps the history consistent through five kills at random moments", async () => {
    const storeModule = await compileStoreForChild();
    const dbFile = join(tempDir(), "home", "dimsum.db");
    let previous = 0;
    for (let round = 0; round < 5; round++) {
      const { child, started } = startWriter(storeModule, dbFile, "loop", "ready");
      await started;
      await new Promise((r) => setTimeout(r, 20 + Math.random() * 180));
      expect(await killHard(child)).toBe("SIGKILL");
      const { messages } = await reopenAndCheck(dbFile);
      // Every round wrote at least its first complete run turn plus the parent's continuation.
      expect(messages).toBeGreaterThan(previous);
      previous = messages;
    }
  }, 30_000);

  it("closes the run that was in flight when the process died", async () => {
    const storeModule = await compileStoreForChild();
    const dbFile = join(tempDir(), "dimsum.db");
    const { child, started } = startWriter(storeModule, dbFile, "hold", "holding");
    await started;
    await killHard(child);
    const { recovered } = await reopenAndCheck(dbFile);
    expect(recovered.runs).toHaveLength(1);
    expect(recovered.runs[0]).toMatchObject({ status: "interrupted", prompt: "prompt 1", userId: "crash" });
    expect(recovered.runs[0]?.endedAt).toBeTypeOf("number");
  }, 15_000);
});
