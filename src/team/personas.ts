/**
 * Agent personas: `<home>/agents/<id>/SOUL.md`, read whole as the agent's persona section. The file is
 * the source of truth (people may edit it by hand), so it is read fresh for every run and never copied
 * into the database or any search index. Ids are validated slugs, so paths cannot leave the folder.
 */
import { mkdir, readFile, rename, rm, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { DimsumError } from "../errors.js";
import type { SoulFile } from "./types.js";

export const SOUL_FILE_NAME = "SOUL.md";
const AGENT_ID = /^[a-z0-9][a-z0-9_-]{0,39}$/;

/** Where agents' personas are kept: SOUL.md files (one instance), or the shared database. */
export interface PersonaStore {
  /** The persona with its status: `missing` (none), `empty` (only whitespace) or `ok`. */
  read(agentId: string): Promise<SoulFile>;
  write(agentId: string, content: string): Promise<SoulFile>;
  /** Writes the persona only when there is none yet (starter agents never overwrite edits). */
  writeIfMissing(agentId: string, content: string): Promise<void>;
  remove(agentId: string): Promise<void>;
}

/** A persona's status from its content. */
export function soulOf(agentId: string, content: string | undefined): SoulFile {
  if (content === undefined) return { agentId, content: "", status: "missing" };
  return { agentId, content, status: content.trim() === "" ? "empty" : "ok" };
}

/** Reads and writes agents' SOUL.md files under one home folder. */
export class PersonaFiles implements PersonaStore {
  readonly #root: string;
  readonly #cache = new Map<string, { mtimeMs: number; size: number; soul: SoulFile }>();

  constructor(home: string) {
    this.#root = join(home, "agents");
  }

  /** The SOUL.md path of an agent. */
  pathOf(agentId: string): string {
    if (!AGENT_ID.test(agentId)) {
      throw new DimsumError("internal", `Refusing a persona path for the bad agent id "${agentId}".`);
    }
    return join(this.#root, agentId, SOUL_FILE_NAME);
  }

  /**
   * The persona with its status: `missing` (no file), `empty` (only whitespace) or `ok`. Read for
   * every run so edits apply at once, but only re-read from disk when the file changed.
   */
  async read(agentId: string): Promise<SoulFile> {
    const path = this.pathOf(agentId);
    let content: string;
    try {
      const info = await stat(path);
      const cached = this.#cache.get(agentId);
      if (cached && cached.mtimeMs === info.mtimeMs && cached.size === info.size) return cached.soul;
      content = await readFile(path, "utf8");
      const soul: SoulFile = { agentId, content, status: content.trim() === "" ? "empty" : "ok" };
      this.#cache.set(agentId, { mtimeMs: info.mtimeMs, size: info.size, soul });
      return soul;
    } catch (err) {
      this.#cache.delete(agentId);
      if ((err as NodeJS.ErrnoException).code === "ENOENT") {
        return { agentId, content: "", status: "missing" };
      }
      throw personaError(err, path, "read");
    }
  }

  /** Writes the persona atomically (temp file, then rename) so a run never reads half a file. */
  async write(agentId: string, content: string): Promise<SoulFile> {
    const path = this.pathOf(agentId);
    const temp = `${path}.${process.pid}.${Date.now()}.tmp`;
    try {
      await mkdir(join(this.#root, agentId), { recursive: true });
      await writeFile(temp, content, "utf8");
      await rename(temp, path);
      this.#cache.delete(agentId);
    } catch (err) {
      await rm(temp, { force: true }).catch(() => undefined);
      throw personaError(err, path, "write");
    }
    return { agentId, content, status: content.trim() === "" ? "empty" : "ok" };
  }

  /** Writes the persona only when no file exists yet (starter agents never overwrite edits). */
  async writeIfMissing(agentId: string, content: string): Promise<void> {
    if ((await this.read(agentId)).status === "missing") await this.write(agentId, content);
  }

  /** Removes the agent's folder with its persona. */
  async remove(agentId: string): Promise<void> {
    this.#cache.delete(agentId);
    await rm(join(this.#root, agentId), { recursive: true, force: true });
  }
}

function personaError(err: unknown, path: string, action: string): DimsumError {
  const detail = err instanceof Error ? err.message : String(err);
  return new DimsumError("config", `Could not ${action} the persona file ${path}: ${detail}`, {
    hint: "check that DIMSUM_HOME is writable",
    cause: err,
  });
}
