/** Per-agent sandbox settings: an agent the configuration names in `networkAgents` gets the network. */
import type { ToolsConfig } from "../../types.js";

/** The tools configuration for one team agent's runs. */
export function toolsConfigForAgent(tools: ToolsConfig, agentId: string): ToolsConfig {
  const sandbox = tools.shell.sandbox;
  if (sandbox.network || !sandbox.networkAgents.includes(agentId)) return tools;
  return { ...tools, shell: { ...tools.shell, sandbox: { ...sandbox, network: true } } };
}
