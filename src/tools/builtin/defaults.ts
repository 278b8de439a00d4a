/**
 * Default policies for the built-in tools. Configuration adds to the deny and confirm lists; it
 * starts from these. Rules are tested against the whole command line and against each simple
 * command in it (see shell-policy.ts), so `^` anchors the start of any command in a chain.
 */
import type { ToolsConfig } from "../types.js";
import { DEFAULT_PATH } from "./sandbox/env.js";
import { DEFAULT_LIMITS } from "./sandbox/limits.js";

/** Where Debian's bubblewrap package installs `bwrap`. */
export const DEFAULT_BWRAP_PATH = "/usr/bin/bwrap";

// Ends an argument: whitespace, the end of the line, a shell operator or a closing quote
// (so `sh -c 'rm -rf /'` is caught too).
const END = "(?=$|[\\s;&|)'\"`])";

/** Commands refused outright: they can destroy the machine or pipe the internet into a shell. */
export const DEFAULT_SHELL_DENY: readonly string[] = [
  // rm -rf /, rm -rf /*, rm -rf ~, rm -rf $HOME (flags in any order)
  String.raw`\brm\s+(?:-\S+\s+)*(?:/\*?|~/?\*?|"?\$\{?HOME\}?"?/?\*?)${END}`,
  String.raw`\bmkfs(?:\.\w+)?\b`,
  String.raw`\bdd\b[^;&|]*\bof=/dev/(?!null\b|zero\b|stdout\b|stderr\b)`,
  String.raw`>\s*/dev/(?:sd|hd|vd|xvd|nvme|mmcblk|disk)\w*`,
  // the classic fork bomb, with any function name
  String.raw`(\w+|:)\s*\(\)\s*\{[^}]*\1\s*\|\s*\1\s*&`,
  String.raw`^\s*(?:sudo\s+)?(?:shutdown|reboot|halt|poweroff|init\s+[06]|systemctl\s+(?:reboot|poweroff|halt))${END}`,
  String.raw`\b(?:curl|wget)\b[^|;]*\|\s*(?:sudo\s+)?(?:env\s+)?(?:ba|z|da|k|fi)?sh\b`,
  String.raw`\bchmod\s+(?:-\S+\s+)*(?:0?777|a\+rwx)\s+(?:-\S+\s+)*/${END}`,
];

/** Commands that run only after a person agrees (or the run was started with `--yes`). */
export const DEFAULT_SHELL_CONFIRM: readonly string[] = [
  String.raw`\brm\b`,
  String.raw`\bsudo\b`,
  String.raw`^\s*su\b`,
  String.raw`\bgit\s+push\b`,
  String.raw`\bgit\s+reset\s+--hard\b`,
  String.raw`\bgit\s+clean\b`,
  String.raw`\bnpm\s+publish\b`,
  String.raw`\b(?:kill|pkill|killall)\b`,
  String.raw`>\s*/dev/(?!null\b|stdout\b|stderr\b)`,
  // moving things to an absolute path, the home folder or a parent folder may leave the workspace
  String.raw`\bmv\b[^;&|]*\s(?:/|~|\.\.)`,
  String.raw`\bchown\b`,
  String.raw`\bdd\b`,
  String.raw`\s-delete\b`,
  String.raw`\beval\b`,
];

/** Fresh default settings for the built-in tools; callers may change the copy they get. */
export function defaultToolsConfig(): ToolsConfig {
  return {
    shell: {
      allow: [],
      deny: [...DEFAULT_SHELL_DENY],
      confirm: [...DEFAULT_SHELL_CONFIRM],
      timeoutMs: 120_000,
      maxOutputBytes: 64 * 1024,
      sandbox: {
        bwrapPath: DEFAULT_BWRAP_PATH,
        network: false,
        networkAgents: [],
        env: { PATH: DEFAULT_PATH },
        hidePaths: [],
        allowUnsandboxed: false,
        limits: { ...DEFAULT_LIMITS },
      },
    },
    fetch: {
      allowPrivateNetwork: false,
      timeoutMs: 20_000,
      maxBytes: 2 * 1024 * 1024,
    },
  };
}
