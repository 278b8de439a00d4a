import { mkdir, symlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { DimsumError } from "../../../src/errors.js";
import { isInside, resolveInWorkspace } from "../../../src/tools/builtin/workspace-path.js";
import { makeTempDir, removeTempDir } from "./context.js";

let workspace: string;
let outside: string;

beforeEach(async () => {
  workspace = await makeTempDir("dimsum-ws-");
  outside = await makeTempDir("dimsum-outside-");
  await writeFile(join(outside, "secret.txt"), "top secret\n");
  await mkdir(join(workspace, "src"));
});

afterEach(async () => {
  await removeTempDir(workspace);
  await removeTempDir(outside);
});

async function refusal(userPath: string): Promise<DimsumError> {
  const err = await resolveInWorkspace(workspace, userPath).catch((e: unknown) => e);
  expect(err).toBeInstanceOf(DimsumError);
  return err as DimsumError;
}

describe("resolveInWorkspace", () => {
  it("resolves relative paths against the workspace", async () => {
    expect(await resolveInWorkspace(workspace, "src/a.ts")).toBe(join(workspace, "src/a.ts"));
    expect(await resolveInWorkspace(workspace, ".")).toBe(workspace);
    expect(await resolveInWorkspace(workspace, "src/../b.txt")).toBe(join(workspace, "b.txt"));
  });

  it("accepts absolute paths inside the workspace", async () => {
    expect(await resolveInWorkspace(workspace, join(workspace, "src"))).toBe(join(workspace, "src"));
  });

  it("refuses .. escapes and absolute paths outside, naming path and workspace", async () => {
    const err = await refusal("../x.txt");
    expect(err.message).toBe(`path ../x.txt is outside the workspace ${workspace}`);
    expect(err.code).toBe("tool_failed");
    expect((await refusal("/etc/passwd")).message).toContain("/etc/passwd is outside the workspace");
    expect((await refusal("src/../../escape")).message).toContain("outside the workspace");
  });

  it("refuses a symlink that points outside, for existing and new files beneath it", async () => {
    await symlink(outside, join(workspace, "link"));
    expect((await refusal("link/secret.txt")).message).toContain("outside the workspace");
    expect((await refusal("link/new-file.txt")).message).toContain("outside the workspace");
    expect((await refusal("link/new-dir/deeper/file.txt")).message).toContain("outside the workspace");
    expect((await refusal("link")).message).toContain("outside the workspace");
  });

  it("refuses a dangling symlink whose target is outside", async () => {
    await symlink(join(outside, "not-yet.txt"), join(workspace, "dangling"));
    expect((await refusal("dangling")).message).toContain("outside the workspace");
  });

  it("follows symlinks that stay inside the workspace to their real target", async () => {
    await writeFile(join(workspace, "src/real.txt"), "x");
    await symlink(join(workspace, "src"), join(workspace, "alias"));
    expect(await resolveInWorkspace(workspace, "alias/real.txt")).toBe(join(workspace, "src/real.txt"));
  });

  it("refuses empty paths and NUL bytes", async () => {
    expect((await refusal("  ")).message).toContain("empty");
    expect((await refusal("a\0b")).message).toContain("NUL");
  });
});

describe("isInside", () => {
  it("does not treat a sibling with a common prefix as inside", () => {
    expect(isInside("/a/work", "/a/work/x")).toBe(true);
    expect(isInside("/a/work", "/a/work")).toBe(true);
    expect(isInside("/a/work", "/a/workshop/x")).toBe(false);
    expect(isInside("/a/work", "/a")).toBe(false);
  });
});
