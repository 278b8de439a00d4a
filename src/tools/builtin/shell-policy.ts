/**
 * Decides whether a shell command may run: refused (deny), run after a person agrees (confirm),
 * or run straight away (allow). Rules are regular expressions tested against the whole command line
 * and against each simple command in it, so `^`-anchored rules work on every part of a chain.
 * The line is also read as a shell reads it (shell-words.ts), so quoting, variables, git's global
 * options and interpreters' inline code cannot hide a command. The parser is deliberately
 * conservative: when in doubt, it asks. These rules are a convenience; the sandbox is the boundary.
 */
import { DimsumError } from "../../errors.js";
import type { ShellPolicy } from "../types.js";
import { analyseCommandLine } from "./shell-words.js";

export type PolicyDecision = "allow" | "deny" | "confirm";

export interface PolicyVerdict {
  decision: PolicyDecision;
  /** Why, in words a person understands; names the rule that matched. */
  reason: string;
}

export type CommandRules = Pick<ShellPolicy, "allow" | "deny" | "confirm">;

export interface ParsedCommand {
  /** The simple commands between `;`, `&&`, `||`, `|`, `&` and newlines, trimmed. */
  parts: string[];
  /** True when the line runs nested commands: `$(...)`, backticks or `<(...)`/`>(...)`. */
  hasSubstitution: boolean;
}

/** Splits a command line into simple commands, honouring quotes and backslash escapes. */
export function parseCommand(command: string): ParsedCommand {
  const parts: string[] = [];
  let current = "";
  let quote: "'" | '"' | null = null;
  let hasSubstitution = false;
  const flush = () => {
    if (current.trim() !== "") parts.push(current.trim());
    current = "";
  };
  for (let i = 0; i < command.length; i++) {
    const ch = command[i] as string;
    const next = command[i + 1];
    if (quote === "'") {
      if (ch === "'") quote = null;
      current += ch;
      continue;
    }
    if (ch === "\\") {
      current += ch + (next ?? "");
      i++;
      continue;
    }
    if (ch === "`" || (ch === "$" && next === "(")) hasSubstitution = true;
    if (quote === '"') {
      if (ch === '"') quote = null;
      current += ch;
      continue;
    }
    if (ch === "'" || ch === '"') {
      quote = ch;
      current += ch;
      continue;
    }
    if ((ch === "<" || ch === ">") && next === "(") hasSubstitution = true;
    // `>&2` and `2>&1` are redirections, not background operators.
    if (ch === "&" && (command[i - 1] === ">" || command[i - 1] === "<" || next === ">")) {
      current += ch;
      continue;
    }
    if (ch === ";" || ch === "\n" || ch === "&" || ch === "|") {
      flush();
      if ((ch === "&" || ch === "|") && next === ch) i++;
      continue;
    }
    current += ch;
  }
  flush();
  return { parts, hasSubstitution };
}

/** The program a simple command runs: its first word after `VAR=value` assignments. */
export function commandName(part: string): string {
  const words = part.split(/\s+/).filter((w) => w !== "");
  const first = words.find((w) => !/^[A-Za-z_][A-Za-z0-9_]*=/.test(w));
  return (first ?? "").replace(/^["']|["']$/g, "");
}

const compiled = new Map<string, RegExp>();

function compileRule(source: string, list: "deny" | "confirm"): RegExp {
  let rule = compiled.get(source);
  if (!rule) {
    try {
      rule = new RegExp(source);
    } catch (err) {
      throw new DimsumError("config", `Shell ${list} rule /${source}/ is not a valid regular expression.`, {
        hint: `fix tools.shell.${list} in your configuration`,
        cause: err,
      });
    }
    compiled.set(source, rule);
  }
  return rule;
}

/** The first rule matching the whole line or one of its parts. */
function firstMatch(rules: string[], list: "deny" | "confirm", texts: string[]): string | undefined {
  for (const source of rules) {
    const rule = compileRule(source, list);
    if (texts.some((text) => rule.test(text))) return source;
  }
  return undefined;
}

/** Decides deny, confirm or allow for a command line under the given rules. */
export function evaluateCommand(command: string, rules: CommandRules): PolicyVerdict {
  const { parts, hasSubstitution } = parseCommand(command);
  const structure = analyseCommandLine(command);
  // Collapsed whitespace keeps `rm  -rf   /` from slipping past a rule written with single spaces;
  // the shell's own reading (`r''m` is `rm`, `git -C x push` is `git push`) goes through the rules too.
  const collapsed = command.replace(/\s+/g, " ").trim();
  const texts = [
    command,
    collapsed,
    ...parts,
    ...parts.map((p) => p.replace(/\s+/g, " ")),
    ...structure.normalized,
  ];
  const denied = firstMatch(rules.deny, "deny", texts);
  if (denied !== undefined) {
    return { decision: "deny", reason: `it matches the deny rule /${denied}/` };
  }
  const structuralDeny = structure.findings.find((f) => f.decision === "deny");
  if (structuralDeny) return structuralDeny;
  if (parts.length === 0) return { decision: "deny", reason: "the command is empty" };
  const confirm = firstMatch(rules.confirm, "confirm", texts);
  if (confirm !== undefined) {
    return { decision: "confirm", reason: `it matches the confirm rule /${confirm}/` };
  }
  const structuralConfirm = structure.findings[0];
  if (structuralConfirm) return structuralConfirm;
  if (hasSubstitution) {
    return { decision: "confirm", reason: "it uses command substitution, which can run any command" };
  }
  if (rules.allow.length > 0) {
    const allowed = new Set(rules.allow);
    const names = [...parts.map(commandName), ...structure.programs];
    const other = names.find((name) => !allowed.has(name));
    if (other !== undefined) {
      return { decision: "confirm", reason: `\`${other}\` is not in the shell allow list` };
    }
  }
  return { decision: "allow", reason: "no rule asks for approval" };
}
