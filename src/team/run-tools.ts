/**
 * The tools the team gives each run besides the agent's own: call_agent, the remote A2A agents (as
 * they are when the run starts), share_file in a chat, and the HTTP tools saved in Settings.
 */

import { createHash } from "node:crypto";
import type { RemoteAgentConfig } from "../a2a/remote-config.js";
import { remoteAgentTools } from "../a2a/remote-tools.js";
import type { Tool } from "../tools/types.js";
import { type CallAgentDeps, type CallScope, createCallAgentTool } from "./call-agent-tool.js";
import { callableAgents } from "./run-visibility.js";
import type { AgentRunnerDeps } from "./runner-deps.js";
import { createShareFileTool, mayShareFiles } from "./share-file-tool.js";

/** Runs nested under a calling run: a called agent, a remote A2A agent. */
export interface NestedCalls {
  runNested: CallAgentDeps["runNested"];
  runRemote(remote: RemoteAgentConfig, scope: CallScope, task: string, signal: AbortSignal): Promise<string>;
}

/**
 * Where a run started by a message or a caller outside the team stands: at the top of its call
 * chain, alone in it.
 */
export function topScope(
  runId: string,
  channelId: string,
  triggerMessageId: number,
  agentId: string,
  requestedBy: string,
  workspace: string,
): CallScope {
  return {
    channelId,
    triggerMessageId,
    parentRunId: runId,
    depth: 0,
    chain: [agentId],
    requestedBy,
    workspace,
  };
}

/** Builds the team's tools of a run. */
export class RunTools {
  readonly #deps: AgentRunnerDeps;
  readonly #nested: NestedCalls;

  constructor(deps: AgentRunnerDeps, nested: NestedCalls) {
    this.#deps = deps;
    this.#nested = nested;
  }

  /**
   * call_agent and the remote A2A agents' tools of a run (the remote agents as they are now);
   * `scope.parentRunId` is the run's own id, and requests for input go to `scope.rootRunId` (default: it).
   */
  async callTools(scope: CallScope): Promise<Tool[]> {
    const rootRunId = scope.rootRunId ?? scope.parentRunId;
    const callAgent = this.#callTool(scope, rootRunId);
    const remotes = (await this.#deps.remoteAgents?.()) ?? [];
    const http = [
      ...(await this.#shareTool(scope.channelId, scope.chain)),
      ...((await this.#deps.httpTools?.()) ?? []),
    ];
    if (remotes.length === 0) return [callAgent, ...http];
    const { present: _present, ...rest } = scope;
    const remoteScope: CallScope = { ...rest, rootRunId };
    return [
      callAgent,
      ...remoteAgentTools(remotes, (remote, task, signal) =>
        this.#nested.runRemote(remote, remoteScope, task, signal),
      ),
      ...http,
    ];
  }

  /** share_file for a chat run of an agent that may read its workspace. */
  async #shareTool(channelId: string, chain: readonly string[]): Promise<Tool[]> {
    const limits = this.#deps.shareFileLimits;
    const agentId = chain[chain.length - 1];
    if (!limits || channelId === "" || !agentId) return [];
    const agent = await this.#deps.store.agents.get(agentId);
    if (!agent || !mayShareFiles(agent)) return [];
    const { store, now } = this.#deps;
    return [
      createShareFileTool({
        limits,
        put: async ({ name, ...file }) => {
          const id = createHash("sha256").update(file.data).digest("hex");
          return store.attachments.put(
            { id, ...file },
            { channelId, name, by: `agent:${agentId}`, at: now() },
          );
        },
      }),
    ];
  }

  #callTool(scope: CallScope, rootRunId: string): Tool {
    const { store } = this.#deps;
    const { present, ...rest } = scope;
    return createCallAgentTool(
      {
        ...callableAgents(store, this.#deps.runtime.viewerOf, scope.requestedBy),
        runNested: (target, nestedScope, task, signal, restarted) =>
          this.#nested.runNested(target, nestedScope, task, signal, restarted),
      },
      { ...rest, ...(present ? { present: true } : {}), rootRunId },
    );
  }
}
