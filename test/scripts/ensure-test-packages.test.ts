import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { CHROMIUM_PATHS, testPackagesPlan } from "../../scripts/ensure-test-packages.mjs";

const SCRIPT = fileURLToPath(new URL("../../scripts/ensure-test-packages.mjs", import.meta.url));
const none = () => false;
const only =
  (...paths: string[]) =>
  (p: string) =>
    paths.includes(p);

describe("npm test's pretest: ensure-test-packages (Chromium and bubblewrap)", () => {
  it("finds Debian's chromium (or the one DIMSUM_CHROMIUM names) and bwrap", () => {
    expect(
      testPackagesPlan({
        overrides: {},
        exists: only("/usr/bin/chromium", "/usr/bin/bwrap"),
        isRoot: false,
        hasApt: true,
      }),
    ).toEqual({ kind: "found" });
    expect(
      testPackagesPlan({
        overrides: { DIMSUM_CHROMIUM: "/opt/c/chrome" },
        exists: only("/opt/c/chrome", "/usr/bin/bwrap"),
        isRoot: false,
        hasApt: false,
      }),
    ).toEqual({ kind: "found" });
  });

  it("installs what is missing in one apt-get only as root on a Debian-like machine", () => {
    expect(testPackagesPlan({ overrides: {}, exists: none, isRoot: true, hasApt: true })).toEqual({
      kind: "install",
      packages: ["chromium", "bubblewrap", "fonts-noto-cjk"],
    });
    expect(
      testPackagesPlan({ overrides: {}, exists: only("/usr/bin/chromium"), isRoot: true, hasApt: true }),
    ).toEqual({ kind: "install", packages: ["bubblewrap", "fonts-noto-cjk"] });
  });

  it("installs the CJK font when it can, and never stops for it", () => {
    const tools = only("/usr/bin/chromium", "/usr/bin/bwrap");
    expect(testPackagesPlan({ overrides: {}, exists: tools, isRoot: true, hasApt: true })).toEqual({
      kind: "install",
      packages: ["fonts-noto-cjk"],
    });
    expect(testPackagesPlan({ overrides: {}, exists: tools, isRoot: false, hasApt: true })).toEqual({
      kind: "found",
    });
    const notRoot = testPackagesPlan({ overrides: {}, exists: none, isRoot: false, hasApt: true });
    expect(notRoot.kind === "stop" && notRoot.message).not.toContain("fonts-noto-cjk");
  });

  it("otherwise stops with the exact command to run", () => {
    const notRoot = testPackagesPlan({
      overrides: {},
      exists: only("/usr/bin/chromium"),
      isRoot: false,
      hasApt: true,
    });
    expect(notRoot.kind).toBe("stop");
    expect(notRoot.kind === "stop" && notRoot.message).toContain(
      "sudo sh -c 'apt-get update && apt-get install -y bubblewrap'",
    );
    expect(notRoot.kind === "stop" && notRoot.message).toContain(
      "bubblewrap was not found at /usr/bin/bwrap",
    );
    const noApt = testPackagesPlan({ overrides: {}, exists: none, isRoot: true, hasApt: false });
    expect(noApt.kind === "stop" && noApt.message).toContain("DIMSUM_CHROMIUM=/path/to/chromium npm test");
    const wrong = testPackagesPlan({
      overrides: { DIMSUM_CHROMIUM: "/nowhere/chromium" },
      exists: none,
      isRoot: true,
      hasApt: true,
    });
    expect(wrong.kind === "stop" && wrong.message).toContain("DIMSUM_CHROMIUM is set to /nowhere/chromium");
  });

  it("as a process: exits 0 when both are there, 1 with the fix when DIMSUM_CHROMIUM points nowhere", () => {
    const ok = spawnSync(process.execPath, [SCRIPT], { encoding: "utf8" });
    expect(CHROMIUM_PATHS.some((p) => existsSync(p))).toBe(true);
    expect(existsSync("/usr/bin/bwrap")).toBe(true);
    expect(ok.status).toBe(0);
    const bad = spawnSync(process.execPath, [SCRIPT], {
      encoding: "utf8",
      env: { ...process.env, DIMSUM_CHROMIUM: "/nowhere/chromium" },
    });
    expect(bad.status).toBe(1);
    expect(bad.stderr).toContain("DIMSUM_CHROMIUM is set to /nowhere/chromium");
  });
});
