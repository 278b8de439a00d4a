/**
 * MCP `tools/call` results as Dimsum tool results: text joined, images kept for models that can see
 * them, audio and binary resources as placeholders naming MIME type and size, resources as text with
 * their URI, `isError` as an error result and `structuredContent` kept in `data`.
 */
import type { ImagePart, TextPart } from "../llm/types.js";
import type { ToolResult } from "../tools/types.js";

/** The parts of an MCP call result we read; unknown block types are described, not dropped. */
export interface McpCallResult {
  content?: unknown;
  structuredContent?: unknown;
  isError?: boolean;
  /** Servers on protocol 2024-10-07 answer with `toolResult` instead of `content`. */
  toolResult?: unknown;
}

type Part = TextPart | ImagePart;

/** Converts one MCP call result. */
export function toToolResult(result: McpCallResult): ToolResult {
  const blocks = Array.isArray(result.content) ? result.content : [];
  const parts: Part[] = blocks.map(convertBlock);
  const hasText = parts.some((part) => part.type === "text" && part.text !== "");
  if (!hasText && result.structuredContent !== undefined) {
    parts.unshift({ type: "text", text: JSON.stringify(result.structuredContent, null, 2) });
  }
  if (parts.length === 0 && result.toolResult !== undefined) {
    parts.push({ type: "text", text: stringify(result.toolResult) });
  }
  const out: ToolResult = { content: simplify(parts) };
  if (result.isError === true) out.isError = true;
  if (result.structuredContent !== undefined) out.data = result.structuredContent;
  return out;
}

function convertBlock(block: unknown): Part {
  if (!isRecord(block)) return { type: "text", text: stringify(block) };
  switch (block.type) {
    case "text":
      return { type: "text", text: String(block.text ?? "") };
    case "image": {
      const data = String(block.data ?? "");
      const mimeType = String(block.mimeType ?? "application/octet-stream");
      return { type: "image", mimeType, data };
    }
    case "audio":
      return {
        type: "text",
        text: `[audio: ${String(block.mimeType ?? "unknown")}, ${base64Size(block.data)} bytes]`,
      };
    case "resource":
      return { type: "text", text: describeEmbedded(block.resource) };
    case "resource_link":
      return { type: "text", text: describeLink(block) };
    default:
      return { type: "text", text: `[${String(block.type ?? "unknown")} content] ${stringify(block)}` };
  }
}

function describeEmbedded(resource: unknown): string {
  if (!isRecord(resource)) return `[resource] ${stringify(resource)}`;
  const uri = String(resource.uri ?? "");
  const mime = typeof resource.mimeType === "string" ? resource.mimeType : undefined;
  if (typeof resource.text === "string") {
    return `[resource ${uri}${mime ? ` (${mime})` : ""}]\n${resource.text}`;
  }
  return `[resource ${uri}: ${mime ?? "binary"}, ${base64Size(resource.blob)} bytes]`;
}

function describeLink(link: Record<string, unknown>): string {
  const name = typeof link.name === "string" && link.name !== "" ? `${link.name} ` : "";
  const details = [
    typeof link.mimeType === "string" ? link.mimeType : undefined,
    typeof link.size === "number" ? `${link.size} bytes` : undefined,
  ].filter((item): item is string => item !== undefined);
  const description = typeof link.description === "string" ? `: ${link.description}` : "";
  return `[resource link ${name}${String(link.uri ?? "")}${details.length > 0 ? ` (${details.join(", ")})` : ""}]${description}`;
}

/** A plain string when there are no images (what most providers want); otherwise merged parts. */
function simplify(parts: Part[]): ToolResult["content"] {
  if (parts.every((part) => part.type === "text")) {
    return parts.map((part) => (part as TextPart).text).join("\n");
  }
  const merged: Part[] = [];
  for (const part of parts) {
    const last = merged.at(-1);
    if (part.type === "text" && last?.type === "text") last.text = `${last.text}\n${part.text}`;
    else merged.push(part.type === "text" ? { ...part } : part);
  }
  return merged;
}

/** Decoded size of base64 text without decoding it. */
function base64Size(data: unknown): number {
  if (typeof data !== "string") return 0;
  const clean = data.replace(/[^A-Za-z0-9+/=_-]/g, "");
  const padding = clean.endsWith("==") ? 2 : clean.endsWith("=") ? 1 : 0;
  return Math.max(0, Math.floor((clean.length * 3) / 4) - padding);
}

function stringify(value: unknown): string {
  if (typeof value === "string") return value;
  return JSON.stringify(value) ?? String(value);
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
