/**
 * The network policy of sandboxed commands, with the real sandbox and the real npm registry (the one
 * outside host this machine reaches): `allow` lets through exactly the named hosts, `off` nothing.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { isAddressAllowed, systemLookup } from "../../../src/tools/builtin/network-guard.js";
import { hostAllowed } from "../../../src/tools/builtin/sandbox/allow-proxy.js";
import { detectSandbox } from "../../../src/tools/builtin/sandbox/detect.js";
import { parseNetworkPolicy } from "../../../src/tools/builtin/sandbox/sandbox-network.js";
import type { NetworkPolicy } from "../../../src/tools/builtin/sandbox/types.js";
import { executeCommandTool } from "../../../src/tools/builtin/shell.js";
import type { ToolContext } from "../../../src/tools/types.js";
import { makeContext, makeTempDir, removeTempDir, runTool, textOf } from "./context.js";

const sandboxed = (await detectSandbox("/usr/bin/bwrap")).available;
let workspace: string;

beforeEach(async () => {
  workspace = await makeTempDir("dimsum-net-");
});
afterEach(async () => {
  await removeTempDir(workspace);
});

// Some machines (this project's CI) reach the registry through a mirror on a reserved address; the
// operator then allows private addresses, as `tools.fetch.allowPrivateNetwork` does for everyone.
const registryAddresses = await systemLookup("registry.npmjs.org").catch(() => []);
const registryIsPublic = registryAddresses.every((a) => isAddressAllowed(a.address).allowed);

function withPolicy(policy: NetworkPolicy, allowPrivate = false): ToolContext {
  const ctx = makeContext(workspace);
  return {
    ...ctx,
    config: {
      ...ctx.config,
      fetch: { ...ctx.config.fetch, allowPrivateNetwork: allowPrivate },
      shell: {
        ...ctx.config.shell,
        allow: [],
        timeoutMs: 60_000,
        sandbox: { ...ctx.config.shell.sandbox, networkPolicy: policy },
      },
    },
  };
}

// Node's fetch ignores proxy variables; curl honours them (as npm, pip and apt do).
const OTHER_HOST = "curl -fsS -m 10 -o /dev/null -w '%{http_code}' https://example.com/";
const NPM_VIEW = "npm view ms version --cache ./.npm-cache";

describe("hostAllowed", () => {
  it("matches exact names and *.suffix subdomains, case-insensitively", () => {
    expect(hostAllowed("registry.npmjs.org", ["registry.npmjs.org"])).toBe(true);
    expect(hostAllowed("Registry.NPMJS.org.", ["registry.npmjs.org"])).toBe(true);
    expect(hostAllowed("evil-registry.npmjs.org", ["registry.npmjs.org"])).toBe(false);
    expect(hostAllowed("a.pypi.org", ["*.pypi.org"])).toBe(true);
    expect(hostAllowed("pypi.org", ["*.pypi.org"])).toBe(false);
    expect(hostAllowed("anything.example", "any")).toBe(true);
  });

  it("parses the CLI's --network values", () => {
    expect(parseNetworkPolicy("off")).toEqual({ mode: "off" });
    expect(parseNetworkPolicy("on")).toEqual({ mode: "on" });
    expect(parseNetworkPolicy("registry.npmjs.org, pypi.org")).toEqual({
      mode: "allow",
      hosts: ["registry.npmjs.org", "pypi.org"],
    });
  });
});

describe.skipIf(!sandboxed)("network policy in the sandbox", () => {
  it('allow ["registry.npmjs.org"]: npm view succeeds, another host is refused', async () => {
    const ctx = withPolicy({ mode: "allow", hosts: ["registry.npmjs.org"] }, !registryIsPublic);
    const npm = await runTool(executeCommandTool, { command: NPM_VIEW }, ctx);
    expect(textOf(npm)).toMatch(/exit code 0\n\[stdout\]\n\d+\.\d+\.\d+/);
    const other = await runTool(executeCommandTool, { command: OTHER_HOST }, ctx);
    expect(other.isError).toBe(true);
    expect(textOf(other)).toContain("403");
  }, 90_000);

  it("a private address stays unreachable even when allowed by name", async () => {
    const ctx = withPolicy({ mode: "allow", hosts: ["127.0.0.1", "localhost"] });
    const result = await runTool(
      executeCommandTool,
      { command: "curl -fsS -m 5 --noproxy '' --proxy http://127.0.0.1:3128 http://localhost:9/" },
      ctx,
    );
    expect(result.isError).toBe(true);
    expect(textOf(result)).toContain("403");
  }, 30_000);

  it("off: npm view and the other host both fail", async () => {
    const ctx = withPolicy({ mode: "off" });
    const npm = await runTool(executeCommandTool, { command: `${NPM_VIEW} --fetch-retries 0` }, ctx);
    expect(npm.isError).toBe(true);
    const other = await runTool(executeCommandTool, { command: OTHER_HOST }, ctx);
    expect(other.isError).toBe(true);
  }, 90_000);
});
