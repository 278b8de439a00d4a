/** Tells the person once, before a run, when `execute_command` has no sandbox on this machine. */
import type { DimsumConfig } from "../config/load-config.js";
import { detectSandbox } from "../tools/builtin/sandbox/index.js";
import type { ToolRegistry } from "../tools/registry.js";

let told = false;

/** Writes one warning to stderr (once per process) when the shell tool is offered without a sandbox. */
export async function noticeUnsandboxedShell(
  config: DimsumConfig,
  tools: ToolRegistry,
  stderr: { write(text: string): unknown },
): Promise<void> {
  if (told || !tools.has("execute_command")) return;
  const status = await detectSandbox(config.tools.shell.sandbox.bwrapPath);
  if (status.available) return;
  told = true;
  const then = config.tools.shell.sandbox.allowUnsandboxed
    ? "commands run WITHOUT a sandbox, with your rights (tools.shell.allowUnsandboxed is true)"
    : "every command is asked about before it runs (refused without a terminal unless --yes)";
  stderr.write(`dimsum: no sandbox for execute_command: ${status.reason}; ${then}\n`);
}
