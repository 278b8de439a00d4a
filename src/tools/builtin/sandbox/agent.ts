/**
 * Per-agent sandbox settings: an agent the configuration names in `networkAgents` gets the host's
 * network; otherwise an agent's own network policy (its `network` setting) applies when it has one,
 * else the server's.
 */
import type { ToolsConfig } from "../../types.js";
import { withNetworkPolicy } from "./sandbox-network.js";
import type { NetworkPolicy } from "./types.js";

/** The tools configuration for one team agent's runs. */
export function toolsConfigForAgent(
  tools: ToolsConfig,
  agent: { id: string; network?: NetworkPolicy | undefined },
): ToolsConfig {
  const sandbox = tools.shell.sandbox;
  if (sandbox.network) return tools;
  if (sandbox.networkAgents.includes(agent.id)) {
    return { ...tools, shell: { ...tools.shell, sandbox: { ...sandbox, network: true } } };
  }
  return withNetworkPolicy(tools, agent.network);
}
