/**
 * The network side of one sandboxed command or process: its bridge folder (when it needs one) and,
 * under an `allow` or `on` policy, the allow-list proxy behind it. Under `off` (and with the
 * operator's `network: true`, which shares the host's network) no proxy runs.
 */
import { join } from "node:path";
import type { ToolsConfig } from "../../types.js";
import { type AllowProxy, startAllowProxy } from "./allow-proxy.js";
import { createBridgeFolder } from "./bridge.js";
import type { NetworkPolicy, ShellSandboxConfig } from "./types.js";

export interface SandboxNetwork {
  /** What `planLaunch` takes as `bridge`. */
  bridge: { dir: string; proxy: boolean };
  close(): Promise<void>;
}

/** The policy in force: the operator's `network: true` is the host's network, no proxy. */
export function effectivePolicy(
  sandbox: Pick<ShellSandboxConfig, "network" | "networkPolicy">,
): NetworkPolicy {
  if (sandbox.network) return { mode: "on" };
  return sandbox.networkPolicy ?? { mode: "off" };
}

/**
 * Prepares the bridge of one launch. `ports`: the command's ports must be reachable from Dimsum (a
 * long-running process). Undefined when neither ports nor a proxy are needed.
 */
export async function openSandboxNetwork(
  sandbox: Pick<ShellSandboxConfig, "network" | "networkPolicy">,
  options: { ports: boolean; allowPrivate: boolean },
): Promise<SandboxNetwork | undefined> {
  const policy = sandbox.network
    ? { mode: "off" as const }
    : (sandbox.networkPolicy ?? { mode: "off" as const });
  const proxied = policy.mode !== "off";
  if (!proxied && !options.ports) return undefined;
  const folder = createBridgeFolder();
  let proxy: AllowProxy | undefined;
  try {
    if (proxied) {
      proxy = await startAllowProxy(join(folder.dir, "proxy.sock"), {
        hosts: policy.mode === "on" ? "any" : policy.hosts,
        allowPrivate: options.allowPrivate,
      });
    }
  } catch (err) {
    folder.dispose();
    throw err;
  }
  return {
    bridge: { dir: folder.dir, proxy: proxied },
    close: async () => {
      await proxy?.close();
      folder.dispose();
    },
  };
}

/** Parses `off`, `on`, or a comma-separated host list (the CLI's `--network`). */
export function parseNetworkPolicy(text: string): NetworkPolicy {
  const value = text.trim();
  if (value === "off" || value === "") return { mode: "off" };
  if (value === "on") return { mode: "on" };
  const hosts = value
    .split(",")
    .map((h) => h.trim())
    .filter((h) => h !== "");
  return { mode: "allow", hosts };
}

/** The tools configuration with a run's network policy (the CLI's `--network`, an agent's setting). */
export function withNetworkPolicy(tools: ToolsConfig, policy: NetworkPolicy | undefined): ToolsConfig {
  if (!policy) return tools;
  return { ...tools, shell: { ...tools.shell, sandbox: { ...tools.shell.sandbox, networkPolicy: policy } } };
}

/** `--network` as given, parsed; undefined when absent. */
export function networkOption(value: string | undefined): NetworkPolicy | undefined {
  return value === undefined ? undefined : parseNetworkPolicy(value);
}
