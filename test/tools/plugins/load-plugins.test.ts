import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { defaultPluginDirs, loadPlugins, toolFromPlugin } from "../../../src/tools/plugins/load-plugins.js";
import type { Tool } from "../../../src/tools/types.js";
import { projectRoot } from "../../support/fixtures.js";
import { callTool, makeContext, textOf } from "../http/helpers.js";

// Plugins in a temp folder cannot resolve "zod" by name, so they import this project's copy by URL.
const zodUrl = pathToFileURL(join(projectRoot, "node_modules/zod/index.js")).href;

let root: string;
let home: string;
let project: string;

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), "dimsum-plugins-"));
  home = join(root, "home");
  project = join(root, "project");
  await mkdir(join(home, "tools", "nested"), { recursive: true });
  await mkdir(join(project, "tools"), { recursive: true });
  await writeFile(
    join(home, "tools", "shout.mjs"),
    `export default {
  name: "shout",
  description: "Upper-cases text.",
  parameters: {
    type: "object",
    properties: { text: { type: "string" }, times: { type: "integer", minimum: 1 } },
    required: ["text"],
  },
  suffix: "!",
  async execute(args, ctx) {
    return args.text.toUpperCase() + this.suffix.repeat(args.times ?? 1) + (ctx.runId ? "" : "?");
  },
};
`,
  );
  await writeFile(
    join(home, "tools", "greet.mjs"),
    `export default { name: "greet", description: "User version.", parameters: { type: "object" }, execute: async () => "user" };\n`,
  );
  await writeFile(
    join(project, "tools", "greet.mjs"),
    `export default { name: "greet", description: "Project version.", execute: async () => ({ content: "project", data: { from: "project" } }) };\n`,
  );
  await writeFile(
    join(project, "tools", "add.mjs"),
    `import { z } from ${JSON.stringify(zodUrl)};
export default {
  name: "add",
  description: "Adds two numbers.",
  parameters: z.object({ a: z.number(), b: z.number().default(10) }),
  execute: async ({ a, b }) => String(a + b),
};
`,
  );
  await writeFile(join(project, "tools", "broken.mjs"), `export default {\n  name: "broken",,\n};\n`);
  await writeFile(
    join(project, "tools", "throws.mjs"),
    `const x = 1;\nthrow new Error("cannot start: missing config");\n`,
  );
  await writeFile(
    join(project, "tools", "no-execute.mjs"),
    `export default { name: "half", description: "No execute." };\n`,
  );
  await writeFile(join(project, "tools", "no-default.mjs"), `export const tool = { name: "x" };\n`);
  await writeFile(
    join(project, "tools", "commonjs.js"),
    `module.exports = { name: "cjs", description: "CommonJS plugin.", execute: async () => "from cjs" };\n`,
  );
  await writeFile(join(project, "tools", "README.md"), "# not a plugin\n");
  await writeFile(
    join(home, "tools", "nested", "deep.mjs"),
    `export default { name: "deep", description: "Nested.", execute: async () => "x" };\n`,
  );
});

afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

describe("loadPlugins", () => {
  let tools: Tool[];
  let errors: Array<{ path: string; message: string }>;

  beforeAll(async () => {
    ({ tools, errors } = await loadPlugins(defaultPluginDirs(home, project)));
  });

  it("loads good plugins from both folders, top level only, the project winning on a clash", () => {
    expect(tools.map((t) => t.name).sort()).toEqual(["add", "cjs", "greet", "shout"]);
    expect(tools.find((t) => t.name === "greet")?.description).toBe("Project version.");
  });

  it("makes JSON Schema tools and zod tools", () => {
    expect(tools.find((t) => t.name === "shout")?.kind).toBe("json");
    expect(tools.find((t) => t.name === "add")?.kind).toBe("zod");
  });

  it("reports each broken file with its path and the error, and skips it", () => {
    const byFile = Object.fromEntries(
      errors.map((e) => [e.path.slice(e.path.lastIndexOf("/") + 1), e.message]),
    );
    expect(Object.keys(byFile).sort()).toEqual([
      "broken.mjs",
      "no-default.mjs",
      "no-execute.mjs",
      "throws.mjs",
    ]);
    expect(byFile["broken.mjs"]).toMatch(/^SyntaxError: .*\(line 2\)/);
    expect(byFile["throws.mjs"]).toMatch(/cannot start: missing config.*line 2/);
    expect(byFile["no-execute.mjs"]).toMatch(/`execute` of `half` must be a function/);
    expect(byFile["no-default.mjs"]).toMatch(/no default export/);
    for (const error of errors) expect(error.path.startsWith(project)).toBe(true);
  });

  it("runs a JSON Schema plugin through the registry, with `this` bound and arguments validated", async () => {
    const shout = tools.find((t) => t.name === "shout")!;
    expect(textOf(await callTool(shout, { text: "hi", times: 2 }))).toBe("HI!!");
    const bad = await callTool(shout, { text: 3 });
    expect(bad.isError).toBe(true);
    expect(textOf(bad)).toMatch(/`text`: expected string/);
  });

  it("runs a zod plugin with its defaults applied", async () => {
    const add = tools.find((t) => t.name === "add")!;
    expect(textOf(await callTool(add, { a: 5 }))).toBe("15");
    expect((await callTool(add, { a: "5" })).isError).toBe(true);
  });

  it("keeps structured results and CommonJS plugins working", async () => {
    const greet = tools.find((t) => t.name === "greet")!;
    const result = await callTool(greet, {}, makeContext());
    expect(result).toEqual({ content: "project", data: { from: "project" } });
    expect(textOf(await callTool(tools.find((t) => t.name === "cjs")!, {}))).toBe("from cjs");
  });

  it("treats missing folders as empty", async () => {
    expect(await loadPlugins([join(root, "nope")])).toEqual({ tools: [], errors: [] });
  });
});

describe("toolFromPlugin", () => {
  it("rejects parameters that do not describe an object", () => {
    expect(() =>
      toolFromPlugin({
        name: "x",
        description: "d",
        parameters: { type: "string" },
        execute: async () => "",
      }),
    ).toThrow(/must describe an object/);
    expect(() => toolFromPlugin({ name: "", description: "d", execute: async () => "" })).toThrow(/`name`/);
  });
});
