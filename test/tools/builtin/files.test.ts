import { chmod, mkdir, readdir, readFile, stat, symlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  editFileTool,
  listDirectoryTool,
  MAX_FILE_BYTES,
  readFileTool,
  writeFileTool,
} from "../../../src/tools/builtin/files.js";
import type { ToolContext } from "../../../src/tools/types.js";
import { makeContext, makeTempDir, removeTempDir, runTool, textOf } from "./context.js";

let workspace: string;
let outside: string;
let ctx: ToolContext;

beforeEach(async () => {
  workspace = await makeTempDir("dimsum-files-");
  outside = await makeTempDir("dimsum-outside-");
  ctx = makeContext(workspace);
});

afterEach(async () => {
  await removeTempDir(workspace);
  await removeTempDir(outside);
});

const lines = (n: number) => Array.from({ length: n }, (_, i) => `line ${i + 1}`).join("\n");

describe("read_file", () => {
  it("returns numbered lines", async () => {
    await writeFile(join(workspace, "a.txt"), "alpha\nbeta\ngamma\n");
    const result = await runTool(readFileTool, { path: "a.txt" }, ctx);
    expect(result.isError).toBeUndefined();
    expect(textOf(result)).toBe("   1\talpha\n   2\tbeta\n   3\tgamma");
  });

  it("reads a window and says how many lines remain", async () => {
    await writeFile(join(workspace, "long.txt"), lines(1000));
    const result = await runTool(readFileTool, { path: "long.txt", startLine: 10, maxLines: 5 }, ctx);
    const text = textOf(result);
    expect(text.split("\n").slice(0, 5)).toEqual([
      "  10\tline 10",
      "  11\tline 11",
      "  12\tline 12",
      "  13\tline 13",
      "  14\tline 14",
    ]);
    expect(text).toContain("showing lines 10-14 of 1000; 986 more lines, continue with startLine 15");
  });

  it("caps at 400 lines by default", async () => {
    await writeFile(join(workspace, "long.txt"), lines(1000));
    const text = textOf(await runTool(readFileTool, { path: "long.txt" }, ctx));
    expect(text).toContain(" 400\tline 400");
    expect(text).not.toContain("line 401");
    expect(text).toContain("600 more lines");
  });

  it("honours endLine and rejects a start past the end", async () => {
    await writeFile(join(workspace, "a.txt"), lines(20));
    const text = textOf(await runTool(readFileTool, { path: "a.txt", startLine: 3, endLine: 4 }, ctx));
    expect(text.split("\n").slice(0, 2)).toEqual(["   3\tline 3", "   4\tline 4"]);
    const past = await runTool(readFileTool, { path: "a.txt", startLine: 50 }, ctx);
    expect(past.isError).toBe(true);
    expect(textOf(past)).toContain("has 20 lines");
  });

  it("refuses binary files, folders, missing and oversized files with a clear message", async () => {
    await writeFile(join(workspace, "bin.dat"), Buffer.from([0x50, 0x4b, 0x00, 0x01]));
    const binary = await runTool(readFileTool, { path: "bin.dat" }, ctx);
    expect(binary.isError).toBe(true);
    expect(textOf(binary)).toContain("binary");

    await mkdir(join(workspace, "dir"));
    expect(textOf(await runTool(readFileTool, { path: "dir" }, ctx))).toContain("is a directory");
    expect(textOf(await runTool(readFileTool, { path: "nope.txt" }, ctx))).toContain("does not exist");

    await writeFile(join(workspace, "big.txt"), Buffer.alloc(MAX_FILE_BYTES + 1, 0x61));
    const big = await runTool(readFileTool, { path: "big.txt" }, ctx);
    expect(big.isError).toBe(true);
    expect(textOf(big)).toContain("over the 5.0 MB limit");
  });

  it("refuses to read through a symlink that leaves the workspace", async () => {
    await writeFile(join(outside, "secret.txt"), "top secret");
    await symlink(join(outside, "secret.txt"), join(workspace, "innocent.txt"));
    const result = await runTool(readFileTool, { path: "innocent.txt" }, ctx);
    expect(result.isError).toBe(true);
    expect(textOf(result)).toContain("outside the workspace");
    expect(textOf(result)).not.toContain("top secret");
  });
});

describe("write_file", () => {
  it("creates parent folders and reports bytes written", async () => {
    const result = await runTool(writeFileTool, { path: "deep/er/new.txt", content: "héllo\n" }, ctx);
    expect(result.isError).toBeUndefined();
    expect(textOf(result)).toBe("Created deep/er/new.txt (7 bytes written).");
    expect(await readFile(join(workspace, "deep/er/new.txt"), "utf8")).toBe("héllo\n");
  });

  it("overwrites atomically, keeps the file mode and leaves no temp files", async () => {
    const file = join(workspace, "run.sh");
    await writeFile(file, "old");
    await chmod(file, 0o755);
    const result = await runTool(writeFileTool, { path: "run.sh", content: "new content" }, ctx);
    expect(textOf(result)).toContain("Overwrote run.sh");
    expect(await readFile(file, "utf8")).toBe("new content");
    expect((await stat(file)).mode & 0o777).toBe(0o755);
    expect(await readdir(workspace)).toEqual(["run.sh"]);
  });

  it("refuses writes outside the workspace, including under a symlinked folder", async () => {
    await symlink(outside, join(workspace, "out"));
    for (const path of ["../escape.txt", join(outside, "abs.txt"), "out/new.txt"]) {
      const result = await runTool(writeFileTool, { path, content: "x" }, ctx);
      expect(result.isError).toBe(true);
      expect(textOf(result)).toContain("outside the workspace");
    }
    expect(await readdir(outside)).toEqual([]);
  });

  it("refuses to replace a folder", async () => {
    await mkdir(join(workspace, "dir"));
    const result = await runTool(writeFileTool, { path: "dir", content: "x" }, ctx);
    expect(result.isError).toBe(true);
    expect(textOf(result)).toContain("is a directory");
  });
});

describe("edit_file", () => {
  it("replaces exactly one occurrence and reports the line", async () => {
    await writeFile(join(workspace, "a.ts"), "const a = 1;\nconst b = 2;\n");
    const result = await runTool(
      editFileTool,
      { path: "a.ts", oldText: "b = 2", newText: "b = $& + 3" },
      ctx,
    );
    expect(textOf(result)).toBe("Replaced 1 occurrence in a.ts (first at line 2).");
    expect(await readFile(join(workspace, "a.ts"), "utf8")).toBe("const a = 1;\nconst b = $& + 3;\n");
  });

  it("fails with a hint when the text is missing", async () => {
    await writeFile(join(workspace, "a.ts"), "hello\n");
    const result = await runTool(editFileTool, { path: "a.ts", oldText: "bye", newText: "x" }, ctx);
    expect(result.isError).toBe(true);
    expect(textOf(result)).toContain("oldText was not found in a.ts");
    expect(textOf(result)).toContain("read the file first");
  });

  it("refuses ambiguous matches unless replaceAll, saying how many", async () => {
    await writeFile(join(workspace, "a.txt"), "x y x y x");
    const ambiguous = await runTool(editFileTool, { path: "a.txt", oldText: "x", newText: "z" }, ctx);
    expect(ambiguous.isError).toBe(true);
    expect(textOf(ambiguous)).toContain("occurs 3 times");
    expect(await readFile(join(workspace, "a.txt"), "utf8")).toBe("x y x y x");

    const all = await runTool(
      editFileTool,
      { path: "a.txt", oldText: "x", newText: "z", replaceAll: true },
      ctx,
    );
    expect(textOf(all)).toContain("Replaced 3 occurrences");
    expect(await readFile(join(workspace, "a.txt"), "utf8")).toBe("z y z y z");
  });

  it("matches text written with \\n in a file with CRLF line endings", async () => {
    await writeFile(join(workspace, "win.txt"), "one\r\ntwo\r\nthree\r\n");
    const result = await runTool(
      editFileTool,
      { path: "win.txt", oldText: "one\ntwo", newText: "1\n2" },
      ctx,
    );
    expect(result.isError).toBeUndefined();
    expect(await readFile(join(workspace, "win.txt"), "utf8")).toBe("1\r\n2\r\nthree\r\n");
  });
});

describe("list_directory", () => {
  beforeEach(async () => {
    await mkdir(join(workspace, "src/lib"), { recursive: true });
    await mkdir(join(workspace, "node_modules/pkg"), { recursive: true });
    await mkdir(join(workspace, ".git"));
    await writeFile(join(workspace, "README.md"), "x".repeat(2048));
    await writeFile(join(workspace, "src/index.ts"), "export {};\n");
    await writeFile(join(workspace, "src/lib/util.ts"), "");
    await writeFile(join(workspace, "node_modules/pkg/index.js"), "");
  });

  it("lists one level with / for folders and sizes for files", async () => {
    const text = textOf(await runTool(listDirectoryTool, {}, ctx));
    expect(text.split("\n")).toEqual(["./", ".git/", "node_modules/", "src/", "README.md (2.0 KB)"]);
  });

  it("walks recursively, skipping node_modules and .git", async () => {
    const text = textOf(await runTool(listDirectoryTool, { recursive: true }, ctx));
    const listed = text.split("\n");
    expect(listed).toContain("src/lib/util.ts (0 B)");
    expect(listed).toContain("src/index.ts (11 B)");
    expect(listed.some((l) => l.startsWith("node_modules/pkg"))).toBe(false);
    expect(text).toContain("[not listed: .git/, node_modules/]");
  });

  it("caps the number of entries and says so", async () => {
    for (let i = 0; i < 30; i++) await writeFile(join(workspace, `f${i}.txt`), "");
    const text = textOf(await runTool(listDirectoryTool, { maxEntries: 10 }, ctx));
    expect(text.split("\n").filter((l) => !l.startsWith("[") && l !== "./")).toHaveLength(10);
    expect(text).toContain("stopped at 10 entries");
  });

  it("lists a subfolder and refuses files and outside paths", async () => {
    expect(textOf(await runTool(listDirectoryTool, { path: "src" }, ctx)).split("\n")).toEqual([
      "src/",
      "lib/",
      "index.ts (11 B)",
    ]);
    expect(textOf(await runTool(listDirectoryTool, { path: "README.md" }, ctx))).toContain("is a file");
    const out = await runTool(listDirectoryTool, { path: ".." }, ctx);
    expect(out.isError).toBe(true);
    expect(textOf(out)).toContain("outside the workspace");
  });

  it("shows symlinks without following them", async () => {
    await symlink(outside, join(workspace, "src/escape"));
    const text = textOf(await runTool(listDirectoryTool, { recursive: true }, ctx));
    expect(text).toContain(`src/escape -> ${outside}`);
  });
});
