#!/usr/bin/env node
/**
 * `npm test`'s pretest step: the system packages the suite drives for real and npm cannot bring.
 * - Chromium: the web UI's browser tests drive it (playwright-core never downloads one);
 *   `DIMSUM_CHROMIUM`, else Debian's /usr/bin/chromium.
 * - bubblewrap: `execute_command` runs in its sandbox, which the shell and `dimsum serve` tests
 *   exercise; /usr/bin/bwrap.
 * - Noto CJK (optional): Chinese text in the browser tests' screenshots, instead of empty boxes;
 *   installed with the others when apt-get can run, never a reason to stop.
 * Whatever is missing on a Debian-like machine, when this runs as root, comes in one apt-get
 * install; otherwise it stops with the exact command to run. Plain JavaScript: it runs before the
 * build.
 */
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { pathToFileURL } from "node:url";

/** @typedef {{ name: string, debianPackage: string, paths: string[], overrideVar?: string, neededBy: string, optional?: boolean }} TestPackage */

/** @type {TestPackage[]} */
export const TEST_PACKAGES = [
  {
    name: "Chromium",
    debianPackage: "chromium",
    paths: ["/usr/bin/chromium", "/usr/bin/chromium-browser"],
    overrideVar: "DIMSUM_CHROMIUM",
    neededBy: "the web UI's browser tests",
  },
  {
    name: "bubblewrap",
    debianPackage: "bubblewrap",
    paths: ["/usr/bin/bwrap"],
    neededBy: "the shell sandbox and `dimsum serve` tests",
  },
  {
    name: "Noto CJK fonts",
    debianPackage: "fonts-noto-cjk",
    paths: ["/usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc"],
    neededBy: "screenshots of the Chinese web UI",
    optional: true,
  },
];

export const CHROMIUM_PATHS = TEST_PACKAGES[0].paths;

/** The apt command that installs these Debian packages. */
export function aptInstall(packages) {
  return `apt-get update && apt-get install -y ${packages.join(" ")}`;
}
export const APT_INSTALL = aptInstall(TEST_PACKAGES.map((p) => p.debianPackage));

/**
 * What to do, from the facts: `{ kind: "found" }`, `{ kind: "install", packages }` (apt-get as
 * root), or `{ kind: "stop", message }` with what a person has to run.
 * @param {{ overrides: Record<string, string | undefined>, exists: (path: string) => boolean, isRoot: boolean, hasApt: boolean }} facts
 * @param {TestPackage[]} [packages]
 * @returns {{ kind: "found" } | { kind: "install", packages: string[] } | { kind: "stop", message: string }}
 */
export function testPackagesPlan({ overrides, exists, isRoot, hasApt }, packages = TEST_PACKAGES) {
  const problems = [];
  const missing = [];
  for (const pkg of packages) {
    const override = pkg.overrideVar ? overrides[pkg.overrideVar] : undefined;
    if (override) {
      if (!exists(override)) {
        problems.push(
          `${pkg.overrideVar} is set to ${override}, which does not exist; point it at a ${pkg.name} binary or unset it.`,
        );
      }
      continue;
    }
    if (pkg.paths.some(exists)) continue;
    missing.push(pkg);
  }
  if (problems.length > 0) return { kind: "stop", message: problems.join("\n") };
  if (missing.length === 0) return { kind: "found" };
  if (hasApt && isRoot) return { kind: "install", packages: missing.map((p) => p.debianPackage) };
  // Without apt-get as root, only what the tests cannot run without is worth stopping for.
  missing.splice(0, missing.length, ...missing.filter((p) => !p.optional));
  if (missing.length === 0) return { kind: "found" };
  const lead = missing
    .map((p) => `${p.name} was not found at ${p.paths.join(" or ")}; ${p.neededBy} need it.`)
    .join("\n");
  if (hasApt) {
    const cmd = aptInstall(missing.map((p) => p.debianPackage));
    const alt = missing.some((p) => p.overrideVar)
      ? `\n\nor point ${missing.flatMap((p) => (p.overrideVar ? [p.overrideVar] : [])).join(", ")} at the binary.`
      : "";
    return {
      kind: "stop",
      message: `${lead}\nInstall the Debian package${missing.length > 1 ? "s" : ""}, then run npm test again:\n\n  sudo sh -c '${cmd}'${alt}`,
    };
  }
  const hints = missing.map((p) =>
    p.overrideVar
      ? `  ${p.name}: install it with your system's package manager, or run DIMSUM_CHROMIUM=/path/to/chromium npm test`
      : `  ${p.name}: install it with your system's package manager (the binary must be at ${p.paths[0]})`,
  );
  return { kind: "stop", message: `${lead}\n${hints.join("\n")}` };
}

function hasCommand(name) {
  return spawnSync("sh", ["-c", `command -v ${name}`], { stdio: "ignore" }).status === 0;
}

function main() {
  const facts = {
    overrides: { DIMSUM_CHROMIUM: process.env.DIMSUM_CHROMIUM || undefined },
    exists: existsSync,
    isRoot: typeof process.getuid === "function" && process.getuid() === 0,
    hasApt: process.platform === "linux" && hasCommand("apt-get"),
  };
  const plan = testPackagesPlan(facts);
  if (plan.kind === "found") return 0;
  if (plan.kind === "stop") {
    process.stderr.write(`ensure-test-packages: ${plan.message}\n`);
    return 1;
  }
  const command = aptInstall(plan.packages);
  process.stderr.write(
    `ensure-test-packages: installing Debian's ${plan.packages.join(", ")} (${command})\n`,
  );
  const env = { ...process.env, DEBIAN_FRONTEND: "noninteractive" };
  for (const args of [
    ["update", "-qq"],
    ["install", "-y", "-qq", ...plan.packages],
  ]) {
    const result = spawnSync("apt-get", args, { stdio: "inherit", env });
    if (result.status !== 0) {
      process.stderr.write(
        `ensure-test-packages: apt-get ${args.join(" ")} failed; run \`${command}\` yourself.\n`,
      );
      return 1;
    }
  }
  const after = testPackagesPlan({ ...facts, isRoot: false });
  if (after.kind === "found") return 0;
  process.stderr.write(
    `ensure-test-packages: apt-get ran, yet: ${after.kind === "stop" ? after.message : ""}\n`,
  );
  return 1;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) process.exitCode = main();
