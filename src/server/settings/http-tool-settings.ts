/**
 * HTTP tools added in Settings → HTTP tools, kept in the `server_settings` table (key `httpTools`,
 * one JSON list) like the remote agents saved there. Every header value (an API key, a bearer token)
 * is sealed with the secret box before it reaches the row and is opened only to build the tool a run
 * calls; views show the header names, never their values.
 */
import type { SqlDatabase } from "../../store/sql-database.js";
import type { SecretBox } from "./secret-box.js";
import { SettingList } from "./setting-values.js";

/** The `server_settings` key the list is kept under. */
export const HTTP_TOOLS_KEY = "httpTools";

/** A definition as the Settings form gives it (the file format; checked before it gets here). */
export type HttpToolDefinitionInput = Record<string, unknown> & { name: string };

/** One saved tool as stored: the definition without its headers, and the header values sealed. */
export interface StoredHttpTool {
  definition: Record<string, unknown>;
  sealedHeaders: Record<string, string>;
  enabled: boolean;
}

/** What may be shown of a saved tool: the definition without header values, and the header names. */
export interface SavedHttpToolView {
  name: string;
  definition: Record<string, unknown>;
  headerNames: string[];
  enabled: boolean;
}

/** A saved tool as runs build it: the full definition, its header values opened. */
export interface SavedHttpToolConfig {
  name: string;
  definition: Record<string, unknown>;
}

/**
 * The HTTP tools saved from the UI (`HttpToolSettings`, over SQLite or PostgreSQL). Changes are read-modify-write of one list, done atomically.
 */
export interface HttpToolSettingsRepository {
  list(): Promise<SavedHttpToolView[]>;
  /** The enabled tools as runs build them. */
  configs(): Promise<SavedHttpToolConfig[]>;
  /** Saves a new tool; false (nothing saved) when one of that name is saved already. */
  add(definition: HttpToolDefinitionInput, enabled: boolean): Promise<boolean>;
  /** Replaces a saved tool's definition (a header given as "" keeps its saved value); false when none. */
  update(name: string, definition: HttpToolDefinitionInput | undefined, enabled?: boolean): Promise<boolean>;
  /** Forgets a saved tool; false when there was none of that name. */
  remove(name: string): Promise<boolean>;
}

/** The stored form of a definition: headers taken out and sealed (`keep` gives values for ""). */
export function storedHttpToolOf(
  definition: HttpToolDefinitionInput,
  enabled: boolean,
  box: SecretBox,
  keep: Record<string, string> = {},
): StoredHttpTool {
  const { headers, ...rest } = definition;
  const sealedHeaders: Record<string, string> = {};
  if (headers && typeof headers === "object" && !Array.isArray(headers)) {
    for (const [name, value] of Object.entries(headers as Record<string, unknown>)) {
      if (typeof value !== "string") continue;
      if (value === "") {
        const kept = keep[name];
        if (kept !== undefined) sealedHeaders[name] = kept;
      } else sealedHeaders[name] = box.seal(value);
    }
  }
  return { definition: rest, sealedHeaders, enabled };
}

export function savedHttpToolView(stored: StoredHttpTool): SavedHttpToolView {
  return {
    name: String(stored.definition.name),
    definition: stored.definition,
    headerNames: Object.keys(stored.sealedHeaders),
    enabled: stored.enabled,
  };
}

/** The definition a run builds; a header that no longer opens (the key was replaced) is left out. */
export function httpToolConfigOf(stored: StoredHttpTool, box: SecretBox): SavedHttpToolConfig {
  const headers: Record<string, string> = {};
  for (const [name, sealed] of Object.entries(stored.sealedHeaders)) {
    const value = box.open(sealed);
    if (value !== undefined) headers[name] = value;
  }
  return {
    name: String(stored.definition.name),
    definition: { ...stored.definition, ...(Object.keys(headers).length > 0 ? { headers } : {}) },
  };
}

/** The list with `name` changed; undefined when there is no such tool. */
export function patchedHttpTools(
  tools: readonly StoredHttpTool[],
  name: string,
  definition: HttpToolDefinitionInput | undefined,
  enabled: boolean | undefined,
  box: SecretBox,
): StoredHttpTool[] | undefined {
  if (!tools.some((t) => t.definition.name === name)) return undefined;
  return tools.map((tool) => {
    if (tool.definition.name !== name) return tool;
    const next = definition
      ? storedHttpToolOf({ ...definition, name }, tool.enabled, box, tool.sealedHeaders)
      : { ...tool };
    if (enabled !== undefined) next.enabled = enabled;
    return next;
  });
}

/** The HTTP tools saved from the UI. */
export class HttpToolSettings extends SettingList<StoredHttpTool> implements HttpToolSettingsRepository {
  constructor(db: SqlDatabase, box: SecretBox) {
    super(db, box, HTTP_TOOLS_KEY);
  }

  async list(): Promise<SavedHttpToolView[]> {
    return (await this.saved()).map(savedHttpToolView);
  }

  async configs(): Promise<SavedHttpToolConfig[]> {
    return (await this.saved()).filter((t) => t.enabled).map((t) => httpToolConfigOf(t, this.box));
  }

  async add(definition: HttpToolDefinitionInput, enabled: boolean): Promise<boolean> {
    const stored = storedHttpToolOf(definition, enabled, this.box);
    return this.modify((tools) =>
      tools.some((t) => t.definition.name === definition.name)
        ? { result: false }
        : { result: true, next: [...tools, stored] },
    );
  }

  async update(
    name: string,
    definition: HttpToolDefinitionInput | undefined,
    enabled?: boolean,
  ): Promise<boolean> {
    return this.modify((tools) => {
      const next = patchedHttpTools(tools, name, definition, enabled, this.box);
      return { result: next !== undefined, ...(next ? { next } : {}) };
    });
  }

  async remove(name: string): Promise<boolean> {
    return this.modify((tools) => {
      const found = tools.some((t) => t.definition.name === name);
      return found
        ? { result: true, next: tools.filter((t) => t.definition.name !== name) }
        : { result: false };
    });
  }
}
