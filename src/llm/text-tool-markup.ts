/**
 * Parsers of the tool-call markups models write as text, each as its documentation shows it. A parser
 * accepts the whole held text or nothing: any text it cannot account for means "not a tool call".
 */
import type { ToolCallFormat, ToolSchema } from "./types.js";

export interface ParsedCall {
  name: string;
  arguments: Record<string, unknown>;
}

type Format = Exclude<ToolCallFormat, "none">;

/** The calls in `text` (which starts with a marker), or undefined when it is not exact markup. */
export function parseMarkup(
  text: string,
  format: Format,
  tools: readonly ToolSchema[],
): ParsedCall[] | undefined {
  const body = text.trim();
  let calls: ParsedCall[] | undefined;
  if (body.startsWith("<tool_call>")) {
    if (format === "mistral" || format === "llama-json") return undefined;
    calls = parseToolCallTags(body, format);
  } else if (body.startsWith("[TOOL_CALLS]")) {
    if (format !== "mistral" && format !== "auto") return undefined;
    calls = parseMistral(body);
  } else if (body.startsWith("<|python_tag|>") || body.startsWith("{")) {
    if (format !== "llama-json" && format !== "auto") return undefined;
    calls = parseLlamaJson(body.replace(/^<\|python_tag\|>/, ""));
  }
  if (calls === undefined || calls.length === 0) return undefined;
  const offered = new Set(tools.map((t) => t.name));
  // `auto` guesses at the format, so it runs only tools that were offered; a named format trusts the
  // model, and a wrong name comes back to it as an unknown-tool result.
  if (format === "auto" && calls.some((c) => !offered.has(c.name))) return undefined;
  return calls.map((call) => coerceParameters(call, tools));
}

/** `<tool_call>…</tool_call>` blocks, whitespace between them and nothing else. */
function parseToolCallTags(body: string, format: Format): ParsedCall[] | undefined {
  const calls: ParsedCall[] = [];
  let rest = body;
  while (rest !== "") {
    const match = /^<tool_call>([\s\S]*?)<\/tool_call>\s*/.exec(rest);
    if (!match) return undefined;
    const inner = (match[1] ?? "").trim();
    const call =
      inner.startsWith("{") && format !== "qwen3-coder"
        ? parseJsonCall(inner, "arguments")
        : inner.startsWith("<function=") && format !== "hermes"
          ? parseQwenFunction(inner)
          : undefined;
    if (!call) return undefined;
    calls.push(call);
    rest = rest.slice(match[0].length);
  }
  return calls;
}

/** Qwen3-Coder: `<function=name>` then `<parameter=key>value</parameter>` blocks, then `</function>`. */
function parseQwenFunction(inner: string): ParsedCall | undefined {
  const match = /^<function=([A-Za-z0-9_.-]+)>([\s\S]*)<\/function>$/.exec(inner);
  if (!match) return undefined;
  const args: Record<string, unknown> = {};
  let rest = (match[2] ?? "").trim();
  while (rest !== "") {
    const param = /^<parameter=([A-Za-z0-9_.-]+)>([\s\S]*?)<\/parameter>\s*/.exec(rest);
    if (!param) return undefined;
    // The value sits on its own lines: one newline on each side is framing, not content.
    args[param[1] as string] = (param[2] ?? "").replace(/^\n/, "").replace(/\n$/, "");
    rest = rest.slice(param[0].length);
  }
  return { name: match[1] as string, arguments: args };
}

/** Mistral: `[TOOL_CALLS][{"name", "arguments"}, …]` (v3 tokenizers) or `[TOOL_CALLS]name[ARGS]{…}` (v11). */
function parseMistral(body: string): ParsedCall[] | undefined {
  let rest = body.slice("[TOOL_CALLS]".length).trim();
  if (rest.startsWith("[")) {
    const list = parseJson(rest);
    if (!Array.isArray(list) || list.length === 0) return undefined;
    const calls: ParsedCall[] = [];
    for (const item of list) {
      const call = callFromObject(item, "arguments");
      if (!call) return undefined;
      calls.push(call);
    }
    return calls;
  }
  const calls: ParsedCall[] = [];
  while (rest !== "") {
    const head = /^([A-Za-z0-9_.-]+)\[ARGS\]/.exec(rest);
    if (!head) return undefined;
    const start = head[0].length;
    const end = jsonEnd(rest, start);
    if (end === undefined) return undefined;
    const args = parseJson(rest.slice(start, end));
    if (!isRecord(args)) return undefined;
    calls.push({ name: head[1] as string, arguments: args });
    rest = rest
      .slice(end)
      .trim()
      .replace(/^\[TOOL_CALLS\]/, "")
      .trim();
  }
  return calls;
}

/** Llama 3.1+ JSON tool calling: the whole message is `{"name": …, "parameters": {…}}` (`;` between several). */
function parseLlamaJson(body: string): ParsedCall[] | undefined {
  const calls: ParsedCall[] = [];
  let rest = body.trim();
  while (rest !== "") {
    const end = jsonEnd(rest, 0);
    if (end === undefined) return undefined;
    const call = parseJsonCall(rest.slice(0, end), "parameters");
    if (!call) return undefined;
    calls.push(call);
    rest = rest.slice(end).trim().replace(/^;/, "").trim();
  }
  return calls;
}

function parseJsonCall(text: string, argsKey: "arguments" | "parameters"): ParsedCall | undefined {
  return callFromObject(parseJson(text), argsKey);
}

/** `{name, arguments}` (or `parameters`); arguments may be an object or a JSON string of one. */
function callFromObject(value: unknown, argsKey: "arguments" | "parameters"): ParsedCall | undefined {
  if (!isRecord(value) || typeof value.name !== "string" || value.name === "") return undefined;
  const keys = Object.keys(value);
  if (keys.some((k) => k !== "name" && k !== "arguments" && k !== "parameters")) return undefined;
  let args: unknown = value[argsKey] ?? value.arguments ?? value.parameters ?? {};
  if (typeof args === "string") args = parseJson(args);
  if (!isRecord(args)) return undefined;
  return { name: value.name, arguments: args };
}

/** Qwen3-Coder parameters arrive as text: numbers, booleans, arrays and objects are read by the schema. */
function coerceParameters(call: ParsedCall, tools: readonly ToolSchema[]): ParsedCall {
  const schema = tools.find((t) => t.name === call.name)?.parameters;
  const properties = isRecord(schema?.properties) ? schema.properties : {};
  const args: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(call.arguments)) {
    const property = properties[key];
    const type = isRecord(property) ? property.type : undefined;
    if (typeof value === "string" && type !== undefined && type !== "string") {
      const parsed = parseJson(value.trim());
      args[key] = parsed === undefined ? value : parsed;
    } else {
      args[key] = value;
    }
  }
  return { name: call.name, arguments: args };
}

/** End index (exclusive) of the JSON object or array starting at `start`, strings respected. */
function jsonEnd(text: string, start: number): number | undefined {
  const open = text[start];
  if (open !== "{" && open !== "[") return undefined;
  let depth = 0;
  let inString = false;
  for (let i = start; i < text.length; i++) {
    const ch = text[i];
    if (inString) {
      if (ch === "\\") i++;
      else if (ch === '"') inString = false;
      continue;
    }
    if (ch === '"') inString = true;
    else if (ch === "{" || ch === "[") depth++;
    else if (ch === "}" || ch === "]") {
      depth--;
      if (depth === 0) return i + 1;
    }
  }
  return undefined;
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
