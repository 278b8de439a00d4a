/**
 * The one decision whether agents are offered `execute_command`: always when the sandbox works;
 * without one only when the owner turned on `tools.shell.allowUnsandboxed`. Settings shows it.
 */
import { detectSandbox } from "../tools/builtin/sandbox/index.js";
import type { SandboxStatus } from "../tools/builtin/sandbox/types.js";
import { PROCESS_TOOL_NAMES } from "../tools/process/process-tools.js";
import type { ShellPolicy } from "../tools/types.js";

/** What Settings shows about the shell (`GET /api/settings` → `shell`). */
export interface ShellOffer {
  sandboxed: boolean;
  /** Why there is no sandbox and what that means; absent when sandboxed. */
  reason?: string;
  /** Whether agents are given `execute_command`. */
  offered: boolean;
}

/** The shell tool's name, left out of the catalogue when not offered. */
export const SHELL_TOOL = "execute_command";

/** Decides from a probe result and the configuration. */
export function decideShellOffer(status: SandboxStatus, shell: Pick<ShellPolicy, "sandbox">): ShellOffer {
  if (status.available) return { sandboxed: true, offered: true };
  const why = status.reason ?? "the sandbox is unavailable";
  if (shell.sandbox.allowUnsandboxed) {
    return {
      sandboxed: false,
      offered: true,
      reason: `${why}. execute_command is offered WITHOUT a sandbox because tools.shell.allowUnsandboxed is true: agents' commands run with the server's rights`,
    };
  }
  return {
    sandboxed: false,
    offered: false,
    reason: `${why}. execute_command is not offered to agents; install bubblewrap, or set tools.shell.allowUnsandboxed: true to offer it without a sandbox`,
  };
}

/** Probes the sandbox (once per process) and decides. */
export async function resolveShellOffer(shell: Pick<ShellPolicy, "sandbox">): Promise<ShellOffer> {
  return decideShellOffer(await detectSandbox(shell.sandbox.bwrapPath), shell);
}

/** Built-in tools to leave out of the catalogue for this offer. */
export function toolsLeftOut(offer: ShellOffer): string[] {
  return offer.offered ? [] : [SHELL_TOOL, "request_network", ...PROCESS_TOOL_NAMES];
}
