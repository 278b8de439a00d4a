/**
 * `call_agent`: one agent asks another and gets its answer as the tool result. The called agent runs
 * as a nested team run (visible to the channel, depth ≥ 1). Nesting deeper than three levels and
 * cycles (an agent already in the call chain) are refused with errors the model can act on.
 */
import * as z from "zod";
import { DimsumError } from "../errors.js";
import { defineTool, type Tool } from "../tools/types.js";
import type { AgentRecord } from "./types.js";

export const CALL_AGENT_TOOL = "call_agent";
/** Deepest allowed nesting: a run started by a message is level 0, its callee level 1, ... */
export const MAX_CALL_DEPTH = 3;
// A nested agent may use tools and call others; the registry's 60 s default would cut it short.
const CALL_TIMEOUT_MS = 15 * 60_000;

/** Where the calling run stands. */
export interface CallScope {
  channelId: string;
  triggerMessageId: number;
  parentRunId: string;
  /** Depth of the calling run. */
  depth: number;
  /** Agent ids from the outermost run to the caller. */
  chain: string[];
  requestedBy: string;
  workspace: string;
  /**
   * The person is at the chat of the outermost run: MCP servers' requests (input, sampling) during
   * nested runs are put to them, shown in that run's answer (`rootRunId`).
   */
  present?: boolean;
  /** The outermost run of the call chain (a message's run). */
  rootRunId?: string;
}

export interface CallAgentDeps {
  getAgent(id: string): Promise<AgentRecord | undefined>;
  listAgentIds(): Promise<string[]>;
  /**
   * Runs the target as a nested run of the caller and returns its answer; throws when it fails.
   * `restarted`: the call was running when the process died; its nested run goes on from its
   * checkpoint (never started afresh, so a tool it ran does not run twice).
   */
  runNested(
    target: AgentRecord,
    scope: CallScope,
    task: string,
    signal: AbortSignal,
    restarted?: boolean,
  ): Promise<string>;
}

const parameters = z.object({
  agentId: z.string().min(1).describe("Id of the agent to ask, e.g. coder"),
  task: z.string().min(1).describe("What the agent should do, stated fully: it sees nothing else"),
  context: z.string().optional().describe("Background the agent needs: facts, text to work on, constraints"),
});

/** The task text the called agent receives. */
export function callInput(task: string, context: string | undefined): string {
  return context?.trim() ? `${task}\n\nContext:\n${context}` : task;
}

/** Builds the call_agent tool for one calling run. */
export function createCallAgentTool(deps: CallAgentDeps, scope: CallScope): Tool {
  return defineTool({
    name: CALL_AGENT_TOOL,
    description:
      "Ask another agent of the team to do a task and wait for its answer, which is returned as this tool's result. Give the agent id, a complete task, and any context it needs.",
    parameters,
    timeoutMs: CALL_TIMEOUT_MS,
    resumesAfterRestart: true,
    async execute(args, ctx) {
      const id = args.agentId.trim().replace(/^@/, "").toLowerCase();
      const target = await deps.getAgent(id);
      if (!target) {
        const ids = await deps.listAgentIds();
        throw new DimsumError("tool_failed", `Unknown agent "${args.agentId}".`, {
          hint: `call one of: ${ids.join(", ") || "(no agents exist)"}`,
        });
      }
      const path = [...scope.chain, target.id].map((a) => `@${a}`).join(" → ");
      if (scope.chain.includes(target.id)) {
        throw new DimsumError(
          "tool_failed",
          `call_agent cycle refused: ${path} (@${target.id} is already in the call chain).`,
          {
            hint: "answer yourself or ask an agent that is not in the chain",
          },
        );
      }
      if (scope.depth + 1 > MAX_CALL_DEPTH) {
        throw new DimsumError(
          "tool_failed",
          `call_agent nesting is limited to ${MAX_CALL_DEPTH} levels; calling @${target.id} here would be level ${scope.depth + 1} (${path}).`,
          { hint: "finish the task yourself with what you have" },
        );
      }
      return deps.runNested(target, scope, callInput(args.task, args.context), ctx.signal, ctx.restarted);
    },
  });
}
