/**
 * The environment of a command: only allow-listed variables (resolved from the configuration),
 * HOME pointing at the workspace, and settings that keep tools from waiting for a terminal.
 * Nothing else of Dimsum's environment (keys, tokens) is passed on.
 */

/** Names passed through from Dimsum's environment when set (the configuration may add more). */
export const DEFAULT_ENV_ALLOW: readonly string[] = ["PATH", "LANG", "LC_ALL", "LC_CTYPE", "TERM", "TZ"];
/** PATH when Dimsum's own is unset. */
export const DEFAULT_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

/** Picks the allowed names' values out of an environment (used once, where configuration loads). */
export function allowedEnv(
  source: Readonly<Record<string, string | undefined>>,
  names: readonly string[],
): Record<string, string> {
  const env: Record<string, string> = {};
  for (const name of names) {
    const value = source[name];
    if (value !== undefined) env[name] = value;
  }
  env.PATH ??= DEFAULT_PATH;
  return env;
}

/** The full environment of one command. */
export function commandEnv(
  allowed: Readonly<Record<string, string>>,
  workspace: string,
): Record<string, string> {
  return {
    ...allowed,
    HOME: workspace,
    TMPDIR: "/tmp",
    PAGER: "cat",
    GIT_PAGER: "cat",
    GIT_TERMINAL_PROMPT: "0",
  };
}
