/**
 * `rag_query`: the model searches the knowledge base and gets passages with citations it can quote
 * (document title, path, page or section, chunk id). The structured passages and the retrieval
 * trace ride along in `data` for the UI and the run trace.
 */

import * as z from "zod";
import type { Viewer } from "../shared/visibility.js";
import { errorResult } from "../tools/builtin/tool-error.js";
import { defineTool, type Tool } from "../tools/types.js";
import type { KnowledgeService } from "./knowledge-service.js";
import type { Citation, Passage } from "./types.js";

export interface RagToolOptions {
  /** Searches this agent's bases plus the shared ones (shared only without it). */
  agentId?: string;
  /** The run's person: only the bases they may see are searched (src/shared/visibility.ts). */
  viewer?: Viewer;
  /** Bases the tool may search (default: all visible). A `kb` argument outside them is refused. */
  bases?: string[];
  /** Passages when the model does not say (default 5). */
  defaultTopK?: number;
  /** Most passages per call, whatever the model asks (default 10). */
  maxTopK?: number;
  /** Characters of each passage sent to the model (default 4,000). */
  maxPassageChars?: number;
}

/** One line naming where a passage comes from, e.g. `Guide — /docs/guide.pdf, p. 3, § Install › Linux, chunk 42`. */
export function formatCitation(citation: Citation): string {
  const parts = [citation.source];
  if (citation.pageStart !== undefined) {
    parts.push(
      citation.pageEnd !== undefined && citation.pageEnd !== citation.pageStart
        ? `pp. ${citation.pageStart}-${citation.pageEnd}`
        : `p. ${citation.pageStart}`,
    );
  }
  if (citation.section) parts.push(`§ ${citation.section}`);
  parts.push(`chunk ${citation.chunkId}`);
  return `${citation.title} — ${parts.join(", ")}`;
}

function clip(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

function render(passages: Passage[], maxChars: number): string {
  return passages
    .map((p, i) => `[${i + 1}] ${formatCitation(p.citation)}\n${clip(p.text.trim(), maxChars)}`)
    .join("\n\n");
}

// One schema object per limit, so the registry converts it once, not once per run.
const schemas = new Map<string, ReturnType<typeof buildParameters>>();

function buildParameters(maxTopK: number, defaultTopK: number) {
  return z.object({
    query: z.string().min(1).describe("What to look for, in natural language or keywords"),
    topK: z
      .number()
      .int()
      .min(1)
      .max(maxTopK)
      .optional()
      .describe(`Passages to return (default ${defaultTopK})`),
    kb: z.string().min(1).optional().describe("Search only this knowledge base (by name)"),
    filter: z
      .object({
        path: z
          .string()
          .optional()
          .describe("Only documents whose path starts with or matches this (globs * ? allowed)"),
        mime: z.string().optional().describe("Only documents of this type, e.g. application/pdf or text/*"),
      })
      .optional(),
  });
}

function parametersFor(maxTopK: number, defaultTopK: number) {
  const key = `${maxTopK}/${defaultTopK}`;
  let schema = schemas.get(key);
  if (!schema) {
    schema = buildParameters(maxTopK, defaultTopK);
    schemas.set(key, schema);
  }
  return schema;
}

/** The `rag_query` tool over a knowledge service. */
export function createRagTool(kb: KnowledgeService, options: RagToolOptions = {}): Tool {
  const maxTopK = options.maxTopK ?? 10;
  const maxChars = options.maxPassageChars ?? 4000;
  return defineTool({
    name: "rag_query",
    // Read-only: run again after a restart interrupted it.
    idempotent: true,
    description:
      "Search the user's documents (knowledge base) and get the most relevant passages with citations. " +
      "Use it for questions the documents may answer; quote and cite the [n] source line (title, path, page or section) you used. " +
      "If nothing relevant comes back, say so instead of guessing.",
    parameters: parametersFor(maxTopK, options.defaultTopK ?? 5),
    async execute(args, ctx) {
      try {
        if (args.kb && options.bases && !options.bases.includes(args.kb)) {
          return {
            content: `Knowledge base "${args.kb}" is not available here; available: ${options.bases.join(", ")}.`,
            isError: true,
          };
        }
        const kbArg = args.kb ?? options.bases;
        const result = await kb.search({
          query: args.query,
          topK: Math.min(maxTopK, args.topK ?? options.defaultTopK ?? 5),
          ...(kbArg ? { kb: kbArg } : {}),
          ...(options.agentId ? { agentId: options.agentId } : {}),
          ...(options.viewer ? { viewer: options.viewer } : {}),
          ...(args.filter ? { filter: args.filter } : {}),
          signal: ctx.signal,
        });
        const notes =
          result.trace.warnings.length > 0 ? `\n\n(note: ${result.trace.warnings.join("; ")})` : "";
        const content =
          result.passages.length === 0
            ? `No passage in the knowledge base matches "${args.query}".${notes}`
            : `${render(result.passages, maxChars)}${notes}`;
        return { content, data: { passages: result.passages, trace: result.trace } };
      } catch (err) {
        return errorResult(err);
      }
    },
  });
}
