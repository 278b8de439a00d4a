/**
 * The HTTP tools of the server: those of the tools/http folders and the config's `httpTools` (read
 * once at start, read-only here) and those added in Settings → HTTP tools (in the settings store).
 * Runs read `forRuns()` at their start: the saved list is read from the database once and kept until
 * it changes, here (add, update, remove) or on another instance (`onChanged` tells them, `invalidate`
 * hears it; see instance-sync.ts), so a tool added in Settings is offered from the next run on.
 *
 * A saved tool's header values (API keys) are sealed at rest; at run time they reach the tool as
 * private `{{env.…}}` values, so the tool's redaction hides them in what the model and logs see.
 * Saved tools may not read the server's environment (`{{env.NAME}}`): an admin of the web UI must not
 * be able to send the server's own secrets to a URL of their choosing.
 */
import type { DimsumConfig } from "../config/load-config.js";
import { conflict, invalid, notFound } from "../errors.js";
import { CachedRead } from "../shared/cached-read.js";
import { type CheckedHttpTool, checkHttpToolDefinition, createHttpTool } from "../tools/http/index.js";
import type { Tool } from "../tools/types.js";
import type {
  HttpToolDefinitionInput,
  HttpToolSettingsRepository,
  SavedHttpToolConfig,
} from "./settings/http-tool-settings.js";

/** Where file-defined tools come from, in views and error hints. */
const FILE_SOURCE = "tools/http or the config's httpTools";

/** An HTTP tool as Settings lists it: a saved one's definition without header values. */
export interface HttpToolView {
  name: string;
  description: string;
  /** `"file"` (read-only: edit the file and restart) or `"settings"` (editable here). */
  source: "file" | "settings";
  editable: boolean;
  enabled: boolean;
  /** A saved tool's definition, header values left out (see `headerNames`); null for a file's. */
  definition: Record<string, unknown> | null;
  /** The headers a saved tool sends; their values are never shown. */
  headerNames: string[];
}

/** The result of checking a definition given in Settings: the checked tool, or why not (a 400). */
export function checkSavedHttpTool(value: unknown, allowPrivateNetwork: boolean): CheckedHttpTool {
  const checked = checkHttpToolDefinition(value);
  if (!checked.ok) {
    throw invalid(
      `Invalid HTTP tool definition: ${checked.message}`,
      "use the format of tools/http/*.json (see the README's HTTP tools section)",
    );
  }
  if (checked.tool.envNames.length > 0) {
    throw invalid(
      `An HTTP tool added in Settings cannot read the server's environment (${checked.tool.envNames
        .map((n) => `{{env.${n}}}`)
        .join(", ")})`,
      "put the key in a header value (it is sealed at rest and never shown again), or define the tool in tools/http",
    );
  }
  if (checked.tool.definition.allowPrivateNetwork === true && !allowPrivateNetwork) {
    throw invalid(
      "An HTTP tool added in Settings cannot allow private network addresses",
      "remove allowPrivateNetwork, or set tools.fetch.allowPrivateNetwork in the server's config",
    );
  }
  return checked.tool;
}

/** The HTTP tools of the files and of Settings, as runs and the Settings routes use them. */
export class HttpTools {
  /** The saved tools runs get, until they change; a read that fails is not kept. */
  readonly #forRuns = new CachedRead(() => this.#readForRuns());
  /** Told after each change made here (the other instances then `invalidate` theirs). */
  onChanged: (() => void) | undefined;

  /** The tools of the files (set once the server has loaded them). */
  private fromFiles: readonly Tool[];

  constructor(
    private readonly saved: HttpToolSettingsRepository,
    private readonly allowPrivateNetwork = false,
    fromFiles: readonly Tool[] = [],
  ) {
    this.fromFiles = fromFiles;
  }

  /** The tools of the files, loaded with the server's other extensions (they win a name). */
  setFileTools(tools: readonly Tool[]): void {
    this.fromFiles = tools;
    this.invalidate();
  }

  /** The tools saved in Settings a run gets now (file tools are offered as before, from the catalogue). */
  forRuns(): Promise<Tool[]> {
    return this.#forRuns.get();
  }

  /** Forgets the saved tools runs get (changed on another instance): the next run reads them again. */
  invalidate(): void {
    this.#forRuns.invalidate();
  }

  async #readForRuns(): Promise<Tool[]> {
    const names = new Set(this.fromFiles.map((t) => t.name));
    const tools: Tool[] = [];
    for (const saved of await this.saved.configs()) {
      if (names.has(saved.name)) continue;
      const tool = this.#build(saved);
      if (tool) tools.push(tool);
    }
    return tools;
  }

  /** The tool of a saved definition, its header values given as private env values (redacted). */
  #build(saved: SavedHttpToolConfig): Tool | undefined {
    const { headers, ...rest } = saved.definition;
    const env: Record<string, string> = {};
    const templated: Record<string, string> = {};
    if (headers && typeof headers === "object") {
      Object.entries(headers as Record<string, string>).forEach(([name, value], i) => {
        const key = `DIMSUM_HTTP_TOOL_HEADER_${i}`;
        env[key] = value;
        templated[name] = `{{env.${key}}}`;
      });
    }
    const checked = checkHttpToolDefinition({
      ...rest,
      ...(Object.keys(templated).length > 0 ? { headers: templated } : {}),
    });
    // Checked when saved; a definition the format no longer takes is left out, not fatal.
    if (!checked.ok) return undefined;
    return createHttpTool(checked.tool, { env, allowPrivateNetwork: this.allowPrivateNetwork });
  }

  #changed(): void {
    this.invalidate();
    this.onChanged?.();
  }

  /** Every HTTP tool, the files' first. */
  async list(): Promise<HttpToolView[]> {
    const names = new Set(this.fromFiles.map((t) => t.name));
    const files: HttpToolView[] = this.fromFiles.map((t) => ({
      name: t.name,
      description: t.description,
      source: "file",
      editable: false,
      enabled: true,
      definition: null,
      headerNames: [],
    }));
    const saved: HttpToolView[] = (await this.saved.list())
      .filter((t) => !names.has(t.name))
      .map((t) => ({
        name: t.name,
        description: typeof t.definition.description === "string" ? t.definition.description : "",
        source: "settings",
        editable: true,
        enabled: t.enabled,
        definition: t.definition,
        headerNames: t.headerNames,
      }));
    return [...files, ...saved];
  }

  async #view(name: string): Promise<HttpToolView> {
    const view = (await this.list()).find((t) => t.name === name);
    if (!view) throw notFound(`HTTP tool "${name}" was removed meanwhile`);
    return view;
  }

  /** Saves a tool given in Settings; a name a file or Settings already has is a conflict (409). */
  async add(definition: unknown, enabled = true): Promise<HttpToolView> {
    const checked = checkSavedHttpTool(definition, this.allowPrivateNetwork);
    const name = checked.definition.name;
    this.#assertNotFile(name, "add");
    const input = definitionInput(definition, name);
    const added = await this.saved.add(input, enabled).finally(() => this.#changed());
    if (!added)
      throw conflict(`An HTTP tool "${name}" already exists`, "choose another name, or edit that one");
    return this.#view(name);
  }

  /** Replaces a saved tool's definition (a header value "" keeps the saved one) or turns it on or off. */
  async update(name: string, change: { definition?: unknown; enabled?: boolean }): Promise<HttpToolView> {
    this.#assertNotFile(name, "change");
    let input: HttpToolDefinitionInput | undefined;
    if (change.definition !== undefined) {
      const withName: Record<string, unknown> = { ...(change.definition as Record<string, unknown>), name };
      // Header values left empty keep their saved value: check with a stand-in.
      const headers = withName.headers;
      const forCheck =
        headers && typeof headers === "object" && !Array.isArray(headers)
          ? {
              ...withName,
              headers: Object.fromEntries(
                Object.entries(headers as Record<string, unknown>).map(([k, v]) => [
                  k,
                  v === "" ? "kept" : v,
                ]),
              ),
            }
          : withName;
      checkSavedHttpTool(forCheck, this.allowPrivateNetwork);
      input = definitionInput(withName, name);
    }
    const updated = await this.saved.update(name, input, change.enabled).finally(() => this.#changed());
    if (!updated) throw notFound(`No HTTP tool "${name}" in Settings`, "add it first");
    return this.#view(name);
  }

  /** Forgets a saved tool; a file's cannot be removed here (409). */
  async remove(name: string): Promise<void> {
    this.#assertNotFile(name, "remove");
    const removed = await this.saved.remove(name).finally(() => this.#changed());
    if (!removed) throw notFound(`No HTTP tool "${name}" in Settings`);
  }

  #assertNotFile(name: string, verb: string): void {
    if (this.fromFiles.some((t) => t.name === name)) {
      throw conflict(
        `The HTTP tool "${name}" comes from ${FILE_SOURCE}`,
        verb === "add" ? "choose another name" : `${verb} it there and restart`,
      );
    }
  }
}

/** The definition as given (the original form is kept, e.g. the seed's parameter list). */
function definitionInput(definition: unknown, name: string): HttpToolDefinitionInput {
  return { ...(definition as Record<string, unknown>), name };
}

/** The server's HTTP tools: those saved in `saved` (the files' are set by `buildTeam`). */
export function loadHttpToolSettings(saved: HttpToolSettingsRepository, config: DimsumConfig): HttpTools {
  return new HttpTools(saved, config.tools.fetch.allowPrivateNetwork);
}
