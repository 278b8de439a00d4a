/**
 * Reads a command line the way a shell would (quotes, escapes, operators, `$VAR`, substitutions)
 * with `shell-quote`, and finds what regular expressions over the text miss: `r''m`, `$x$y`,
 * `git -C dir push`, `git -c alias.p=push p`, `… | sh`, `python3 -c` with dangerous code, and `rm`
 * of a root-equivalent path. A convenience in front of the sandbox, which is the real boundary.
 */
import { parse } from "shell-quote";

/** What the structure of a command line says; the strongest finding wins. */
export interface StructuralFinding {
  decision: "deny" | "confirm";
  reason: string;
}

export interface CommandStructure {
  /** Each simple command as the shell would run it, quotes removed, wrappers (`env`, `sudo`, …) kept. */
  normalized: string[];
  /** The programs run (basenames, after assignments and wrappers). */
  programs: string[];
  findings: StructuralFinding[];
}

// Variables come back as OPEN name CLOSE, so a word built from them is recognisable.
const OPEN = "\uE000";
const CLOSE = "\uE001";
const VARIABLE = /\uE000([^\uE001]*)\uE001/g;

type Token = string | { op: string; pattern?: string } | { comment: string };

const SEPARATORS = new Set([";", "&&", "||", "|", "|&", "&", "(", ")", "<(", ">(", ";;"]);
const REDIRECTS = new Set([">", ">>", "<", ">&", "<&", "&>", ">|", "<>"]);
const SHELLS = new Set(["sh", "bash", "dash", "zsh", "ksh", "mksh", "ash", "fish", "csh", "tcsh", "busybox"]);
const INTERPRETER =
  /^(?:python[\d.]*|perl[\d.]*|ruby[\d.]*|node|nodejs|deno|bun|php[\d.]*|lua[\d.]*|Rscript|tclsh|awk|gawk|mawk)$/;
const INLINE_FLAGS = new Set(["-c", "-e", "-E", "--eval", "-p", "--print", "-r"]);
// Code that deletes, starts programs, signals, or talks to the network.
const DANGEROUS_CODE =
  /\b(?:remove|unlink|rmdir|removedirs|rmtree|rm_rf|rm_r|system|popen|exec\w*|spawn\w*|fork|kill|subprocess|child_process|socket|urllib|requests|http\.client|fetch|eval|__import__|shutil|chmod|chown|truncate|rename|writeFile\w*|open\s*\([^)]*["'][wa+])/;
const WRAPPERS = new Set([
  "env",
  "command",
  "exec",
  "nohup",
  "nice",
  "time",
  "timeout",
  "sudo",
  "doas",
  "builtin",
  "xargs",
  "stdbuf",
  "setsid",
  "ionice",
  "chrt",
  "flock",
  "unbuffer",
  "then",
  "do",
  "else",
  "!",
  "{",
]);
// git -c keys that make git run a program of the caller's choosing.
const GIT_PROGRAM_KEY =
  /^(?:alias\.|core\.(?:sshcommand|pager|editor|hookspath|fsmonitor|gitproxy)|credential\.|.*\.helper$|.*\.command$|diff\..*\.textconv|filter\.)/i;

const basename = (word: string) => word.slice(word.lastIndexOf("/") + 1);
const isDynamic = (word: string) => word.includes(OPEN) || word.includes("`");
const shown = (word: string) =>
  word.replace(VARIABLE, (_m, name: string) => (name === "" ? "$(…)" : `$${name}`));

/** Replaces unquoted newlines by `;` (shell-quote reads them as spaces). */
function newlinesAsSeparators(line: string): string {
  let out = "";
  let quote: "'" | '"' | null = null;
  for (let i = 0; i < line.length; i++) {
    const ch = line[i] as string;
    if (quote === "'") {
      if (ch === "'") quote = null;
    } else if (ch === "\\") {
      out += ch + (line[i + 1] ?? "");
      i++;
      continue;
    } else if (quote === '"') {
      if (ch === '"') quote = null;
    } else if (ch === "'" || ch === '"') quote = ch;
    else if (ch === "\n") {
      out += ";";
      continue;
    }
    out += ch;
  }
  return out;
}

interface Simple {
  words: string[];
  afterPipe: boolean;
  definesFunction: boolean;
}

/** Splits tokens into simple commands; substitutions' inner commands are commands too. */
function simpleCommands(tokens: Token[]): Simple[] {
  const list: Simple[] = [];
  let current: Simple = { words: [], afterPipe: false, definesFunction: false };
  let skipNext = false;
  const flush = (afterPipe: boolean) => {
    if (current.words.length > 0) list.push(current);
    current = { words: [], afterPipe, definesFunction: false };
  };
  for (let i = 0; i < tokens.length; i++) {
    const token = tokens[i] as Token;
    if (typeof token === "string") {
      if (skipNext) skipNext = false;
      else current.words.push(token);
      continue;
    }
    if ("comment" in token) continue;
    if (token.op === "glob") {
      if (skipNext) skipNext = false;
      else current.words.push(token.pattern ?? "");
      continue;
    }
    if (REDIRECTS.has(token.op)) {
      skipNext = true;
      continue;
    }
    if (
      token.op === "(" &&
      (tokens[i + 1] as { op?: string } | undefined)?.op === ")" &&
      current.words.length > 0
    ) {
      current.definesFunction = true;
      i++;
      flush(false);
      continue;
    }
    if (SEPARATORS.has(token.op)) flush(token.op === "|" || token.op === "|&");
  }
  flush(false);
  return list;
}

/** Drops assignments and wrappers (`env X=1`, `sudo -u u`, `timeout 5`, `nice -n 5`) before the program. */
function unwrap(words: string[]): string[] {
  let rest = words;
  for (;;) {
    while (rest.length > 0 && /^[A-Za-z_][A-Za-z0-9_]*=/.test(rest[0] as string)) rest = rest.slice(1);
    const first = rest[0];
    if (first === undefined || !WRAPPERS.has(basename(first))) return rest;
    const wrapper = basename(first);
    rest = rest.slice(1);
    // Options of the wrapper, and the argument of the ones that take one.
    while (rest.length > 0 && (rest[0] as string).startsWith("-") && rest[0] !== "--") {
      const option = rest[0] as string;
      rest = rest.slice(1);
      if (/^-[nugcCIiot]$/.test(option) && wrapper !== "env") rest = rest.slice(1);
    }
    if (rest[0] === "--") rest = rest.slice(1);
    if (wrapper === "timeout" && rest.length > 0) rest = rest.slice(1);
  }
}

/** True for `/`, `//`, `/*`, `/.`, `~`, `~/`, `~/*`, `$HOME`, `${HOME}/*` and the like. */
export function isRootEquivalent(arg: string): boolean {
  let path = arg
    .replace(VARIABLE, (_m, name: string) => (name === "HOME" ? "~" : `$${name}`))
    .replace(/\/+/g, "/");
  let previous = "";
  while (previous !== path) {
    previous = path;
    path = path.replace(/\/(?:\*|\.|\.\.)?$/, "");
  }
  return path === "" || path === "~" || path === "/." || path === "~/.";
}

function gitFindings(args: string[], findings: StructuralFinding[]): string[] {
  let rest = args;
  while (rest.length > 0 && (rest[0] as string).startsWith("-")) {
    const option = rest[0] as string;
    rest = rest.slice(1);
    if (
      option === "-c" ||
      option === "-C" ||
      option === "--git-dir" ||
      option === "--work-tree" ||
      option === "--namespace" ||
      option === "--exec-path" ||
      option === "--config-env"
    ) {
      const value = rest[0] ?? "";
      rest = rest.slice(1);
      if (
        (option === "-c" || option === "--config-env") &&
        GIT_PROGRAM_KEY.test(value.split("=")[0] as string)
      ) {
        findings.push({
          decision: "confirm",
          reason: `\`git -c ${shown(value)}\` makes git run a program (aliases, helpers, hooks)`,
        });
      }
      if (option === "--exec-path")
        findings.push({ decision: "confirm", reason: "`git --exec-path` runs programs from another folder" });
    }
  }
  return rest;
}

function interpreterFindings(
  program: string,
  args: string[],
  afterPipe: boolean,
  findings: StructuralFinding[],
): void {
  const flagAt = args.findIndex((a) => INLINE_FLAGS.has(a) || /^-[A-Za-z]*[ec]$/.test(a));
  const code =
    flagAt >= 0
      ? args[flagAt + 1]
      : program.endsWith("awk")
        ? args.find((a) => !a.startsWith("-"))
        : undefined;
  if (code !== undefined) {
    if (isDynamic(code))
      findings.push({ decision: "confirm", reason: `\`${program}\` runs code built at run time` });
    else if (DANGEROUS_CODE.test(code)) {
      findings.push({
        decision: "confirm",
        reason: `\`${program}\` runs inline code that can delete files, start programs or use the network`,
      });
    }
    return;
  }
  if (afterPipe && !args.some((a) => !a.startsWith("-"))) {
    findings.push({ decision: "confirm", reason: `text is piped into \`${program}\` as a program` });
  }
}

function shellFindings(
  program: string,
  args: string[],
  afterPipe: boolean,
  findings: StructuralFinding[],
  depth: number,
): string[] {
  const flagAt = args.findIndex((a) => /^-[A-Za-z]*c[A-Za-z]*$/.test(a));
  if (flagAt >= 0) {
    const inner = args[flagAt + 1];
    if (inner === undefined || isDynamic(inner)) {
      findings.push({ decision: "confirm", reason: `\`${program} -c\` runs a command built at run time` });
      return [];
    }
    if (depth > 4) {
      findings.push({ decision: "confirm", reason: "shells are nested too deeply to read" });
      return [];
    }
    const nested = analyseCommandLine(inner, depth + 1);
    findings.push(...nested.findings);
    return nested.normalized;
  }
  const script = args.find((a) => !a.startsWith("-"));
  if (script === undefined) {
    findings.push({
      decision: "confirm",
      reason: afterPipe
        ? `text is piped into \`${program}\`, which runs it`
        : `\`${program}\` reads commands the rules cannot see`,
    });
  } else
    findings.push({
      decision: "confirm",
      reason: `\`${program} ${shown(script)}\` runs a script the rules cannot read`,
    });
  return [];
}

/** Reads a command line and reports what its structure needs. */
export function analyseCommandLine(line: string, depth = 0): CommandStructure {
  const findings: StructuralFinding[] = [];
  const normalized: string[] = [];
  const programs: string[] = [];
  let tokens: Token[];
  try {
    tokens = parse(newlinesAsSeparators(line), (name) => `${OPEN}${name}${CLOSE}`) as Token[];
  } catch {
    return {
      normalized,
      programs,
      findings: [{ decision: "confirm", reason: "the command line could not be read" }],
    };
  }
  for (const simple of simpleCommands(tokens)) {
    if (simple.definesFunction) {
      findings.push({
        decision: "confirm",
        reason: "it defines a shell function, which the rules cannot follow",
      });
      continue;
    }
    const words = unwrap(simple.words);
    const first = words[0];
    if (first === undefined || first === "}" || first === "fi" || first === "done") continue;
    if (isDynamic(first)) {
      findings.push({
        decision: "confirm",
        reason: `the program name \`${shown(first)}\` is built at run time, so the rules cannot see what runs`,
      });
      continue;
    }
    const program = basename(first);
    let args = words.slice(1);
    programs.push(program);
    if (program === "git") {
      args = gitFindings(args, findings);
    } else if (SHELLS.has(program)) {
      normalized.push(...shellFindings(program, args, simple.afterPipe, findings, depth));
    } else if (program === "source" || program === ".") {
      findings.push({ decision: "confirm", reason: `\`${program}\` runs a script the rules cannot read` });
    } else if (INTERPRETER.test(program)) {
      interpreterFindings(program, args, simple.afterPipe, findings);
    } else if (program === "rm" || program === "rmdir" || program === "shred") {
      const target = args.filter((a) => !a.startsWith("-")).find(isRootEquivalent);
      if (target !== undefined) {
        findings.push({
          decision: "deny",
          reason: `it removes \`${shown(target)}\`, a root-equivalent path`,
        });
      }
    }
    normalized.push([program, ...args].map(shown).join(" "));
  }
  return { normalized, programs, findings };
}
