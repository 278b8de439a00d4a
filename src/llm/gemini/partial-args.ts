/** Assembles streamed function-call arguments (`partialArgs` addressed by JSON path) into one object. */
import type { GeminiPartialArg } from "./wire-types.js";

type Container = { [key: string]: unknown } | unknown[];
type Key = string | number;

/** Splits `$.a.b[0]['c d']` into `["a", "b", 0, "c d"]`; returns undefined for paths it cannot read. */
export function parseJsonPath(path: string): Key[] | undefined {
  if (!path.startsWith("$")) return undefined;
  const keys: Key[] = [];
  let rest = path.slice(1);
  while (rest !== "") {
    const dotted = /^\.([^.[\]]+)/.exec(rest);
    const indexed = /^\[(\d+)\]/.exec(rest);
    const quoted = /^\[(?:'((?:[^'\\]|\\.)*)'|"((?:[^"\\]|\\.)*)")\]/.exec(rest);
    if (dotted?.[1] !== undefined) keys.push(dotted[1]);
    else if (indexed?.[1] !== undefined) keys.push(Number(indexed[1]));
    else if (quoted) keys.push((quoted[1] ?? quoted[2] ?? "").replace(/\\(.)/g, "$1"));
    else return undefined;
    rest = rest.slice((dotted ?? indexed ?? quoted)?.[0].length ?? rest.length);
  }
  return keys;
}

function isContainer(value: unknown): value is Container {
  return value !== null && typeof value === "object";
}

function get(container: Container, key: Key): unknown {
  return Array.isArray(container) ? container[Number(key)] : container[String(key)];
}

function set(container: Container, key: Key, value: unknown): void {
  if (Array.isArray(container)) container[Number(key)] = value;
  else container[String(key)] = value;
}

/** The scalar a partial argument carries; undefined when it carries none. */
function scalar(arg: GeminiPartialArg): unknown {
  if (arg.stringValue !== undefined) return arg.stringValue;
  if (arg.numberValue !== undefined) return arg.numberValue;
  if (arg.boolValue !== undefined) return arg.boolValue;
  if ("nullValue" in arg) return null;
  return undefined;
}

/**
 * Applies one partial argument to `args`. String pieces for the same path are concatenated; other
 * scalars replace what is there. Missing containers are created (arrays for numeric keys).
 */
export function applyPartialArg(args: Record<string, unknown>, arg: GeminiPartialArg): void {
  const keys = arg.jsonPath === undefined ? undefined : parseJsonPath(arg.jsonPath);
  const value = scalar(arg);
  if (!keys || keys.length === 0 || value === undefined) return;
  let node: Container = args;
  for (let i = 0; i < keys.length - 1; i++) {
    const key = keys[i] as Key;
    let next = get(node, key);
    if (!isContainer(next)) {
      next = typeof keys[i + 1] === "number" ? [] : {};
      set(node, key, next);
    }
    node = next as Container;
  }
  const last = keys[keys.length - 1] as Key;
  const current = get(node, last);
  set(node, last, typeof value === "string" && typeof current === "string" ? current + value : value);
}
