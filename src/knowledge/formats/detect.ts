/** Which format a file is, by its name: the mime type recorded for it and the parser that reads it. */
import { basename, extname } from "node:path";

export type FormatKind = "markdown" | "text" | "html" | "pdf" | "code";

const BY_EXTENSION: Record<string, { mime: string; kind: FormatKind }> = {
  ".md": { mime: "text/markdown", kind: "markdown" },
  ".markdown": { mime: "text/markdown", kind: "markdown" },
  ".mdx": { mime: "text/markdown", kind: "markdown" },
  ".txt": { mime: "text/plain", kind: "text" },
  ".text": { mime: "text/plain", kind: "text" },
  ".rst": { mime: "text/plain", kind: "text" },
  ".log": { mime: "text/plain", kind: "text" },
  ".csv": { mime: "text/csv", kind: "text" },
  ".html": { mime: "text/html", kind: "html" },
  ".htm": { mime: "text/html", kind: "html" },
  ".xhtml": { mime: "text/html", kind: "html" },
  ".pdf": { mime: "application/pdf", kind: "pdf" },
};

// Source code: extension -> language, recorded as `text/x-<language>`.
const CODE: Record<string, string> = {
  ".ts": "typescript",
  ".tsx": "typescript",
  ".mts": "typescript",
  ".cts": "typescript",
  ".js": "javascript",
  ".jsx": "javascript",
  ".mjs": "javascript",
  ".cjs": "javascript",
  ".py": "python",
  ".rb": "ruby",
  ".go": "go",
  ".rs": "rust",
  ".java": "java",
  ".kt": "kotlin",
  ".kts": "kotlin",
  ".scala": "scala",
  ".swift": "swift",
  ".c": "c",
  ".h": "c",
  ".cc": "cpp",
  ".cpp": "cpp",
  ".cxx": "cpp",
  ".hpp": "cpp",
  ".cs": "csharp",
  ".php": "php",
  ".lua": "lua",
  ".r": "r",
  ".sh": "shell",
  ".bash": "shell",
  ".zsh": "shell",
  ".ps1": "powershell",
  ".sql": "sql",
  ".css": "css",
  ".scss": "scss",
  ".vue": "vue",
  ".svelte": "svelte",
  ".json": "json",
  ".yaml": "yaml",
  ".yml": "yaml",
  ".toml": "toml",
  ".xml": "xml",
  ".proto": "protobuf",
  ".graphql": "graphql",
  ".ex": "elixir",
  ".exs": "elixir",
  ".erl": "erlang",
  ".hs": "haskell",
  ".ml": "ocaml",
  ".dart": "dart",
  ".zig": "zig",
};

const MIME_KINDS: Record<string, FormatKind> = {
  "text/markdown": "markdown",
  "text/x-markdown": "markdown",
  "text/plain": "text",
  "text/csv": "text",
  "text/html": "html",
  "application/xhtml+xml": "html",
  "application/pdf": "pdf",
};

export interface DetectedFormat {
  mime: string;
  kind: FormatKind;
}

/** The format of a file name (by extension), or undefined when it is not one the knowledge base reads. */
export function formatOf(name: string): DetectedFormat | undefined {
  const ext = extname(name).toLowerCase();
  const known = BY_EXTENSION[ext];
  if (known) return known;
  const language = CODE[ext];
  if (language) return { mime: `text/x-${language}`, kind: "code" };
  if (/^(makefile|dockerfile|gemfile|rakefile)$/i.test(basename(name))) {
    return { mime: `text/x-${basename(name).toLowerCase()}`, kind: "code" };
  }
  return undefined;
}

/** The parser for a declared mime type (uploads), falling back to the file name. */
export function formatOfMime(mime: string | undefined, name: string): DetectedFormat | undefined {
  const clean = mime?.split(";")[0]?.trim().toLowerCase();
  if (clean) {
    const kind = MIME_KINDS[clean];
    if (kind) return { mime: clean, kind };
    if (clean.startsWith("text/x-")) return { mime: clean, kind: "code" };
  }
  return formatOf(name);
}

// Persona files define who an agent is; they are instructions, not knowledge, and must never leak
// into search results (and so into other agents' contexts).
const PERSONA_NAMES = new Set(["soul.md", "persona.md", "identity.md", "agents.md"]);

/** True for SOUL.md and similar persona files (`*.soul.md`, `PERSONA.md`, `IDENTITY.md`, `AGENTS.md`). */
export function isPersonaFile(path: string): boolean {
  const name = basename(path).toLowerCase();
  return PERSONA_NAMES.has(name) || name.endsWith(".soul.md") || name.endsWith(".persona.md");
}

/** True when bytes look like text: no NUL in the first 8 KB (how git decides, too). */
export function looksLikeText(data: Uint8Array): boolean {
  return !data.subarray(0, 8192).includes(0);
}
