/**
 * HTTP tools in the seed's own format (issue 34, item 16): `parameters` as a list of
 * `{name, type, required, description?}` and no top-level `description`, loaded from a file and
 * called against a real local server.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { checkHttpToolDefinition } from "../../../src/tools/http/definition.js";
import { loadHttpTools } from "../../../src/tools/http/load-http-tools.js";
import type { JsonSchemaTool } from "../../../src/tools/types.js";
import { callTool, makeContext, sendJson, startServer, type TestServer, textOf } from "./helpers.js";

let server: TestServer;
let dir: string;
beforeAll(async () => {
  server = await startServer((req, res) =>
    sendJson(res, 200, { city: new URL(req.url, "http://x").searchParams.get("city"), temp: 21 }),
  );
  dir = await mkdtemp(join(tmpdir(), "dimsum-seed-http-"));
});
afterAll(async () => {
  await server.close();
  await rm(dir, { recursive: true, force: true });
});

describe("the seed's HTTP tool format", () => {
  it("loads a list of parameters and no description, and the tool works", async () => {
    await writeFile(
      join(dir, "weather.json"),
      JSON.stringify({
        name: "city_weather",
        method: "GET",
        url: `${server.base}/weather`,
        query: { city: "{{city}}", days: "{{days}}" },
        parameters: [
          { name: "city", type: "string", required: true, description: "City name" },
          { name: "days", type: "integer", required: false },
        ],
      }),
    );
    const { tools, errors } = await loadHttpTools([dir], {});
    expect(errors).toEqual([]);
    const tool = tools.find((t) => t.name === "city_weather") as JsonSchemaTool;
    expect(tool.description).toContain(`GET ${server.base}/weather`);
    expect(tool.parameters).toEqual({
      type: "object",
      properties: { city: { type: "string", description: "City name" }, days: { type: "integer" } },
      required: ["city"],
    });
    const result = await callTool(tool, { city: "Guangzhou" }, makeContext(true));
    expect(result.isError).toBeUndefined();
    expect(textOf(result)).toContain("Guangzhou");
    expect(server.requests.at(-1)?.url).toContain("city=Guangzhou");
    // The required parameter is enforced like any JSON Schema tool's.
    expect((await callTool(tool, {}, makeContext(true))).isError).toBe(true);
  });

  it("names the field of a listed parameter that is wrong", () => {
    const checked = checkHttpToolDefinition({
      name: "bad",
      url: "https://api.example.com/x",
      parameters: [{ name: "q", type: "text", required: true }],
    });
    expect(checked.ok).toBe(false);
    expect(checked.ok ? "" : checked.message).toMatch(/^parameters\.0\.type: /);
  });
});
