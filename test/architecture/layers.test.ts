import { fileURLToPath } from "node:url";
import { beforeAll, describe, expect, it } from "vitest";
import {
  type ImportEdge,
  importCycles,
  importEdges,
  LAYERS,
  layerBreaks,
  layerOf,
  readSources,
  unplaced,
} from "./import-graph.js";

const SRC = fileURLToPath(new URL("../../src/", import.meta.url));

let files: Map<string, string>;
let edges: ImportEdge[];

beforeAll(() => {
  files = readSources(SRC);
  edges = importEdges(files);
});

const describeBreak = (b: { from: string; to: string; fromLayer: string; toLayer: string }) =>
  `${b.from} (${b.fromLayer}) imports ${b.to} (${b.toLayer}, a floor above)`;

describe("the layers of DESIGN.md", () => {
  it("place every module of src/ on a floor", () => {
    expect(unplaced(files)).toEqual([]);
  });

  it("hold: no module imports from a floor above its own", () => {
    expect(edges.length).toBeGreaterThan(1000);
    expect(layerBreaks(edges).map(describeBreak)).toEqual([]);
  });

  it("every relative import names a module of src/", () => {
    const missing = edges.filter((edge) => !files.has(edge.to)).map((edge) => `${edge.from} -> ${edge.to}`);
    expect(missing).toEqual([]);
  });

  it("the CLI's modules import each other without a circle", () => {
    expect(importCycles(edges, (path) => path.startsWith("cli/"))).toEqual([]);
  });

  it("no circle runs through two floors", () => {
    const crossing = importCycles(edges, () => true).filter(
      (cycle) => new Set(cycle.map((path) => layerOf(path)?.index)).size > 1,
    );
    expect(crossing).toEqual([]);
  });
});

describe("the layer test itself", () => {
  const inject = (path: string, line: string): Map<string, string> => {
    const copy = new Map(files);
    copy.set(path, `${line}\n${copy.get(path) ?? ""}`);
    return copy;
  };

  it("fails on an injected upward import, a type-only one, a re-export and an import()", () => {
    const cases: [string, string, string][] = [
      [
        "store/database.ts",
        'import { ftsColumns } from "../memory/store-front.js";',
        "memory/store-front.ts",
      ],
      ["llm/types.ts", 'import type { TeamRun } from "../team/types.js";', "team/types.ts"],
      ["tools/types.ts", 'export { loadConfig } from "../config/load-config.js";', "config/load-config.ts"],
      ["agent/run-agent.ts", 'const late = () => import("../cli/main.js");', "cli/main.ts"],
    ];
    for (const [path, line, target] of cases) {
      const breaks = layerBreaks(importEdges(inject(path, line)));
      expect(breaks.map((b) => `${b.from} -> ${b.to}`)).toEqual([`${path} -> ${target}`]);
    }
  });

  it("lets a module import its own floor and the floors below", () => {
    const sideways = inject("memory/store-front.ts", 'import "../knowledge/index.js";');
    const down = inject("team/types.ts", 'import { parsePdf } from "../attachments/pdf-text.js";');
    expect(layerBreaks(importEdges(sideways))).toEqual([]);
    expect(layerBreaks(importEdges(down))).toEqual([]);
  });

  it("finds a circle once one is closed", () => {
    const circled = inject("cli/workspace.ts", 'import { runCommand } from "./commands/run.js";');
    expect(importCycles(importEdges(circled), (path) => path.startsWith("cli/"))).toHaveLength(1);
  });

  it("knows every floor of DESIGN.md, top first", () => {
    expect(LAYERS.flat()).toEqual(
      expect.arrayContaining([
        "cli",
        "server",
        "connectors",
        "schedules",
        "team",
        "capabilities",
        "knowledge",
      ]),
    );
    expect(layerOf("cli/main.ts")?.index).toBeLessThan(layerOf("team/team.ts")?.index ?? -1);
    expect(layerOf("llm/types.ts")?.index).toBeGreaterThan(layerOf("tools/types.ts")?.index ?? 99);
  });
});
