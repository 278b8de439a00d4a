import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { APT_INSTALL, CHROMIUM_PATHS, chromiumPlan } from "../../scripts/ensure-chromium.mjs";

const SCRIPT = fileURLToPath(new URL("../../scripts/ensure-chromium.mjs", import.meta.url));
const none = () => false;

describe("npm test's pretest: ensure-chromium", () => {
  it("finds Debian's chromium, or the one DIMSUM_CHROMIUM names", () => {
    expect(chromiumPlan({ exists: (p) => p === "/usr/bin/chromium", isRoot: false, hasApt: true })).toEqual({
      kind: "found",
      path: "/usr/bin/chromium",
    });
    expect(
      chromiumPlan({
        override: "/opt/c/chrome",
        exists: (p) => p === "/opt/c/chrome",
        isRoot: false,
        hasApt: false,
      }),
    ).toEqual({ kind: "found", path: "/opt/c/chrome" });
  });

  it("installs it with apt-get only when missing and running as root on a Debian-like machine", () => {
    expect(chromiumPlan({ exists: none, isRoot: true, hasApt: true })).toEqual({ kind: "install" });
  });

  it("otherwise stops with the exact command to run", () => {
    const notRoot = chromiumPlan({ exists: none, isRoot: false, hasApt: true });
    expect(notRoot.kind).toBe("stop");
    expect(notRoot.kind === "stop" && notRoot.message).toContain(`sudo sh -c '${APT_INSTALL}'`);
    const noApt = chromiumPlan({ exists: none, isRoot: true, hasApt: false });
    expect(noApt.kind === "stop" && noApt.message).toContain("DIMSUM_CHROMIUM=/path/to/chromium npm test");
    const wrong = chromiumPlan({ override: "/nowhere/chromium", exists: none, isRoot: true, hasApt: true });
    expect(wrong.kind === "stop" && wrong.message).toContain("DIMSUM_CHROMIUM is set to /nowhere/chromium");
  });

  it("as a process: exits 0 when the browser is there, 1 with the fix when DIMSUM_CHROMIUM points nowhere", () => {
    const ok = spawnSync(process.execPath, [SCRIPT], { encoding: "utf8" });
    expect(CHROMIUM_PATHS.some((p) => existsSync(p))).toBe(true);
    expect(ok.status).toBe(0);
    const bad = spawnSync(process.execPath, [SCRIPT], {
      encoding: "utf8",
      env: { ...process.env, DIMSUM_CHROMIUM: "/nowhere/chromium" },
    });
    expect(bad.status).toBe(1);
    expect(bad.stderr).toContain("DIMSUM_CHROMIUM is set to /nowhere/chromium");
  });
});
