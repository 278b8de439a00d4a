import { existsSync } from "node:fs";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { executeCommandTool, OutputCapture } from "../../../src/tools/builtin/shell.js";
import type { ApprovalRequest, ToolContext } from "../../../src/tools/types.js";
import { makeContext, makeTempDir, removeTempDir, runTool, textOf } from "./context.js";

let workspace: string;
let ctx: ToolContext;

beforeEach(async () => {
  workspace = await makeTempDir("dimsum-shell-");
  ctx = makeContext(workspace);
});

afterEach(async () => {
  await removeTempDir(workspace);
});

const run = (args: Record<string, unknown>, context: ToolContext = ctx) =>
  runTool(executeCommandTool, args, context);

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe("execute_command", () => {
  it("runs a command in the workspace and labels its output", async () => {
    const result = await run({ command: "echo hello; echo oops >&2; pwd" });
    expect(result.isError).toBeUndefined();
    expect(textOf(result)).toBe(`exit code 0\n[stdout]\nhello\n${workspace}\n[stderr]\noops`);
    expect(result.data).toMatchObject({ exitCode: 0, timedOut: false });
  });

  it("reports a non-zero exit as an error but keeps all output", async () => {
    const result = await run({ command: "echo partial; echo failing >&2; exit 3" });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toBe("exit code 3\n[stdout]\npartial\n[stderr]\nfailing");
  });

  it("says when a stream is empty", async () => {
    expect(textOf(await run({ command: "true" }))).toBe("exit code 0\n[stdout]\n(empty)\n[stderr]\n(empty)");
  });

  it("runs in a workingDirectory inside the workspace and refuses one outside", async () => {
    await mkdir(join(workspace, "sub"));
    expect(textOf(await run({ command: "pwd", workingDirectory: "sub" }))).toContain(join(workspace, "sub"));
    const outside = await run({ command: "pwd", workingDirectory: ".." });
    expect(outside.isError).toBe(true);
    expect(textOf(outside)).toContain("outside the workspace");
    const missing = await run({ command: "pwd", workingDirectory: "nope" });
    expect(textOf(missing)).toContain("is not a folder");
  });

  it("keeps the head and tail of big output and says how much was cut", async () => {
    ctx.config.shell.maxOutputBytes = 1000;
    const result = await run({
      command: "printf 'START'; head -c 200000 /dev/zero | tr '\\0' 'a'; printf 'END'",
    });
    const text = textOf(result);
    expect(text).toContain("[stdout]\nSTARTaaa");
    expect(text).toMatch(/a+END\n\[stderr\]/);
    expect(text).toContain("[199008 bytes of output cut from the middle; 200008 bytes in all]");
    expect(text.length).toBeLessThan(1300);
  });

  it("keeps secret-looking variables away from commands", async () => {
    process.env.DIMSUM_TEST_API_KEY = "sk-very-secret";
    process.env.DIMSUM_TEST_PLAIN = "visible-value";
    try {
      const text = textOf(await run({ command: "env" }));
      expect(text).toContain("DIMSUM_TEST_PLAIN=visible-value");
      expect(text).not.toContain("sk-very-secret");
      expect(text).not.toContain("DIMSUM_TEST_API_KEY");
    } finally {
      delete process.env.DIMSUM_TEST_API_KEY;
      delete process.env.DIMSUM_TEST_PLAIN;
    }
  });

  it("times out and kills the whole process group", async () => {
    const result = await run({
      command: "sleep 30 & echo $! > child.pid; echo started; wait",
      timeoutSeconds: 0.5,
    });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toContain("Command timed out after 0.5 s");
    expect(textOf(result)).toContain("started");
    const pid = Number((await readFile(join(workspace, "child.pid"), "utf8")).trim());
    await expect.poll(() => isAlive(pid), { timeout: 5000 }).toBe(false);
  });

  it("escalates to SIGKILL when the command ignores SIGTERM", async () => {
    const result = await run({ command: "trap '' TERM; echo stubborn; sleep 30", timeoutSeconds: 0.3 });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toContain("timed out");
    expect(textOf(result)).toContain("stubborn");
  });

  it("caps the requested timeout at the policy limit", async () => {
    ctx.config.shell.timeoutMs = 300;
    const result = await run({ command: "sleep 30", timeoutSeconds: 600 });
    expect(textOf(result)).toContain("timed out after 0.3 s");
  });

  it("stops the command when the run is aborted", async () => {
    const controller = new AbortController();
    const pending = run({ command: "echo begun; sleep 30" }, { ...ctx, signal: controller.signal });
    setTimeout(() => controller.abort(), 200);
    const result = await pending;
    expect(result.isError).toBe(true);
    expect(textOf(result)).toContain("Command was aborted");
  });

  it("does not start a command when the run is already aborted", async () => {
    const controller = new AbortController();
    controller.abort();
    const result = await run({ command: "touch started.txt" }, { ...ctx, signal: controller.signal });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toContain("aborted before the command started");
    expect(existsSync(join(workspace, "started.txt"))).toBe(false);
  });

  it("returns when background jobs keep the output open, and stops them", async () => {
    const result = await run({ command: "sleep 3 & echo launched" });
    expect(textOf(result)).toContain("launched");
    expect(textOf(result)).toContain("background processes were still running");
  });

  it("ends a background job when its command ends, even one that does not hold the output", async () => {
    const result = await run({ command: "sleep 97 > /dev/null 2>&1 & echo $! > bg.pid" });
    expect(result.isError).toBeFalsy();
    const pid = Number((await readFile(join(workspace, "bg.pid"), "utf8")).trim());
    await expect.poll(() => isAlive(pid), { timeout: 5000 }).toBe(false);
  });

  it("ends a background job that holds the output when its command ends", async () => {
    await run({ command: "sleep 97 & echo $! > bg.pid" });
    const pid = Number((await readFile(join(workspace, "bg.pid"), "utf8")).trim());
    await expect.poll(() => isAlive(pid), { timeout: 5000 }).toBe(false);
  });
});

describe("execute_command policy", () => {
  it("refuses denied commands without running them, naming the rule", async () => {
    const result = await run({ command: "touch ran.txt; rm -rf /" });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toContain("deny rule /\\brm");
    expect(existsSync(join(workspace, "ran.txt"))).toBe(false);
  });

  it("refuses commands needing approval when nobody can approve, pointing at --yes", async () => {
    await writeFile(join(workspace, "keep.txt"), "x");
    const result = await run({ command: "rm keep.txt" });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toContain("needs approval");
    expect(textOf(result)).toContain("--yes");
    expect(existsSync(join(workspace, "keep.txt"))).toBe(true);
  });

  it("asks for approval and runs when approved", async () => {
    await writeFile(join(workspace, "gone.txt"), "x");
    const requests: ApprovalRequest[] = [];
    const approve = async (request: ApprovalRequest) => {
      requests.push(request);
      return true;
    };
    const result = await run({ command: "rm gone.txt" }, { ...ctx, approve });
    expect(result.isError).toBeUndefined();
    expect(requests).toEqual([
      { tool: "execute_command", summary: "rm gone.txt", reason: "it matches the confirm rule /\\brm\\b/" },
    ]);
    expect(existsSync(join(workspace, "gone.txt"))).toBe(false);
  });

  it("does not run when the user declines", async () => {
    await writeFile(join(workspace, "keep.txt"), "x");
    const result = await run({ command: "rm keep.txt" }, { ...ctx, approve: async () => false });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toContain("declined");
    expect(existsSync(join(workspace, "keep.txt"))).toBe(true);
  });

  it("asks for commands outside a configured allow list", async () => {
    ctx.config.shell.allow = ["echo"];
    expect(textOf(await run({ command: "echo fine" }))).toContain("fine");
    const result = await run({ command: "echo a | wc -c" });
    expect(textOf(result)).toContain("`wc` is not in the shell allow list");
  });
});

describe("OutputCapture", () => {
  it("keeps everything under the limit", () => {
    const capture = new OutputCapture(10);
    capture.push(Buffer.from("abc"));
    capture.push(Buffer.from("defg"));
    expect(capture.result()).toEqual({ text: "abcdefg", cutBytes: 0 });
  });

  it("keeps the first and last halves across many chunks", () => {
    const capture = new OutputCapture(6);
    for (const chunk of ["ab", "cd", "ef", "gh", "ij", "kl"]) capture.push(Buffer.from(chunk));
    const { text, cutBytes } = capture.result();
    expect(cutBytes).toBe(6);
    expect(text.startsWith("abc\n")).toBe(true);
    expect(text.endsWith("\njkl")).toBe(true);
    expect(capture.totalBytes).toBe(12);
  });
});
