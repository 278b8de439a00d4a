/**
 * One tool per remote A2A agent (`a2a_<name>`): the calling agent gives a task (and context), the
 * remote agent's answer is the tool's result. How the call runs is the caller's: the team shows it as
 * a nested run in the chat; without one it is simply asked.
 */
import * as z from "zod";
import { defineTool, type Tool } from "../tools/types.js";
import type { RemoteAgentConfig } from "./remote-config.js";

/** Runs the remote agent on the task; resolves to its answer, throws when it fails. */
export type RemoteAgentRunner = (
  remote: RemoteAgentConfig,
  task: string,
  signal: AbortSignal,
) => Promise<string>;

// A remote agent may work for a while; the registry's 60 s default would cut it short.
const REMOTE_TIMEOUT_MS = 15 * 60_000;

const parameters = z.object({
  task: z.string().min(1).describe("What the agent should do, stated fully: it sees nothing else"),
  context: z.string().optional().describe("Background the agent needs: facts, text to work on, constraints"),
});

/** The tool name of a remote agent. */
export function remoteToolName(remote: Pick<RemoteAgentConfig, "name">): string {
  return `a2a_${remote.name.replaceAll("-", "_")}`;
}

/** Asks the remote agent directly (no nested run): the CLI's runner. */
export const askDirectly: RemoteAgentRunner = async (remote, task, signal) => {
  const { askRemoteAgent } = await import("./remote-agent.js");
  const stream = askRemoteAgent(remote, task, signal);
  for (;;) {
    const next = await stream.next();
    if (next.done) return next.value;
  }
};

/** The tools of the remote agents, each run by `run`. */
export function remoteAgentTools(remotes: readonly RemoteAgentConfig[], run: RemoteAgentRunner): Tool[] {
  return remotes.map((remote) =>
    defineTool({
      name: remoteToolName(remote),
      description:
        `Ask the remote agent "${remote.name}" (over A2A) to do a task and wait for its answer.` +
        (remote.description ? ` ${remote.description}` : "") +
        " Give a complete task and any context it needs: it sees nothing of this conversation.",
      parameters,
      timeoutMs: REMOTE_TIMEOUT_MS,
      execute: (args, ctx) =>
        run(
          remote,
          args.context?.trim() ? `${args.task}\n\nContext:\n${args.context}` : args.task,
          ctx.signal,
        ),
    }),
  );
}
