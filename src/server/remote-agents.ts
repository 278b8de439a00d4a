/**
 * The remote A2A agents Dimsum's agents may call: those of a2a.json (read once at start, read-only
 * here) and those added in Settings → Remote agents (in the settings store). Runs read `forRuns()` at
 * their start: the list is read from the database once and kept until it changes, here (add, remove,
 * update) or on another instance (`onChanged` tells them, `invalidate` hears it; see instance-sync.ts),
 * so an agent added or removed in Settings is there (or gone) from the next run on, everywhere.
 */
import { A2A_CONFIG_FILE, loadA2aConfig, type RemoteAgentConfig } from "../a2a/remote-config.js";
import { remoteToolName } from "../a2a/remote-tools.js";
import type { DimsumConfig } from "../config/load-config.js";
import { conflict, notFound, toDimsumError } from "../errors.js";
import { CachedRead } from "../shared/cached-read.js";
import type { ServerLog } from "./context.js";
import { withoutCredentials } from "./http/remote-url.js";
import type {
  RemoteAgentInput,
  RemoteAgentPatch,
  RemoteAgentSettingsRepository,
} from "./settings/remote-agent-settings.js";

/** A remote agent as Settings lists it: never its token or headers. */
export interface RemoteAgentView {
  name: string;
  url: string;
  description: string | null;
  /** Whether requests carry a bearer token (a2a.json: an Authorization header). */
  hasToken: boolean;
  enabled: boolean;
  /** `"a2a.json"` (read-only: edit the file) or `"settings"` (removable). */
  source: "a2a.json" | "settings";
  removable: boolean;
}

/** The remote agents of a2a.json and of Settings, as runs and the Settings routes use them. */
export class RemoteAgents {
  /** The list runs read, until it changes; a read that fails is not kept. */
  readonly #forRuns = new CachedRead(() => this.#readForRuns());
  /** Told after each change made here (the other instances then `invalidate` theirs). */
  onChanged: (() => void) | undefined;

  constructor(
    private readonly fromFile: readonly RemoteAgentConfig[],
    private readonly saved: RemoteAgentSettingsRepository,
  ) {}

  /** What a run may call now: a2a.json's, then the enabled Settings ones (a2a.json wins a name). */
  forRuns(): Promise<RemoteAgentConfig[]> {
    return this.#forRuns.get();
  }

  /** Forgets the list runs read (changed on another instance): the next run reads it again. */
  invalidate(): void {
    this.#forRuns.invalidate();
  }

  async #readForRuns(): Promise<RemoteAgentConfig[]> {
    const names = new Set(this.fromFile.map((r) => r.name));
    const saved = (await this.saved.configs()).filter((r) => !names.has(r.name));
    return [...this.fromFile, ...saved];
  }

  /** After a change of the saved agents (even a failed one: it may have half happened). */
  #changed(): void {
    this.invalidate();
    this.onChanged?.();
  }

  /** Every remote agent, a2a.json's first. */
  async list(): Promise<RemoteAgentView[]> {
    const names = new Set(this.fromFile.map((r) => r.name));
    const fileViews: RemoteAgentView[] = this.fromFile.map((r) => ({
      name: r.name,
      url: withoutCredentials(r.url),
      description: r.description ?? null,
      hasToken: Object.keys(r.headers).some((h) => h.toLowerCase() === "authorization"),
      enabled: true,
      source: "a2a.json",
      removable: false,
    }));
    const savedViews: RemoteAgentView[] = (await this.saved.list())
      .filter((r) => !names.has(r.name))
      .map((r) => ({
        name: r.name,
        url: r.url,
        description: r.description ?? null,
        hasToken: r.hasToken,
        enabled: r.enabled,
        source: "settings",
        removable: true,
      }));
    return [...fileViews, ...savedViews];
  }

  /** The agent of that name a run would call, if any. */
  async find(name: string): Promise<RemoteAgentConfig | undefined> {
    return (
      this.fromFile.find((r) => r.name === name) ?? (await this.saved.configs()).find((r) => r.name === name)
    );
  }

  /** Refuses (409) a name a2a.json or Settings already has, or one that would make the same tool. */
  async assertNameFree(name: string): Promise<void> {
    // `a-b` and `a_b` would be one tool (`a2a_a_b`): a clash too.
    const tool = remoteToolName({ name });
    const fromFile = this.fromFile.find((r) => remoteToolName(r) === tool);
    if (fromFile) {
      throw conflict(
        `A remote agent "${fromFile.name}" comes from ${A2A_CONFIG_FILE}`,
        "choose another name",
      );
    }
    const saved = (await this.saved.list()).find((r) => remoteToolName(r) === tool);
    if (saved) throw conflict(`A remote agent "${saved.name}" already exists`, "choose another name");
  }

  /** Saves an agent added in Settings; a name a2a.json or Settings already has is a conflict (409). */
  async add(input: RemoteAgentInput): Promise<RemoteAgentView> {
    await this.assertNameFree(input.name);
    // Checked again in the store's transaction: two admins adding one name at once.
    const added = await this.saved.add(input).finally(() => this.#changed());
    if (!added) {
      throw conflict(
        `A remote agent "${input.name}" already exists`,
        "choose another name, or remove it first",
      );
    }
    const view = (await this.list()).find((r) => r.name === input.name);
    if (!view) throw notFound(`remote agent "${input.name}" was removed meanwhile`);
    return view;
  }

  /** Forgets an agent added in Settings; a2a.json's cannot be removed here (409). */
  async remove(name: string): Promise<void> {
    this.#assertSaved(name, "remove");
    const removed = await this.saved.remove(name).finally(() => this.#changed());
    if (!removed) throw notFound(`No remote agent "${name}"`);
  }

  /** Changes an agent added in Settings (URL, token, description, on or off); a2a.json's: 409. */
  async update(name: string, patch: RemoteAgentPatch): Promise<RemoteAgentView> {
    this.#assertSaved(name, "change");
    const updated = await this.saved.update(name, patch).finally(() => this.#changed());
    if (!updated) throw notFound(`No remote agent "${name}"`);
    const view = (await this.list()).find((r) => r.name === name);
    if (!view) throw notFound(`remote agent "${name}" was removed meanwhile`);
    return view;
  }

  #assertSaved(name: string, verb: string): void {
    if (this.fromFile.some((r) => r.name === name)) {
      throw conflict(
        `The remote agent "${name}" comes from ${A2A_CONFIG_FILE}`,
        `${verb} it in ${A2A_CONFIG_FILE} and restart`,
      );
    }
  }
}

/**
 * The server's remote agents: a2a.json (home and working directory; none, with a warning, when it is
 * broken) and those saved in `saved`.
 */
export function loadRemoteAgents(
  config: DimsumConfig,
  cwd: string,
  log: ServerLog,
  saved: RemoteAgentSettingsRepository,
): RemoteAgents {
  let fromFile: RemoteAgentConfig[] = [];
  try {
    fromFile = loadA2aConfig({ home: config.home, cwd, env: config.env });
    if (fromFile.length > 0) log.info(`A2A agents: ${fromFile.map((r) => r.name).join(", ")}`);
  } catch (err) {
    log.warn(`A2A agents of ${A2A_CONFIG_FILE} are unavailable: ${toDimsumError(err).toLine()}`);
  }
  return new RemoteAgents(fromFile, saved);
}
