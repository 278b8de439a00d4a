/** The chat's slash commands: small functions over the session store. */
import { compactSession } from "../../agent/session-runner.js";
import type { ModelSpec } from "../../llm/types.js";
import type { MemoryStore } from "../../memory/index.js";
import type { SessionRef, SessionStore } from "../../store/types.js";
import { renderTodos } from "../../tools/builtin/todo.js";
import type { Painter } from "../render/style.js";

export interface SlashContext {
  store: SessionStore;
  memory?: MemoryStore;
  ref: SessionRef;
  model: ModelSpec;
  out: NodeJS.WritableStream;
  paint: Painter;
}

export type SlashResult = "continue" | "exit";

const help = `Commands:
  /help       this list
  /sessions   your sessions (* marks this one)
  /clear      start over in this session (history stays stored, the model no longer sees it)
  /compact    summarise older turns now
  /todos      this session's todo list
  /memory [q] what Dimsum remembers about you (core blocks and memories; q searches)
  /attach F   attach a file (image, PDF, text) to your next message
  /exit       leave (also /quit, Ctrl-D)`;

/** Runs a slash command line; unknown commands print the help. */
export async function runSlashCommand(line: string, ctx: SlashContext): Promise<SlashResult> {
  const [name] = line.trim().slice(1).split(/\s+/);
  switch (name) {
    case "exit":
    case "quit":
      return "exit";
    case "sessions": {
      const sessions = await ctx.store.listSessions(ctx.ref.userId);
      if (sessions.length === 0) ctx.out.write("no sessions yet\n");
      for (const s of sessions) {
        const mark = s.sessionId === ctx.ref.sessionId ? "*" : " ";
        const when = new Date(s.updatedAt).toISOString().replace("T", " ").slice(0, 16);
        ctx.out.write(
          `${mark} ${s.sessionId}  ${ctx.paint("dim", `${s.messageCount} messages · ${when}`)}  ${s.title ?? ""}\n`,
        );
      }
      return "continue";
    }
    case "clear": {
      const messages = await ctx.store.loadMessages(ctx.ref);
      const last = messages.at(-1);
      if (last) await ctx.store.markCompacted(ctx.ref, last.id);
      await ctx.store.setSummary(ctx.ref, undefined);
      ctx.out.write("context cleared; the conversation starts fresh (history is still stored)\n");
      return "continue";
    }
    case "compact": {
      const events = await compactSession({ store: ctx.store, ref: ctx.ref, model: ctx.model });
      const summary = events.find((e) => e.type === "compaction");
      ctx.out.write(
        summary && summary.type === "compaction"
          ? `compacted: ${summary.messagesRemoved} messages folded into the summary\n`
          : "nothing to compact yet\n",
      );
      return "continue";
    }
    case "memory": {
      if (!ctx.memory) {
        ctx.out.write("long-term memory is not available here\n");
        return "continue";
      }
      const query = line.trim().slice("/memory".length).trim();
      const blocks = await ctx.memory.coreBlocks({ userId: ctx.ref.userId });
      for (const b of blocks.filter((x) => x.value.trim())) ctx.out.write(`[${b.label}] ${b.value}\n`);
      const records = query
        ? (await ctx.memory.search({ userId: ctx.ref.userId, query, limit: 10 })).hits.map((h) => h.memory)
        : await ctx.memory.list(ctx.ref.userId, { limit: 20 });
      if (records.length === 0) ctx.out.write(query ? "no matching memories\n" : "no memories yet\n");
      for (const m of records) ctx.out.write(`#${m.id} ${ctx.paint("dim", m.type)} ${m.text}\n`);
      return "continue";
    }
    case "todos": {
      const todos = await ctx.store.getTodos(ctx.ref);
      ctx.out.write(todos.length > 0 ? `${renderTodos(todos)}\n` : "no todos\n");
      return "continue";
    }
    default:
      ctx.out.write(`${help}\n`);
      return "continue";
  }
}
