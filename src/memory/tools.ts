/**
 * The memory tools a model can call: edit core memory, write and search archival memory, search
 * past conversations. Every tool works on the calling user's memory (`ctx.userId`) and fails
 * without one, so one user can never read or write another's.
 */
import * as z from "zod";
import { DimsumError } from "../errors.js";
import { errorResult } from "../tools/builtin/tool-error.js";
import { defineTool, type Tool, type ToolContext, type ToolResult } from "../tools/types.js";
import { type CoreEditResult, MEMORY_TYPES, type MemoryScope, type MemoryStore } from "./types.js";

export interface MemoryToolsOptions {
  /**
   * Whose memory the tools work on, fixed when the run is assembled (the team binds the person the
   * run acts for and the agent). Without it, the calling run's user (`ctx.userId`) and `agentId`.
   */
  scope?: MemoryScope;
  /** Scope writes and searches to one agent (plus the user's shared memories). */
  agentId?: string;
  /**
   * The session owners whose conversations `recall_search` searches (default: the scope's user):
   * the team adds the person's channels.
   */
  recallOwners?: () => Promise<string[]>;
  /** Most results a search tool returns, whatever the model asks for (default 20). */
  maxResults?: number;
}

/**
 * The tools' parameter schemas, built by the first createMemoryTools: a run without memory (a plain
 * `dimsum run`) loads this module but never builds them.
 */
function buildParameters() {
  const typeEnum = z.enum(MEMORY_TYPES as [string, ...string[]]);

  const coreAppendParameters = z.object({
    label: z.string().min(1).describe("Block label, e.g. user, persona, goals"),
    text: z.string().min(1).describe("The line to add"),
  });

  const coreReplaceParameters = z.object({
    label: z.string().min(1).describe("Block label"),
    old: z.string().min(1).describe("Exact text currently in the block"),
    new: z.string().describe("Replacement text; empty to delete"),
  });

  const writeParameters = z.object({
    text: z.string().min(1).describe("The memory, e.g. 'Prefers answers in Chinese'"),
    type: typeEnum.describe("semantic | episodic | procedural"),
    tags: z.array(z.string()).optional().describe("A few short topic tags"),
    importance: z.number().int().min(1).max(10).optional().describe("1 (trivia) to 10 (critical); default 5"),
  });

  const searchParameters = z.object({
    query: z.string().min(1).describe("What to look for"),
    limit: z.number().int().min(1).max(50).optional().describe("Most results (default 10)"),
    type: typeEnum.optional().describe("Only this type"),
  });

  const recallParameters = z.object({
    query: z.string().min(1).describe("Words to look for"),
    limit: z.number().int().min(1).max(50).optional().describe("Most results (default 10)"),
  });
  return { coreAppendParameters, coreReplaceParameters, writeParameters, searchParameters, recallParameters };
}

let parameters: ReturnType<typeof buildParameters> | undefined;

function scopeOf(ctx: ToolContext, options: MemoryToolsOptions): MemoryScope {
  if (options.scope) return options.scope;
  if (!ctx.userId) {
    throw new DimsumError("tool_failed", "Memory tools need to know the user, and this run has no user id.", {
      hint: "start the run with a user (e.g. --user alice) to use memory",
    });
  }
  return options.agentId ? { userId: ctx.userId, agentId: options.agentId } : { userId: ctx.userId };
}

function coreResult(result: CoreEditResult): ToolResult | string {
  if (!result.ok) return { content: result.reason, isError: true };
  const { block } = result;
  return {
    content: `Core memory block "${block.label}" now holds ${block.value.length} of ${block.limit} characters:\n${block.value}`,
    data: block,
  };
}

function round(n: number, digits = 4): number {
  return Number(n.toFixed(digits));
}

function limitOf(requested: number | undefined, options: MemoryToolsOptions): number {
  return Math.min(requested ?? 10, options.maxResults ?? 20);
}

/** The five memory tools, bound to one store (and optionally one agent). */
export function createMemoryTools(memory: MemoryStore, options: MemoryToolsOptions = {}): Tool[] {
  parameters ??= buildParameters();
  const { coreAppendParameters, coreReplaceParameters, writeParameters, searchParameters, recallParameters } =
    parameters;
  const coreAppend = defineTool({
    name: "core_memory_append",
    description:
      "Append a line to a core memory block (always visible to you), e.g. label 'user' for key facts about " +
      "the user or 'persona' for how you behave. Blocks are size-limited: when one is full, condense it with " +
      "core_memory_replace. Use memory_write for details that need not be in view all the time.",
    parameters: coreAppendParameters,
    async execute(args, ctx) {
      try {
        return coreResult(await memory.coreAppend(scopeOf(ctx, options), args.label, args.text));
      } catch (err) {
        return errorResult(err);
      }
    },
  });

  const coreReplace = defineTool({
    name: "core_memory_replace",
    description:
      "Replace text in a core memory block: `old` must be copied exactly from the block; `new` replaces it " +
      "(empty `new` deletes it). Use it to correct facts and to condense a full block.",
    parameters: coreReplaceParameters,
    async execute(args, ctx) {
      try {
        return coreResult(await memory.coreReplace(scopeOf(ctx, options), args.label, args.old, args.new));
      } catch (err) {
        return errorResult(err);
      }
    },
  });

  const write = defineTool({
    name: "memory_write",
    description:
      "Save one long-term memory about the user for future conversations. type: semantic (facts, preferences), " +
      "episodic (events: what happened when), procedural (how the user wants things done). One self-contained " +
      "fact per call, written so it makes sense without this conversation. A near-duplicate is merged into the existing memory.",
    parameters: writeParameters,
    async execute(args, ctx) {
      try {
        const scope = scopeOf(ctx, options);
        const result = await memory.remember(
          {
            ...scope,
            text: args.text,
            type: args.type as (typeof MEMORY_TYPES)[number],
            ...(args.tags ? { tags: args.tags } : {}),
            ...(args.importance !== undefined ? { importance: args.importance } : {}),
            ...(ctx.sessionId ? { sourceSessionId: ctx.sessionId } : {}),
            sourceRunId: ctx.runId,
          },
          { signal: ctx.signal },
        );
        const similarity =
          result.similarity !== undefined ? ` (similarity ${round(result.similarity, 2)})` : "";
        const content = result.merged
          ? `Merged into existing memory #${result.id}${similarity}; it now reads: ${result.memory.text}`
          : `Saved memory #${result.id} (${result.memory.type}).`;
        return { content, data: result };
      } catch (err) {
        return errorResult(err);
      }
    },
  });

  const search = defineTool({
    name: "memory_search",
    // Read-only: run again after a restart interrupted it.
    idempotent: true,
    description:
      "Search your long-term memories about the user (facts, preferences, past events, instructions). " +
      "Works in any language; returns ids, types, text and scores, best first.",
    parameters: searchParameters,
    async execute(args, ctx) {
      try {
        const scope = scopeOf(ctx, options);
        const result = await memory.search({
          ...scope,
          query: args.query,
          limit: limitOf(args.limit, options),
          ...(args.type ? { type: args.type as (typeof MEMORY_TYPES)[number] } : {}),
          signal: ctx.signal,
        });
        await memory.touch(
          scope.userId,
          result.hits.map((h) => h.memory.id),
        );
        const lines = result.hits.map(
          (h) =>
            `#${h.memory.id} [${h.memory.type}, importance ${h.memory.importance}, score ${round(h.score)}] ${h.memory.text}`,
        );
        const head = `mode: ${result.mode}, ${result.hits.length} result${result.hits.length === 1 ? "" : "s"}`;
        const data = {
          mode: result.mode,
          results: result.hits.map((h) => ({
            id: h.memory.id,
            type: h.memory.type,
            text: h.memory.text,
            score: h.score,
          })),
        };
        return {
          content: lines.length > 0 ? `${head}\n${lines.join("\n")}` : `${head}: no memory matched.`,
          data,
        };
      } catch (err) {
        return errorResult(err);
      }
    },
  });

  const recall = defineTool({
    name: "recall_search",
    // Read-only: run again after a restart interrupted it.
    idempotent: true,
    description:
      "Search the user's earlier conversations (all sessions) for messages containing the query words. " +
      "Use it when the user refers to something said before that is not in your memories.",
    parameters: recallParameters,
    async execute(args, ctx) {
      try {
        const scope = scopeOf(ctx, options);
        const owners = options.recallOwners ? await options.recallOwners() : undefined;
        const hits = await memory.recallSearch({
          userId: scope.userId,
          ...(owners ? { owners } : {}),
          query: args.query,
          limit: limitOf(args.limit, options),
          ...(ctx.sessionId ? { excludeSessionId: ctx.sessionId } : {}),
          ...(ctx.userId ? { excludeSessionOwner: ctx.userId } : {}),
        });
        if (hits.length === 0) return { content: "No earlier message matched.", data: { results: [] } };
        const lines = hits.map(
          (h) =>
            `[message ${h.messageId}, session ${h.sessionId}, ${h.role}, ${new Date(h.createdAt).toISOString()}, score ${round(h.score)}] ${h.text}`,
        );
        return { content: lines.join("\n"), data: { results: hits } };
      } catch (err) {
        return errorResult(err);
      }
    },
  });

  return [coreAppend, coreReplace, write, search, recall];
}
