/**
 * The team server offers `execute_command` only with a working sandbox, or when the owner allows
 * unsandboxed commands; Settings says which and why. bwrap is made unavailable through the
 * configuration (a bwrap path that does not exist), the seam the probe reads.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { decideShellOffer } from "../../src/capabilities/shell-offer.js";
import { serveCommand } from "../../src/cli/commands/serve.js";
import { EXIT_OK } from "../../src/cli/exit-codes.js";
import { defaultToolsConfig } from "../../src/tools/builtin/defaults.js";
import { call, login, sink, tempDir, waitFor } from "./helpers.js";

interface ShellField {
  sandboxed: boolean;
  reason?: string;
  offered: boolean;
}

/** Starts `dimsum serve` with a config file, reads Settings and the tool catalogue, stops it. */
async function serveWith(shellConfig: Record<string, unknown>) {
  const home = tempDir();
  writeFileSync(join(home, "dimsum.config.json"), JSON.stringify({ tools: { shell: shellConfig } }));
  const stdout = sink();
  const stderr = sink();
  const stop = new AbortController();
  const running = serveCommand(
    { port: 0 },
    { stdout, stderr, env: { DIMSUM_HOME: home }, cwd: home, signal: stop.signal },
  );
  try {
    const url = await waitFor(() => /serving on (http:\/\/127\.0\.0\.1:\d+)/.exec(stdout.text)?.[1]);
    const password = /one-time password: (\S+)/.exec(stdout.text)?.[1];
    const owner = await login(url, "owner", password as string);
    const settings = (await (await call(url, "/api/settings", { session: owner })).json()) as {
      shell: ShellField;
    };
    const toolsResponse = await call(url, "/api/tools", { session: owner });
    const tools = (await toolsResponse.json()) as Array<{ name: string }>;
    if (!Array.isArray(tools)) throw new Error(`${JSON.stringify(tools)} ${stderr.text}`);
    return { shell: settings.shell, tools: tools.map((t) => t.name), stderr: () => stderr.text };
  } finally {
    stop.abort();
    expect(await running).toBe(EXIT_OK);
  }
}

describe("the shell offer on the team server", () => {
  it("does not offer execute_command without bwrap, and Settings and the log say why", async () => {
    const served = await serveWith({ sandbox: { bwrapPath: "/nonexistent/bwrap" } });
    expect(served.shell.sandboxed).toBe(false);
    expect(served.shell.offered).toBe(false);
    expect(served.shell.reason).toContain("bubblewrap was not found at /nonexistent/bwrap");
    expect(served.shell.reason).toContain("tools.shell.allowUnsandboxed");
    expect(served.tools).not.toContain("execute_command");
    expect(served.tools).toContain("read_file");
    expect(served.stderr()).toContain("execute_command is not offered");
  });

  it("offers it unsandboxed when the owner allows that, with a warning", async () => {
    const served = await serveWith({ allowUnsandboxed: true, sandbox: { bwrapPath: "/nonexistent/bwrap" } });
    expect(served.shell).toMatchObject({ sandboxed: false, offered: true });
    expect(served.shell.reason).toContain("WITHOUT a sandbox");
    expect(served.tools).toContain("execute_command");
    expect(served.stderr()).toContain("WITHOUT a sandbox");
  });

  it("offers it sandboxed where bwrap works", async () => {
    const served = await serveWith({});
    expect(served.shell).toEqual({ sandboxed: true, offered: true });
    expect(served.tools).toContain("execute_command");
    expect(served.stderr()).toBe("");
  });
});

describe("decideShellOffer", () => {
  const shell = defaultToolsConfig().shell;
  it("decides from the probe and the configuration", () => {
    expect(decideShellOffer({ available: true }, shell)).toEqual({ sandboxed: true, offered: true });
    expect(decideShellOffer({ available: false, reason: "no userns" }, shell)).toMatchObject({
      sandboxed: false,
      offered: false,
    });
    const allowed = { sandbox: { ...shell.sandbox, allowUnsandboxed: true } };
    expect(decideShellOffer({ available: false, reason: "no userns" }, allowed).offered).toBe(true);
  });
});
