// Session storage: context-build time as a session grows, and message insert throughput.
// A long session is mostly compacted (summarised) history; the live part stays bounded, so building
// the next call's context must not slow down with the stored total.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { estimateContextTokens } from "../dist/agent/context/index.js";
import { buildLayeredContext } from "../dist/agent/layered-context.js";
import { openDatabase } from "../dist/store/database.js";
import { SqliteSessionStore } from "../dist/store/sqlite-session-store.js";
import { createBuiltinRegistry } from "../dist/tools/builtin/index.js";

const LIVE = 60; // messages left live after compaction
const CALLS = 200;

function round(i) {
  const id = `call_${i}`;
  return [
    { role: "user", content: `Question ${i}: how does the boundary layer behave at Mach ${i % 5}?` },
    {
      role: "assistant",
      content: [{ type: "tool_call", id, name: "calculator", arguments: `{"expression":"${i}*2"}` }],
    },
    { role: "tool", toolCallId: id, toolName: "calculator", content: String(i * 2) },
    {
      role: "assistant",
      content: [{ type: "text", text: `Answer ${i}: it thickens downstream; ${"detail ".repeat(20)}` }],
    },
  ];
}

const percentile = (xs, p) =>
  [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * p))];

export async function run() {
  const dir = mkdtempSync(join(tmpdir(), "dimsum-bench-"));
  const db = openDatabase(join(dir, "bench.db"));
  const store = new SqliteSessionStore(db);
  const schemas = createBuiltinRegistry().schemas();
  const rows = [];
  let insertRate = 0;
  try {
    for (const total of [100, 1_000, 10_000]) {
      const ref = { userId: "bench", sessionId: `s${total}` };
      await store.openSession(ref);
      const t0 = performance.now();
      for (let i = 0; i < total / 4; i++) await store.appendMessages(ref, `run${i}`, round(i));
      const insertMs = performance.now() - t0;
      if (total === 10_000) insertRate = total / (insertMs / 1000);
      const stored = await store.loadMessages(ref);
      const cut = stored[stored.length - LIVE - 1];
      if (cut)
        await store.compact(ref, {
          summary: "Summary of earlier questions about boundary layers.",
          uptoMessageId: cut.id,
        });
      // One context build as the session runner does it: live messages, summary, todos, layers, estimate.
      const build = async () => {
        const live = await store.loadMessages(ref);
        const summary = await store.getSummary(ref);
        const todos = await store.getTodos(ref);
        const context = buildLayeredContext(
          { system: "You are Dimsum.", summary, todos },
          live.map((m) => m.message),
          schemas,
        );
        return estimateContextTokens(context);
      };
      for (let i = 0; i < 20; i++) await build();
      const times = [];
      for (let i = 0; i < CALLS; i++) {
        const s = performance.now();
        await build();
        times.push(performance.now() - s);
      }
      rows.push({
        total,
        live: (await store.loadMessages(ref)).length,
        p50: percentile(times, 0.5),
        p95: percentile(times, 0.95),
      });
    }
  } finally {
    db.close();
    rmSync(dir, { recursive: true, force: true });
  }
  const base = rows[0].p50;
  return [
    "## Session context building and storage (issue 3)",
    "",
    `Each session holds N stored messages in tool rounds of 4 (user, assistant tool call, tool result, answer), all but the last ${LIVE} compacted into the summary. One build = load live messages + summary + todos from SQLite (WAL file on disk), assemble the layered context with the 10 built-in tool schemas, estimate its tokens. ${CALLS} builds per size after 20 warm-up builds.`,
    "",
    "| stored messages | live messages | build p50 | build p95 | p50 vs 100 messages |",
    "|---:|---:|---:|---:|---:|",
    ...rows.map(
      (r) =>
        `| ${r.total.toLocaleString("en")} | ${r.live} | ${r.p50.toFixed(3)} ms | ${r.p95.toFixed(3)} ms | ${(r.p50 / base).toFixed(2)}× |`,
    ),
    "",
    `Message insert throughput (10,000 messages, one transaction per tool round of 4, as the runtime writes them): **${Math.round(insertRate).toLocaleString("en")} messages/s**.`,
  ].join("\n");
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  console.log(await run());
}
