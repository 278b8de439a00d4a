/**
 * share_file's checks before anything is stored: a path outside the workspace (also through a link),
 * a missing file, a file over the attachment limits and a kind chats do not take are refused with
 * what to do; a good file is stored under its name and returned as the result's file.
 */
import { symlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { DEFAULT_ATTACHMENT_LIMITS } from "../../src/attachments/kinds.js";
import { createShareFileTool, mayShareFiles } from "../../src/team/share-file-tool.js";
import type { ToolFile } from "../../src/tools/types.js";
import { makeContext, makeTempDir, removeTempDir, runTool, textOf } from "../tools/builtin/context.js";

let workspace: string;
let outside: string;
let stored: Array<{ name: string; mimeType: string; data: Buffer }>;

const tool = () =>
  createShareFileTool({
    limits: { ...DEFAULT_ATTACHMENT_LIMITS, textBytes: 64 },
    put: async (file): Promise<ToolFile> => {
      stored.push(file);
      return { id: "f1", name: file.name, mimeType: file.mimeType, kind: file.kind, size: file.data.length };
    },
  });

beforeEach(async () => {
  workspace = await makeTempDir("dimsum-share-");
  outside = await makeTempDir("dimsum-share-outside-");
  stored = [];
});
afterEach(async () => {
  await removeTempDir(workspace);
  await removeTempDir(outside);
});

describe("share_file", () => {
  it("stores a workspace file under its name (or the one given) and returns it as the result's file", async () => {
    await writeFile(join(workspace, "notes.md"), "# Notes\n");
    const result = await runTool(
      tool(),
      { path: "notes.md", name: "weekly notes.md" },
      makeContext(workspace),
    );
    expect(result.isError).toBeUndefined();
    expect(result.file).toMatchObject({ name: "weekly notes.md", size: 8 });
    expect(textOf(result)).toContain("Shared weekly notes.md");
    expect(stored.map((f) => f.data.toString("utf8"))).toEqual(["# Notes\n"]);
  });

  it("refuses paths outside the workspace, missing files, files over the limits and other kinds", async () => {
    await writeFile(join(outside, "secret.txt"), "secret");
    await symlink(join(outside, "secret.txt"), join(workspace, "link.txt"));
    await writeFile(join(workspace, "big.txt"), "x".repeat(100));
    await writeFile(
      join(workspace, "tool.exe"),
      Buffer.from([0x4d, 0x5a, 0x90, 0x00, 0x03, 0x00, 0xff, 0xfe]),
    );
    const ctx = makeContext(workspace);
    const cases: Array<[string, RegExp]> = [
      ["../secret.txt", /outside the workspace/],
      ["link.txt", /outside the workspace/],
      ["missing.md", /no file missing\.md/],
      ["big.txt", /big\.txt/],
      ["tool.exe", /tool\.exe/],
    ];
    for (const [path, why] of cases) {
      await expect(runTool(tool(), { path }, ctx), path).rejects.toThrow(why);
    }
    expect(stored).toEqual([]);
  });

  it("is offered to agents that may read their workspace only", () => {
    expect(mayShareFiles({ toolsDeny: [] })).toBe(true);
    expect(mayShareFiles({ toolsAllow: ["read_file"], toolsDeny: [] })).toBe(true);
    expect(mayShareFiles({ toolsAllow: ["web_search"], toolsDeny: [] })).toBe(false);
    expect(mayShareFiles({ toolsDeny: ["read_file"] })).toBe(false);
    expect(mayShareFiles({ toolsDeny: ["share_file"] })).toBe(false);
  });
});
