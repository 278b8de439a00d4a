/**
 * What the runs of every kind (chat answers, flow steps, direct turns) are built from: the runner's
 * dependencies, the answer a run posts, and the team's tools of a run.
 */

import type { RunAnswers } from "./run-answers.js";
import type { RunTools } from "./run-tools.js";
import type { AgentRunnerDeps } from "./runner-deps.js";

/** The shared parts a kind of run is given. */
export interface RunKindParts {
  deps: AgentRunnerDeps;
  answers: RunAnswers;
  tools: RunTools;
}

/** A kind of run, over the shared parts. */
export abstract class RunKind {
  protected readonly deps: AgentRunnerDeps;
  protected readonly answers: RunAnswers;
  protected readonly tools: RunTools;

  constructor({ deps, answers, tools }: RunKindParts) {
    this.deps = deps;
    this.answers = answers;
    this.tools = tools;
  }
}
