/**
 * Resolves configuration once, at the edge, into a plain typed object: env vars, `.env`, and the
 * optional config file (`DIMSUM_CONFIG`, else `./dimsum.config.json`, else `$DIMSUM_HOME/config.json`).
 */
import { homedir } from "node:os";
import { join, resolve } from "node:path";
import { defaultToolsConfig } from "../tools/builtin/defaults.js";
import type { ToolsConfig } from "../tools/types.js";
import { type ConfigFile, emptyConfigFile, readConfigFile } from "./config-file.js";
import { type EnvMap, loadEnv } from "./env.js";

export interface DimsumConfig {
  /** Data directory (`DIMSUM_HOME`, default `~/.dimsum`). */
  home: string;
  /** Default `provider:model` (`DIMSUM_MODEL`, then the config file). */
  defaultModel: string | undefined;
  maxIterations: number;
  env: EnvMap;
  file: ConfigFile;
  /** Path of the config file that was read, if any. */
  configPath: string | undefined;
  tools: ToolsConfig;
}

export interface LoadConfigOptions {
  cwd?: string;
  env?: EnvMap;
}

/** Loads the whole configuration for one process. Throws DimsumError('config') naming the bad file. */
export function loadConfig(options: LoadConfigOptions = {}): DimsumConfig {
  const cwd = options.cwd ?? process.cwd();
  const env = loadEnv(cwd, options.env ?? process.env);
  const home = resolve(cwd, env.DIMSUM_HOME || join(homedir(), ".dimsum"));
  const candidates = env.DIMSUM_CONFIG
    ? [resolve(cwd, env.DIMSUM_CONFIG)]
    : [join(cwd, "dimsum.config.json"), join(home, "config.json")];
  let file: ConfigFile | undefined;
  let configPath: string | undefined;
  for (const path of candidates) {
    file = readConfigFile(path);
    if (file) {
      configPath = path;
      break;
    }
  }
  file ??= emptyConfigFile();
  return {
    home,
    defaultModel: env.DIMSUM_MODEL || file.defaultModel,
    maxIterations: file.maxIterations ?? 10,
    env,
    file,
    configPath,
    tools: toolsConfigFrom(file),
  };
}

/** Tool policy: deny/confirm rules from the file extend the safe defaults; `allow` replaces them. */
function toolsConfigFrom(file: ConfigFile): ToolsConfig {
  const defaults = defaultToolsConfig();
  const shell = file.tools.shell;
  const fetch = file.tools.fetch;
  return {
    shell: {
      allow: shell.allow ?? defaults.shell.allow,
      deny: [...defaults.shell.deny, ...(shell.deny ?? [])],
      confirm: [...defaults.shell.confirm, ...(shell.confirm ?? [])],
      timeoutMs: shell.timeoutSeconds ? shell.timeoutSeconds * 1000 : defaults.shell.timeoutMs,
      maxOutputBytes: shell.maxOutputBytes ?? defaults.shell.maxOutputBytes,
    },
    fetch: {
      allowPrivateNetwork: fetch.allowPrivateNetwork ?? defaults.fetch.allowPrivateNetwork,
      timeoutMs: fetch.timeoutSeconds ? fetch.timeoutSeconds * 1000 : defaults.fetch.timeoutMs,
      maxBytes: fetch.maxBytes ?? defaults.fetch.maxBytes,
    },
  };
}
