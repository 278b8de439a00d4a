/** notifications/tools/list_changed from a real stdio server refreshes the registry. */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { McpManager } from "../../src/mcp/manager.js";
import { FIXTURES, stdioServer, testEnv, textOf, toolContext, waitFor } from "./helpers.js";

describe("tools/list_changed", () => {
  let manager: McpManager;

  async function call(wireName: string, args: unknown) {
    const prepared = manager.registry.prepareCall(wireName, JSON.stringify(args));
    if (!prepared.ok) throw new Error(prepared.error);
    return manager.registry.execute(prepared, toolContext());
  }

  beforeAll(async () => {
    manager = new McpManager({
      servers: [stdioServer("dynamic", [`${FIXTURES}/dynamic-server.mjs`])],
      env: testEnv,
    });
    await manager.start();
  });
  afterAll(async () => manager.close());

  it("registers a tool the server adds, then runs it", async () => {
    expect(manager.registry.has("dynamic_extra")).toBe(false);
    expect(textOf(await call("dynamic_add_tool", { name: "extra" }))).toBe("added extra");
    await waitFor(() => manager.registry.has("dynamic_extra"), 5_000, "dynamic_extra");
    expect(textOf(await call("dynamic_extra", {}))).toBe("I am extra");
    expect(manager.status("dynamic")?.toolCount).toBe(4);
  });

  it("re-registers a tool whose description changed", async () => {
    await call("dynamic_describe_tool", { name: "extra", text: "A changed description." });
    await waitFor(
      () => manager.registry.get("dynamic_extra")?.description === "A changed description.",
      5_000,
      "new description",
    );
  });

  it("unregisters a tool the server removes", async () => {
    await call("dynamic_remove_tool", { name: "extra" });
    await waitFor(() => !manager.registry.has("dynamic_extra"), 5_000, "removal");
    expect(
      manager
        .tools("dynamic")
        .map((t) => t.mcpName)
        .sort(),
    ).toEqual(["add_tool", "describe_tool", "remove_tool"]);
  });
});
