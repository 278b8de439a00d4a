/**
 * `{{param}}` and `{{env.NAME}}` templates for HTTP tool definitions. Each place a value lands
 * chooses its own encoding (URL-encoded in URLs, JSON-escaped in bodies); `{{env.NAME ?? default}}`
 * falls back to the default when the variable is unset. Env values are secrets: they are read only
 * while a request is built and never appear in what the model sees (see redact.ts).
 */
import { DimsumError } from "../../errors.js";

export type Placeholder =
  | { kind: "param"; path: string[]; raw: string }
  | { kind: "env"; name: string; fallback: string | undefined; raw: string };

export type TemplatePart = string | Placeholder;

export interface TemplateScope {
  params: Readonly<Record<string, unknown>>;
  env: Readonly<Record<string, string | undefined>>;
}

/** Turns a placeholder's value into text for one kind of place (URL, header, JSON string). */
export type Encoder = (value: unknown, placeholder: Placeholder) => string;

const PLACEHOLDER = /\{\{([^{}]*)\}\}/g;
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
const PARAM_PATH = /^[A-Za-z_$][\w$-]*(?:\.[A-Za-z_$][\w$-]*)*$/;

const parsedCache = new Map<string, TemplatePart[]>();

/** Splits template text into literal text and placeholders; throws DimsumError('config') on a bad one. */
export function parseTemplate(text: string): TemplatePart[] {
  const cached = parsedCache.get(text);
  if (cached) return cached;
  const parts: TemplatePart[] = [];
  let last = 0;
  for (const match of text.matchAll(PLACEHOLDER)) {
    if (match.index > last) parts.push(text.slice(last, match.index));
    parts.push(parsePlaceholder(match[1]!, match[0]));
    last = match.index + match[0].length;
  }
  if (last < text.length) parts.push(text.slice(last));
  parsedCache.set(text, parts);
  return parts;
}

function parsePlaceholder(inner: string, raw: string): Placeholder {
  const [head = "", ...rest] = inner.split("??");
  const expression = head.trim();
  const fallback = rest.length > 0 ? rest.join("??").trim() : undefined;
  if (expression.startsWith("env.")) {
    const name = expression.slice(4);
    if (!ENV_NAME.test(name)) {
      throw new DimsumError("config", `${raw} does not name an environment variable.`, {
        hint: "write {{env.NAME}} with letters, digits and underscores",
      });
    }
    return { kind: "env", name, fallback, raw };
  }
  if (fallback !== undefined) {
    throw new DimsumError("config", `${raw}: only {{env.NAME ?? default}} may have a default.`, {
      hint: 'give parameters a "default" in their JSON Schema instead',
    });
  }
  if (!PARAM_PATH.test(expression)) {
    throw new DimsumError("config", `${raw} is not a parameter name.`, {
      hint: "write {{name}} for a parameter or {{env.NAME}} for an environment variable",
    });
  }
  return { kind: "param", path: expression.split("."), raw };
}

/** Every placeholder in a string, or in all strings inside an object or array. */
export function placeholdersIn(value: unknown): Placeholder[] {
  if (typeof value === "string") return parseTemplate(value).filter((p) => typeof p !== "string");
  if (Array.isArray(value)) return value.flatMap(placeholdersIn);
  if (typeof value === "object" && value !== null) return Object.values(value).flatMap(placeholdersIn);
  return [];
}

/** The placeholder when `text` is exactly one placeholder (its value keeps its JSON type). */
export function wholePlaceholder(text: string): Placeholder | undefined {
  const parts = parseTemplate(text);
  const only = parts[0];
  return parts.length === 1 && typeof only !== "string" ? only : undefined;
}

/** A placeholder's value: a parameter (undefined when not given) or an env var (or its default). */
export function resolvePlaceholder(placeholder: Placeholder, scope: TemplateScope): unknown {
  if (placeholder.kind === "env") {
    const value = scope.env[placeholder.name];
    if (value !== undefined && value !== "") return value;
    if (placeholder.fallback !== undefined) return placeholder.fallback;
    throw new DimsumError("tool_failed", `The environment variable ${placeholder.name} is not set.`, {
      hint: `set ${placeholder.name} (in the environment or .env) and restart`,
    });
  }
  let current: unknown = scope.params;
  for (const key of placeholder.path) {
    if (typeof current !== "object" || current === null || !Object.hasOwn(current, key)) return undefined;
    current = (current as Record<string, unknown>)[key];
  }
  return current;
}

/** Renders template text, encoding each placeholder's value with `encode`. */
export function renderTemplate(text: string, scope: TemplateScope, encode: Encoder): string {
  let out = "";
  for (const part of parseTemplate(text)) {
    out += typeof part === "string" ? part : encode(resolvePlaceholder(part, scope), part);
  }
  return out;
}

/**
 * Renders a JSON body template: a string that is exactly one placeholder becomes the typed value
 * (keys whose value is missing are left out); other strings are interpolated as text, and
 * JSON.stringify escapes them when the body is sent.
 */
export function renderJsonValue(value: unknown, scope: TemplateScope): unknown {
  if (typeof value === "string") {
    const whole = wholePlaceholder(value);
    if (whole) return resolvePlaceholder(whole, scope);
    return renderTemplate(value, scope, (v) => toText(v));
  }
  if (Array.isArray(value)) return value.map((item) => renderJsonValue(item, scope) ?? null);
  if (typeof value === "object" && value !== null) {
    const out: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value)) {
      const rendered = renderJsonValue(item, scope);
      if (rendered !== undefined) out[key] = rendered;
    }
    return out;
  }
  return value;
}

/** Plain text for a value: scalars as written, lists of scalars comma-separated, objects as JSON. */
export function toText(value: unknown): string {
  if (value === undefined || value === null) return "";
  if (typeof value === "string") return value;
  if (typeof value === "number" || typeof value === "boolean") return String(value);
  if (Array.isArray(value) && value.every((v) => v === null || typeof v !== "object")) {
    return value.map(toText).join(",");
  }
  return JSON.stringify(value);
}

/** In a URL: parameters are percent-encoded; env values go in as written, so they can hold a base URL. */
export const encodeForUrl: Encoder = (value, placeholder) => {
  if (placeholder.kind === "env") return toText(value);
  const text = toText(value);
  // URL parsers resolve "." and ".." segments (even percent-encoded), which would change the path.
  if (text === "." || text === "..") {
    throw new DimsumError("tool_failed", `${placeholder.raw} may not be "${text}" in a URL.`, {
      hint: "give a real value",
    });
  }
  return encodeURIComponent(text);
};

/** In headers and query values (URLSearchParams encodes those itself). */
export const encodeAsText: Encoder = (value) => toText(value);

/**
 * In a body written as JSON text: strings are escaped for use between quotes, other values are
 * written as JSON (so `{"n": {{count}}}` stays a number).
 */
export const encodeForJsonText: Encoder = (value) => {
  if (value === undefined) return "";
  if (typeof value === "string") return JSON.stringify(value).slice(1, -1);
  return JSON.stringify(value);
};
