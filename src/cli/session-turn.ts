/** The options of one turn that `dimsum run --session` or `dimsum chat` takes in a stored session. */
import type { SessionTurnOptions } from "../agent/session-runner.js";
import { networkOption, withNetworkPolicy } from "../tools/builtin/sandbox/sandbox-network.js";
import type { ApprovalRequest } from "../tools/types.js";
import type { SessionSetup } from "./session-setup.js";
import { cliToolEnvironment } from "./session-tools.js";

/** What the command line adds to the session's setup for one turn. */
export interface CliTurn {
  input: SessionTurnOptions["input"];
  system: string;
  /** `--max-iterations`; the configured number without it. */
  maxIterations?: number;
  /** `--network`: the sandbox's network policy for this turn. */
  network?: string;
  workspace: string;
  /** Asks before a dangerous command; without it such commands are refused. */
  approve?: (request: ApprovalRequest) => Promise<boolean>;
  signal: AbortSignal;
}

/** A turn in the setup's session, with its store, tools, model chain and telemetry. */
export function sessionTurnOptions(setup: SessionSetup, turn: CliTurn): SessionTurnOptions {
  return {
    store: setup.store,
    ref: setup.ref,
    model: setup.model,
    input: turn.input,
    system: turn.system,
    keepImagesTurns: setup.config.keepImagesTurns,
    tools: setup.tools,
    maxIterations: turn.maxIterations ?? setup.config.maxIterations,
    signal: turn.signal,
    toolEnvironment: {
      workspace: turn.workspace,
      config: withNetworkPolicy(setup.config.tools, networkOption(turn.network)),
      // The session's processes and browser (--processes, --browser) and the run's network grants.
      ...cliToolEnvironment(setup.environment),
      ...(turn.approve ? { approve: turn.approve } : {}),
    },
    calibrator: setup.calibrator,
    secrets: setup.secrets,
    layers: setup.layers,
    fallback: setup.fallback,
    ...(setup.observe ? { observe: setup.observe } : {}),
  };
}
