/**
 * The import graph of src/ and the layer rule of DESIGN.md, as data and small functions, so the
 * layer test can check the real tree and a test of the test can check a tree with an injected break.
 */
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, posix, relative, sep } from "node:path";
import ts from "typescript";

/**
 * The floors of DESIGN.md, top first. A module may import from its own floor or any floor below it.
 * Each entry is a top-level folder (or a file) of src/.
 */
export const LAYERS: readonly (readonly string[])[] = [
  ["index.ts", "testing"], // the public API and the test helpers it ships
  ["cli", "server", "web"], // edges
  ["connectors", "schedules"],
  ["team"],
  ["capabilities"],
  ["knowledge", "memory", "telemetry"],
  ["agent", "mcp"],
  ["store", "config", "a2a"],
  ["tools", "attachments"],
  ["llm"],
  ["skills", "errors.ts", "import-external.ts", "shared"], // leaves
];

/** One import of one module of src/: both paths relative to src/, with forward slashes. */
export interface ImportEdge {
  from: string;
  to: string;
  /** `import type` / `export type`: still a dependency on the layer above. */
  typeOnly: boolean;
}

/** A module that imports from a floor above its own. */
export interface LayerBreak extends ImportEdge {
  fromLayer: string;
  toLayer: string;
}

/** The source files of src/ (relative path → text), tests and declaration files left out. */
export function readSources(srcDir: string): Map<string, string> {
  const files = new Map<string, string>();
  const walk = (dir: string): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const full = join(dir, entry.name);
      if (entry.isDirectory()) walk(full);
      else if (/\.tsx?$/.test(entry.name) && !entry.name.endsWith(".d.ts")) {
        files.set(relative(srcDir, full).split(sep).join("/"), readFileSync(full, "utf8"));
      }
    }
  };
  walk(srcDir);
  return files;
}

/** Every relative import, re-export and `import()` of the given modules, resolved to a module of src/. */
export function importEdges(files: ReadonlyMap<string, string>): ImportEdge[] {
  const edges: ImportEdge[] = [];
  for (const [from, text] of files) {
    const key = `${from}\0${text}`;
    let specifiers = parsed.get(key);
    if (specifiers === undefined) {
      specifiers = importSpecifiers(from, text);
      parsed.set(key, specifiers);
    }
    for (const { specifier, typeOnly } of specifiers) {
      const target = posix.normalize(posix.join(dirname(from), specifier)).replace(/\.js$/, ".ts");
      const tsx = target.replace(/\.ts$/, ".tsx");
      edges.push({ from, to: !files.has(target) && files.has(tsx) ? tsx : target, typeOnly });
    }
  }
  return edges;
}

/** Parsed files, so a test of the test that changes one module does not parse the others again. */
const parsed = new Map<string, { specifier: string; typeOnly: boolean }[]>();

function importSpecifiers(from: string, text: string): { specifier: string; typeOnly: boolean }[] {
  const found: { specifier: string; typeOnly: boolean }[] = [];
  {
    const source = ts.createSourceFile(from, text, ts.ScriptTarget.Latest, false, ts.ScriptKind.TS);
    const add = (specifier: string, typeOnly: boolean): void => {
      if (specifier.startsWith(".")) found.push({ specifier, typeOnly });
    };
    const visit = (node: ts.Node): void => {
      if (ts.isImportDeclaration(node) && ts.isStringLiteral(node.moduleSpecifier)) {
        const clause = node.importClause;
        const typeOnly =
          clause !== undefined &&
          (clause.isTypeOnly ||
            (clause.name === undefined &&
              clause.namedBindings !== undefined &&
              ts.isNamedImports(clause.namedBindings) &&
              clause.namedBindings.elements.length > 0 &&
              clause.namedBindings.elements.every((element) => element.isTypeOnly)));
        add(node.moduleSpecifier.text, typeOnly);
      } else if (
        ts.isExportDeclaration(node) &&
        node.moduleSpecifier &&
        ts.isStringLiteral(node.moduleSpecifier)
      ) {
        add(node.moduleSpecifier.text, node.isTypeOnly);
      } else if (
        ts.isCallExpression(node) &&
        node.expression.kind === ts.SyntaxKind.ImportKeyword &&
        node.arguments[0] !== undefined &&
        ts.isStringLiteralLike(node.arguments[0])
      ) {
        add(node.arguments[0].text, false);
      } else if (
        ts.isImportTypeNode(node) &&
        ts.isLiteralTypeNode(node.argument) &&
        ts.isStringLiteral(node.argument.literal)
      ) {
        add(node.argument.literal.text, true);
      }
      ts.forEachChild(node, visit);
    };
    visit(source);
  }
  return found;
}

/** The floor (index into LAYERS) and name of a module of src/, or undefined when no floor names it. */
export function layerOf(path: string): { index: number; name: string } | undefined {
  const top = path.split("/")[0] ?? path;
  for (const [index, floor] of LAYERS.entries()) {
    if (floor.includes(top)) return { index, name: top };
  }
  return undefined;
}

/** The modules of src/ that no floor names (the test wants none, so a new folder gets a floor). */
export function unplaced(files: ReadonlyMap<string, string>): string[] {
  return [...files.keys()].filter((path) => layerOf(path) === undefined);
}

/** The imports that point up: from a floor to a floor above it. */
export function layerBreaks(edges: readonly ImportEdge[]): LayerBreak[] {
  const breaks: LayerBreak[] = [];
  for (const edge of edges) {
    const from = layerOf(edge.from);
    const to = layerOf(edge.to);
    if (from === undefined || to === undefined) continue;
    if (to.index < from.index) breaks.push({ ...edge, fromLayer: from.name, toLayer: to.name });
  }
  return breaks;
}

/** Import circles among the modules (strongly connected components of more than one module). */
export function importCycles(edges: readonly ImportEdge[], within: (path: string) => boolean): string[][] {
  const graph = new Map<string, string[]>();
  for (const edge of edges) {
    if (!within(edge.from) || !within(edge.to)) continue;
    const targets = graph.get(edge.from) ?? [];
    targets.push(edge.to);
    graph.set(edge.from, targets);
  }
  // Tarjan's algorithm, iterative enough for a few hundred modules.
  let counter = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const cycles: string[][] = [];
  const connect = (node: string): void => {
    index.set(node, counter);
    low.set(node, counter);
    counter += 1;
    stack.push(node);
    onStack.add(node);
    for (const next of graph.get(node) ?? []) {
      if (!index.has(next)) {
        connect(next);
        low.set(node, Math.min(low.get(node) ?? 0, low.get(next) ?? 0));
      } else if (onStack.has(next)) {
        low.set(node, Math.min(low.get(node) ?? 0, index.get(next) ?? 0));
      }
    }
    if (low.get(node) === index.get(node)) {
      const component: string[] = [];
      let member: string | undefined;
      do {
        member = stack.pop();
        if (member === undefined) break;
        onStack.delete(member);
        component.push(member);
      } while (member !== node);
      if (component.length > 1) cycles.push(component.sort());
    }
  };
  for (const node of graph.keys()) if (!index.has(node)) connect(node);
  return cycles;
}
