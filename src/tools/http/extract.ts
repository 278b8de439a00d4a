/**
 * `responseExtract` paths into a JSON response: dotted keys with array indexes, e.g.
 * `current.temperature_2m`, `daily.time[0]`, `items[-1]` (last item) and `results[*].name` (every item).
 */
import { DimsumError } from "../../errors.js";

export type PathSegment = { key: string } | { index: number } | { wildcard: true };

export interface JsonPath {
  /** The path as written, used as the key in extracted results. */
  text: string;
  segments: PathSegment[];
  /** Written with a trailing `?`: a missing value is fine (only meaningful for step extracts). */
  optional: boolean;
}

/** Parses one path; throws DimsumError('config') naming the problem. */
export function parsePath(source: string): JsonPath {
  let text = source.trim();
  const optional = text.endsWith("?");
  if (optional) text = text.slice(0, -1).trim();
  const bad = (why: string) =>
    new DimsumError("config", `The response path "${source}" is invalid: ${why}.`, {
      hint: "write paths like current.temperature_2m, daily.time[0] or results[*].name",
    });
  if (text === "") throw bad("it is empty");
  const segments: PathSegment[] = [];
  let i = 0;
  let expectKey = true;
  while (i < text.length) {
    const char = text[i];
    if (char === "[") {
      const end = text.indexOf("]", i);
      if (end < 0) throw bad("a `[` is not closed");
      const inner = text.slice(i + 1, end).trim();
      if (inner === "*") segments.push({ wildcard: true });
      else if (/^-?\d+$/.test(inner)) segments.push({ index: Number(inner) });
      else throw bad(`[${inner}] is not an index (use a number, a negative number from the end, or *)`);
      i = end + 1;
      expectKey = false;
    } else if (char === ".") {
      if (expectKey) throw bad("a key is empty");
      i++;
      expectKey = true;
    } else {
      let end = i;
      while (end < text.length && text[end] !== "." && text[end] !== "[" && text[end] !== "]") end++;
      if (text[end] === "]") throw bad("a `]` has no matching `[`");
      segments.push({ key: text.slice(i, end).trim() });
      i = end;
      expectKey = false;
    }
  }
  if (expectKey) throw bad("it ends with a dot");
  return { text, segments, optional };
}

/** Parses comma-separated paths (`a.b, c[0]`). */
export function parsePathList(spec: string): JsonPath[] {
  return spec.split(",").map(parsePath);
}

/** The value at `path`; undefined when any step is missing. `[*]` collects from every item. */
export function extractPath(value: unknown, path: JsonPath): unknown {
  return walk(value, path.segments, 0);
}

function walk(value: unknown, segments: PathSegment[], from: number): unknown {
  let current = value;
  for (let i = from; i < segments.length; i++) {
    const segment = segments[i]!;
    if ("wildcard" in segment) {
      const items = Array.isArray(current)
        ? current
        : typeof current === "object" && current !== null
          ? Object.values(current)
          : undefined;
      if (!items) return undefined;
      return items.map((item) => walk(item, segments, i + 1)).filter((v) => v !== undefined);
    }
    if ("index" in segment) {
      if (!Array.isArray(current)) return undefined;
      current = current.at(segment.index);
    } else {
      if (typeof current !== "object" || current === null || Array.isArray(current)) return undefined;
      if (!Object.hasOwn(current, segment.key)) return undefined;
      current = (current as Record<string, unknown>)[segment.key];
    }
  }
  return current;
}

/** Each path's value keyed by the path text; missing values become null so the model sees them. */
export function extractAll(value: unknown, paths: readonly JsonPath[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const path of paths) out[path.text] = extractPath(value, path) ?? null;
  return out;
}
