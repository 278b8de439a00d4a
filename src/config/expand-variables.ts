/** `${VAR}` and `${VAR:-default}` in config values, so tokens stay in the environment, not in files. */

const VARIABLE = /\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g;

/**
 * Replaces every `${VAR}` with its value from `env`. Unset names without a default become empty
 * strings and are added to `missing`, so the caller can report them all at once.
 */
export function expandVariables(
  text: string,
  env: Readonly<Record<string, string | undefined>>,
  missing: Set<string>,
): string {
  return text.replace(VARIABLE, (_match, name: string, fallback: string | undefined) => {
    const value = env[name];
    if (value !== undefined && value !== "") return value;
    if (fallback !== undefined) return fallback;
    missing.add(name);
    return "";
  });
}
