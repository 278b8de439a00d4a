/**
 * How a run's network policy is chosen and widened: an agent's own setting, `networkAgents`, and
 * hosts granted through request_network (that run only), and the tool's own answers.
 */
import { describe, expect, it } from "vitest";
import { defaultToolsConfig } from "../../../src/tools/builtin/defaults.js";
import { requestNetworkTool } from "../../../src/tools/builtin/request-network.js";
import { toolsConfigForAgent } from "../../../src/tools/builtin/sandbox/agent.js";
import {
  createNetworkGrants,
  grantedPolicy,
  hostsOutsidePolicy,
  withGrantedNetwork,
} from "../../../src/tools/builtin/sandbox/network-grants.js";
import { makeContext, runTool, textOf } from "./context.js";

describe("an agent's network policy", () => {
  it("uses the agent's setting, lets networkAgents win, and leaves the server's config alone", () => {
    const tools = defaultToolsConfig();
    tools.shell.sandbox.networkAgents = ["researcher"];
    const allow = { mode: "allow" as const, hosts: ["registry.npmjs.org"] };
    expect(toolsConfigForAgent(tools, { id: "coder", network: allow }).shell.sandbox.networkPolicy).toEqual(
      allow,
    );
    expect(toolsConfigForAgent(tools, { id: "coder" }).shell.sandbox.networkPolicy).toBeUndefined();
    const researcher = toolsConfigForAgent(tools, { id: "researcher", network: { mode: "off" } });
    expect(researcher.shell.sandbox.network).toBe(true);
    expect(tools.shell.sandbox.networkPolicy).toBeUndefined();
  });
});

describe("granted hosts", () => {
  it("widen off and allow, leave on as it is, and only for the grants given", () => {
    const grants = createNetworkGrants("Coder");
    expect(grantedPolicy({ mode: "off" }, grants)).toEqual({ mode: "off" });
    grants.hosts.add("pypi.org");
    expect(grantedPolicy({ mode: "off" }, grants)).toEqual({ mode: "allow", hosts: ["pypi.org"] });
    expect(grantedPolicy({ mode: "allow", hosts: ["registry.npmjs.org"] }, grants)).toEqual({
      mode: "allow",
      hosts: ["registry.npmjs.org", "pypi.org"],
    });
    expect(grantedPolicy({ mode: "on" }, grants)).toEqual({ mode: "on" });
    const tools = defaultToolsConfig();
    expect(withGrantedNetwork(tools, grants).shell.sandbox.networkPolicy).toEqual({
      mode: "allow",
      hosts: ["pypi.org"],
    });
    expect(withGrantedNetwork(tools, undefined)).toBe(tools);
    expect(hostsOutsidePolicy(tools.shell.sandbox, grants, ["pypi.org", "a.example.com"])).toEqual([
      "a.example.com",
    ]);
  });
});

describe("request_network", () => {
  it("asks '<agent> wants network access to <hosts>' for hosts outside the policy only", async () => {
    const ctx = makeContext("/tmp", { networkGrants: createNetworkGrants("Coder") });
    const need = await requestNetworkTool.needsApproval?.(
      { hosts: ["registry.npmjs.org"], reason: "npm install" } as never,
      ctx,
    );
    expect(need).toMatchObject({
      summary: "Coder wants network access to registry.npmjs.org",
      reason: "npm install",
    });
    const result = await runTool(requestNetworkTool, { hosts: ["registry.npmjs.org"] }, ctx);
    expect(textOf(result)).toMatch(/allowed for the rest of this run/);
    expect([...(ctx.networkGrants?.hosts ?? [])]).toEqual(["registry.npmjs.org"]);
    expect(
      await requestNetworkTool.needsApproval?.({ hosts: ["registry.npmjs.org"] } as never, ctx),
    ).toBeUndefined();
  });

  it("refuses hosts that are not names, and says so where nothing can be granted", async () => {
    const ctx = makeContext("/tmp");
    // The registry validates arguments against the schema before the tool runs.
    const bad = requestNetworkTool.parameters.safeParse({ hosts: ["https://registry.npmjs.org/x"] });
    expect(bad.success).toBe(false);
    expect(JSON.stringify(bad.error?.issues)).toMatch(/host name/);
    const none = await runTool(requestNetworkTool, { hosts: ["registry.npmjs.org"] }, ctx);
    expect(none.isError).toBe(true);
    expect(textOf(none)).toMatch(/cannot be granted in this run/);
  });
});
