/**
 * request_network: the agent asks for hosts its commands cannot reach under the run's network
 * policy. The call always waits for a person ("<agent> wants network access to <hosts>"): approved,
 * the hosts are allowed for the rest of this run (execute_command and process_start); rejected,
 * the model reads that it was declined. Hosts already allowed need no approval.
 */
import * as z from "zod";
import { defineTool, type ToolContext, type ZodTool } from "../types.js";
import { hostsOutsidePolicy } from "./sandbox/network-grants.js";
import { isNetworkHost, NETWORK_HOST_HINT } from "./sandbox/network-hosts.js";
import { errorResult, toolFailure } from "./tool-error.js";

export const REQUEST_NETWORK_TOOL = "request_network";

const params = z.object({
  hosts: z
    .array(z.string().trim().toLowerCase().refine(isNetworkHost, `not a host name: ${NETWORK_HOST_HINT}`))
    .min(1)
    .max(20)
    .describe('Host names the commands need, e.g. ["registry.npmjs.org"]; no scheme, port or path'),
  reason: z.string().max(500).optional().describe("Why, in one sentence, for the person who approves"),
});

function outside(ctx: ToolContext, hosts: readonly string[]): string[] {
  return hostsOutsidePolicy(ctx.config.shell.sandbox, ctx.networkGrants, hosts);
}

/** The approval text: "<agent> wants network access to <hosts>". */
export function networkRequestSummary(agent: string, hosts: readonly string[]): string {
  return `${agent} wants network access to ${hosts.join(", ")}`;
}

export const requestNetworkTool: ZodTool = defineTool({
  name: REQUEST_NETWORK_TOOL,
  description:
    "Ask the user to let this run's sandboxed commands (execute_command, process_start) reach hosts its " +
    "network policy does not allow, e.g. a package registry. Call it when a command failed because the " +
    "sandbox's network policy refused a host. Approved, the hosts are reachable for the rest of this run.",
  parameters: params,
  concurrencySafe: false,
  async needsApproval(args, ctx) {
    const missing = outside(ctx, args.hosts);
    if (missing.length === 0 || !ctx.networkGrants) return undefined;
    return {
      summary: networkRequestSummary(ctx.networkGrants.agent, missing),
      reason: args.reason?.trim() || "the run's network policy does not allow these hosts",
      unattendedHint: "ask the operator to allow the hosts in the agent's network setting or with --network",
    };
  },
  async execute(args, ctx) {
    const missing = outside(ctx, args.hosts);
    if (missing.length === 0) {
      return { content: `Already allowed in this run: ${args.hosts.join(", ")}.`, data: { granted: [] } };
    }
    if (!ctx.networkGrants) {
      return errorResult(
        toolFailure(
          "Network access cannot be granted in this run.",
          "ask the operator to set the agent's network (or --network in the CLI)",
        ),
      );
    }
    for (const host of missing) ctx.networkGrants.hosts.add(host);
    return {
      content: `Network access to ${missing.join(", ")} is allowed for the rest of this run (private addresses stay unreachable). Run the command again.`,
      data: { granted: missing },
    };
  },
});
