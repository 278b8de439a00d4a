/**
 * The CLI's session tools: long-running processes (`--processes`: the process_* tools) and a
 * browser page (`--browser`: the browser tool, Chromium started on first use) for one `dimsum run`
 * or `dimsum chat`. They belong to the command: `close` stops every process and the browser, and
 * the commands call it on every way out (the answer, an error, Ctrl-C, SIGTERM).
 */
import { join } from "node:path";
import type { DimsumConfig } from "../config/load-config.js";
import type { BrowserSessions } from "../tools/browser/browser-sessions.js";
import { createNetworkGrants } from "../tools/builtin/sandbox/network-grants.js";
import { ProcessManager } from "../tools/process/process-manager.js";
import { DEFAULT_PROCESS_SETTINGS } from "../tools/process/types.js";
import type { ToolContext } from "../tools/types.js";

export interface SessionToolOptions {
  /** Offer process_start and the other process_* tools. */
  processes?: boolean;
  /** Offer the browser tool. */
  browser?: boolean;
}

export interface SessionTools {
  processes?: ProcessManager;
  browser?: BrowserSessions;
  /** What every tool call of the command gets (its session's processes and page). */
  environment: Pick<ToolContext, "processes" | "browser">;
  /** Stops the processes and closes the browser. */
  close(): Promise<void>;
}

/** The command's session key: one CLI process is one session. */
export function cliSessionKey(): string {
  return `cli:${process.pid}`;
}

/** Opens what `options` asks for; nothing starts until a tool is used. */
export async function openSessionTools(
  config: DimsumConfig,
  options: SessionToolOptions,
): Promise<SessionTools> {
  const key = cliSessionKey();
  // The same registry as the server's: a CLI killed with SIGKILL leaves records the next sweep ends.
  const processes = options.processes
    ? new ProcessManager({
        settings: config.tools.processes ?? DEFAULT_PROCESS_SETTINGS,
        registryDir: join(config.home, "run", "processes"),
      })
    : undefined;
  processes?.sweepOrphans();
  let browser: BrowserSessions | undefined;
  if (options.browser) {
    // playwright-core loads only with --browser (and Chromium only when the tool is first used).
    const { BrowserSessions } = await import("../tools/browser/browser-sessions.js");
    browser = new BrowserSessions({
      ...(processes ? { processes } : {}),
      allowPrivate: config.tools.fetch.allowPrivateNetwork,
    });
  }
  return {
    ...(processes ? { processes } : {}),
    ...(browser ? { browser } : {}),
    environment: {
      ...(processes ? { processes: { manager: processes, key } } : {}),
      ...(browser ? { browser: { sessions: browser, key } } : {}),
    },
    close: async () => {
      await browser?.closeAll();
      await processes?.closeAll("the command ended");
    },
  };
}

/** `--processes` and `--browser` as the session tools' options. */
export function sessionToolOptions(options: { processes?: boolean; browser?: boolean }): SessionToolOptions {
  return {
    ...(options.processes ? { processes: true } : {}),
    ...(options.browser ? { browser: true } : {}),
  };
}

/** The tool context's part for the command: its session tools and the hosts granted in its run. */
export function cliToolEnvironment(
  environment: SessionTools["environment"],
): Pick<ToolContext, "processes" | "browser" | "networkGrants"> {
  return { ...environment, networkGrants: createNetworkGrants("dimsum") };
}
