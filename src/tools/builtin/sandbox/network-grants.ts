/**
 * Hosts a person allowed for one run after the agent asked (`request_network`): they widen the
 * run's network policy for the rest of that run only. Private addresses stay refused by the proxy
 * whatever is granted (unless the operator allows them).
 */

import type { ToolsConfig } from "../../types.js";
import { hostAllowed } from "./allow-proxy.js";
import { effectivePolicy } from "./sandbox-network.js";
import type { NetworkPolicy, ShellSandboxConfig } from "./types.js";

/** The hosts granted in one run, and who asks (the agent's name, shown in the approval). */
export interface NetworkGrants {
  readonly agent: string;
  readonly hosts: Set<string>;
}

/** Empty grants for a run of `agent`. */
export function createNetworkGrants(agent: string): NetworkGrants {
  return { agent, hosts: new Set() };
}

/** The policy with the granted hosts added (`on` and the host network stay as they are). */
export function grantedPolicy(policy: NetworkPolicy, grants: NetworkGrants | undefined): NetworkPolicy {
  if (!grants || grants.hosts.size === 0 || policy.mode === "on") return policy;
  const base = policy.mode === "allow" ? policy.hosts : [];
  return { mode: "allow", hosts: [...new Set([...base, ...grants.hosts])] };
}

/** The sandbox settings a command of the run launches with: its policy widened by the grants. */
export function sandboxWithGrants<T extends Pick<ShellSandboxConfig, "network" | "networkPolicy">>(
  sandbox: T,
  grants: NetworkGrants | undefined,
): T {
  if (sandbox.network || !grants || grants.hosts.size === 0) return sandbox;
  return { ...sandbox, networkPolicy: grantedPolicy(effectivePolicy(sandbox), grants) };
}

/** The hosts of `wanted` the run's commands cannot reach yet. */
export function hostsOutsidePolicy(
  sandbox: Pick<ShellSandboxConfig, "network" | "networkPolicy">,
  grants: NetworkGrants | undefined,
  wanted: readonly string[],
): string[] {
  const policy = grantedPolicy(effectivePolicy(sandbox), grants);
  if (policy.mode === "on") return [];
  const hosts = policy.mode === "allow" ? policy.hosts : [];
  return wanted.filter((h) => !hostAllowed(h, hosts));
}

/** The tools configuration with the run's grants in its sandbox (what a process starts with). */
export function withGrantedNetwork(tools: ToolsConfig, grants: NetworkGrants | undefined): ToolsConfig {
  const sandbox = sandboxWithGrants(tools.shell.sandbox, grants);
  return sandbox === tools.shell.sandbox ? tools : { ...tools, shell: { ...tools.shell, sandbox } };
}
