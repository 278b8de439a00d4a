/**
 * `a2a.json`: remote A2A agents Dimsum's agents may call, next to mcp.json (in DIMSUM_HOME and the
 * working directory; the project's entries override the home's of the same name):
 *   {"agents": {"research": {"url": "https://host/a2a/research", "token": "${RESEARCH_TOKEN}",
 *                            "headers": {"X-Team": "docs"}, "description": "..."}}}
 * `url` is the agent's card (`…/agent-card.json`) or the base its `/.well-known/agent-card.json` is
 * under. `token` is sent as `Authorization: Bearer`. `${VAR}` (and `${VAR:-default}`) in values come
 * from the environment, so secrets stay out of the file.
 */
import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import * as z from "zod";
import { expandVariables } from "../config/expand-variables.js";
import { parseConfigJson } from "../config/parse-config-json.js";
import { DimsumError } from "../errors.js";

export const A2A_CONFIG_FILE = "a2a.json";

export interface RemoteAgentConfig {
  /** The name agents know it by: its tool is `a2a_<name>`. */
  name: string;
  url: string;
  /** Sent with every request (the token as `Authorization: Bearer …`); secrets: never logged or shown. */
  headers: Record<string, string>;
  description?: string;
  /** The file it came from, for messages. */
  source: string;
}

const NAME = /^[a-z0-9][a-z0-9_-]{0,39}$/;

const entrySchema = z.object({
  url: z.string().min(1),
  token: z.string().optional(),
  headers: z.record(z.string(), z.string()).optional(),
  description: z.string().optional(),
  enabled: z.boolean().optional(),
});
const fileSchema = z.object({ agents: z.record(z.string(), entrySchema) });

/** Parses one a2a.json text; `file` names it in errors. */
export function parseA2aConfig(
  text: string,
  file: string,
  env: Readonly<Record<string, string | undefined>>,
): RemoteAgentConfig[] {
  const json = parseConfigJson(text, `A2A config ${file}`);
  const parsed = fileSchema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new DimsumError(
      "config",
      `A2A config ${file}: ${issue?.path.join(".") || "file"}: ${issue?.message ?? "invalid"}`,
      { hint: 'write {"agents": {"<name>": {"url": "https://…"}}}' },
    );
  }
  const out: RemoteAgentConfig[] = [];
  for (const [name, entry] of Object.entries(parsed.data.agents)) {
    if (entry.enabled === false) continue;
    if (!NAME.test(name)) {
      throw new DimsumError("config", `A2A config ${file}: "${name}" is not a usable agent name`, {
        hint: "use lowercase letters, digits, - and _ (up to 40)",
      });
    }
    const missing = new Set<string>();
    const url = expandVariables(entry.url, env, missing);
    const headers: Record<string, string> = {};
    for (const [key, value] of Object.entries(entry.headers ?? {}))
      headers[key] = expandVariables(value, env, missing);
    if (entry.token !== undefined)
      headers.authorization = `Bearer ${expandVariables(entry.token, env, missing)}`;
    if (missing.size > 0) {
      throw new DimsumError(
        "config",
        `A2A config ${file}: agent "${name}" needs ${[...missing].join(", ")}`,
        {
          hint: "set those environment variables (or in .env)",
        },
      );
    }
    try {
      new URL(url);
    } catch {
      throw new DimsumError("config", `A2A config ${file}: agent "${name}" has no valid url (${url})`, {
        hint: "give the agent's card URL or its base URL, e.g. https://host/a2a/research",
      });
    }
    out.push({
      name,
      url,
      headers,
      ...(entry.description ? { description: entry.description } : {}),
      source: file,
    });
  }
  return out;
}

/** The remote agents of `<home>/a2a.json` and `<cwd>/a2a.json` (the latter wins per name). */
export function loadA2aConfig(options: {
  home: string;
  cwd: string;
  env: Readonly<Record<string, string | undefined>>;
}): RemoteAgentConfig[] {
  const homeFile = join(options.home, A2A_CONFIG_FILE);
  const cwdFile = join(options.cwd, A2A_CONFIG_FILE);
  const files = resolve(homeFile) === resolve(cwdFile) ? [homeFile] : [homeFile, cwdFile];
  const byName = new Map<string, RemoteAgentConfig>();
  for (const file of files) {
    let text: string;
    try {
      text = readFileSync(file, "utf8");
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === "ENOENT") continue;
      throw new DimsumError("config", `cannot read ${file}: ${(err as Error).message}`);
    }
    for (const agent of parseA2aConfig(text, file, options.env)) byName.set(agent.name, agent);
  }
  return [...byName.values()];
}
