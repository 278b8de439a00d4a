#!/usr/bin/env node
/**
 * `npm test`'s pretest step: the web UI's browser tests drive a real Chromium (playwright-core never
 * downloads one). Finds it (`DIMSUM_CHROMIUM`, else Debian's /usr/bin/chromium); when it is missing
 * on a Debian-like machine and this runs as root, installs Debian's `chromium` with apt-get;
 * otherwise stops with the exact command to run. Plain JavaScript: it runs before the build.
 */
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { pathToFileURL } from "node:url";

export const CHROMIUM_PATHS = ["/usr/bin/chromium", "/usr/bin/chromium-browser"];
export const APT_INSTALL = "apt-get update && apt-get install -y chromium";

/**
 * What to do, from the facts: `{ kind: "found", path }`, `{ kind: "install" }` (apt-get as root), or
 * `{ kind: "stop", message }` with the command a person has to run.
 * @param {{ override?: string | undefined, exists: (path: string) => boolean, isRoot: boolean, hasApt: boolean }} facts
 * @returns {{ kind: "found", path: string } | { kind: "install" } | { kind: "stop", message: string }}
 */
export function chromiumPlan({ override, exists, isRoot, hasApt }) {
  if (override) {
    if (exists(override)) return { kind: "found", path: override };
    return {
      kind: "stop",
      message: `DIMSUM_CHROMIUM is set to ${override}, which does not exist; point it at a Chromium binary or unset it.`,
    };
  }
  const found = CHROMIUM_PATHS.find(exists);
  if (found) return { kind: "found", path: found };
  if (hasApt && isRoot) return { kind: "install" };
  const lead = `Chromium was not found at ${CHROMIUM_PATHS.join(" or ")}; the web UI's browser tests need it.`;
  if (hasApt) {
    return {
      kind: "stop",
      message: `${lead}\nInstall Debian's chromium, then run npm test again:\n\n  sudo sh -c '${APT_INSTALL}'\n\nor point DIMSUM_CHROMIUM at a Chromium binary.`,
    };
  }
  return {
    kind: "stop",
    message: `${lead}\nInstall Chromium with your system's package manager, then run:\n\n  DIMSUM_CHROMIUM=/path/to/chromium npm test`,
  };
}

function hasCommand(name) {
  return spawnSync("sh", ["-c", `command -v ${name}`], { stdio: "ignore" }).status === 0;
}

function main() {
  const facts = {
    override: process.env.DIMSUM_CHROMIUM || undefined,
    exists: existsSync,
    isRoot: typeof process.getuid === "function" && process.getuid() === 0,
    hasApt: process.platform === "linux" && hasCommand("apt-get"),
  };
  const plan = chromiumPlan(facts);
  if (plan.kind === "found") return 0;
  if (plan.kind === "stop") {
    process.stderr.write(`ensure-chromium: ${plan.message}\n`);
    return 1;
  }
  process.stderr.write(
    `ensure-chromium: Chromium is missing; installing Debian's chromium (${APT_INSTALL})\n`,
  );
  const env = { ...process.env, DEBIAN_FRONTEND: "noninteractive" };
  for (const args of [
    ["update", "-qq"],
    ["install", "-y", "-qq", "chromium"],
  ]) {
    const result = spawnSync("apt-get", args, { stdio: "inherit", env });
    if (result.status !== 0) {
      process.stderr.write(
        `ensure-chromium: apt-get ${args.join(" ")} failed; run \`${APT_INSTALL}\` yourself.\n`,
      );
      return 1;
    }
  }
  const after = chromiumPlan({ ...facts, isRoot: false });
  if (after.kind === "found") return 0;
  process.stderr.write(`ensure-chromium: apt-get installed chromium, yet ${CHROMIUM_PATHS[0]} is missing.\n`);
  return 1;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) process.exitCode = main();
