/**
 * One agent turn for the team: the agent's model, and its tools and context layers from the capability
 * assembly (allow/deny lists, memory of the person the run acts for, knowledge bases, skills, SOUL.md as
 * the persona), run through the persisted session runner, with agent events forwarded as team events.
 */

import type { ApprovalDecision, Approver, PendingApproval } from "../agent/approvals.js";
import type { AgentEvent } from "../agent/events.js";
import type { ObserveRun } from "../agent/run-observer.js";
import { runSessionTurn } from "../agent/session-runner.js";
import type { SteeringSource } from "../agent/steering.js";
import type { OutputSpec } from "../agent/structured-output.js";
import { secretsFrom } from "../agent/trace-recorder.js";
import type { CapabilityAssembly, RunCapabilities } from "../capabilities/index.js";
import type { DimsumConfig } from "../config/load-config.js";
import { DimsumError } from "../errors.js";
import type { FallbackSettings } from "../llm/fallback-chain.js";
import { stream as defaultStream } from "../llm/providers.js";
import type { ModelSpec, StreamFunction, StreamOptions, Usage, UserMessage } from "../llm/types.js";
import type { SessionRef, SessionStore } from "../store/types.js";
import type { BrowserSessions } from "../tools/browser/browser-sessions.js";
import { toolsConfigForAgent } from "../tools/builtin/sandbox/index.js";
import { createNetworkGrants } from "../tools/builtin/sandbox/network-grants.js";
import { chatProcessKey, type ProcessManager } from "../tools/process/process-manager.js";
import type { ElicitPerson, SamplePerson, Tool } from "../tools/types.js";
import type { BudgetGate, BudgetGuard } from "./budget-guard.js";
import type { ChatFiles } from "./chat-files.js";
import { DeltaBatcher } from "./delta-batcher.js";
import type { Elicitations } from "./elicitations.js";
import type { PersonaStore } from "./personas.js";
import { type ViewerOf, viewerLookup } from "./run-visibility.js";
import { personSampler } from "./sampling-requests.js";
import { RENDERING_NOTE } from "./team-prompt.js";
import type { AgentRecord, TeamEvent } from "./types.js";

/** What every turn shares, built once per team. */
export interface TurnRuntime {
  /** Text deltas of one answer merged into at most one event per this many ms (default 50). */
  deltaFrameMs?: number;
  store: SessionStore;
  config: DimsumConfig;
  personas: PersonaStore;
  /** Builds each run's tools and context layers (the same assembly the CLI uses). */
  capabilities: CapabilityAssembly;
  resolveModel: (agent: AgentRecord) => ModelSpec | Promise<ModelSpec>;
  /** The budgets turns run under (budget-guard.ts); none: unlimited. */
  budgets?: BudgetGuard;
  emit: (event: TeamEvent) => void;
  stream?: StreamFunction;
  streamOptions?: Omit<StreamOptions, "signal" | "toolChoice">;
  /** Provider cooldowns of model chains, shared by every run of the team (and instance, with Redis). */
  fallback?: FallbackSettings;
  /**
   * Tools an agent gets only when its `toolsAllow` names them explicitly (e.g. `manage_schedule`),
   * acting for the person who started the run.
   */
  grantedTools?: (agent: AgentRecord, requestedBy: string) => Tool[] | Promise<Tool[]>;
  /** A person as a viewer of agents, knowledge bases and MCP servers (default: a member). */
  viewerOf?: ViewerOf;
  /** Whether a person may read the knowledge bases (guests may not; default: everyone). */
  canReadKnowledge?: (userId: string) => boolean | Promise<boolean>;
  /** Session owners of the person's conversations, for `recall_search` (default: the person's own). */
  recallOwners?: (userId: string) => string[];
  /**
   * Puts MCP servers' requests for input, and for approval to use the agent's model (sampling), to
   * the person of runs they are present for.
   */
  elicitations?: Elicitations;
  /** Another reader of every run's events (OpenTelemetry export). */
  observe?: ObserveRun;
  /** The chats' long-running processes (process_* tools), when the server runs them. */
  processes?: ProcessManager;
  /** The chats' browser pages (the browser tool), when the server offers it. */
  browser?: BrowserSessions;
  /** Where tools put files into a chat on their own (the browser's screenshots). */
  chatFiles?: ChatFiles;
}

export interface TurnRequest {
  agent: AgentRecord;
  runId: string;
  /** Channel the events belong to ("" for runs outside channels). */
  channelId: string;
  ref: SessionRef;
  /** What the person said: text, or text with images and files. */
  input: UserMessage["content"];
  /** The team part of the system prompt; the persona follows it. */
  system: string;
  workspace: string;
  signal: AbortSignal;
  /** Tools beyond the built-ins (call_agent), still subject to the agent's allow/deny lists. */
  extraTools?: Tool[];
  /**
   * The person the run acts for: whose message started it (a flow's starter, the caller of
   * call_agent, a schedule's owner). Their memories are recalled and written; "system" or absent: none.
   */
  requestedBy?: string;
  /** Whose budgets the turn counts against when not `requestedBy` (a `/v1` caller). */
  billedTo?: string;
  /**
   * The person is at the chat (they just posted, regenerated or edited in the web UI), so MCP
   * servers' requests for input are put to them; otherwise (schedules, /v1, connectors, flows)
   * such requests are declined.
   */
  present?: boolean;
  /**
   * The run whose answer shows those requests when it is not this one (a call_agent's nested run:
   * the outermost run the person sees); default: this run.
   */
  askIn?: string;
  onDelta?: (text: string) => void;
  /** The session is read by several people (a group): the turn context is sent, never stored. */
  sharedSession?: boolean;
  /** Hold the answer to this JSON Schema (over the agent's own answer format). */
  output?: OutputSpec;
  /** Every agent event as forwarded (deltas merged per tick), e.g. to build the message's parts. */
  onEvent?: (event: AgentEvent, seq: number) => void;
  /**
   * Decides calls that need approval (see `runAgent`); `wait` ends the turn waiting. Absent: such
   * calls are refused with the reason (nobody can approve them).
   */
  approve?: Approver;
  /** Messages of the person that reach the turn while it runs. */
  steering?: SteeringSource;
  /** Continue the stored run from its checkpoint (see `runSessionTurn`). */
  resume?: { reason: "approval" | "restart"; decisions?: Record<string, ApprovalDecision> };
  /** The agent event number to continue from (a resumed run's events follow the earlier ones). */
  firstSeq?: number;
  /** Told the model (`provider:model`) once it is resolved, before the turn runs. */
  onModel?: (model: string) => void;
}

export interface TurnResult {
  /** The final answer (what call_agent and flow steps hand on). */
  answer: string;
  /** Everything the agent said, turn after turn, as streamed live: what the channel stores. */
  text: string;
  usage: Usage;
  /** `provider:model` that answered. */
  model?: string;
  /** USD at the model's prices, when known. */
  costUsd?: number;
  /** The turn stopped to wait for these approvals; its checkpoint is stored. */
  waiting?: PendingApproval[];
}

/** The person a run acts for, if any. */
function personOf(request: TurnRequest): string | undefined {
  const who = request.requestedBy;
  return who === undefined || who === "" || who === "system" ? undefined : who;
}

/**
 * The tools and context layers of `agent` acting for `requestedBy` (a user id, or "system"): the
 * capability assembly under the agent's lists, plus the tools granted to it. Runs and the MCP Apps
 * of their answers both take their tools from here.
 */
export async function agentCapabilities(
  runtime: TurnRuntime,
  agent: AgentRecord,
  requestedBy: string,
  extraTools: readonly Tool[] = [],
  /** Whose MCP servers a run for no one may use (a `/v1` caller, who is billed but has no memory). */
  billedTo?: string,
): Promise<RunCapabilities> {
  const person = requestedBy === "" || requestedBy === "system" ? undefined : requestedBy;
  const viewerId = person ?? billedTo;
  const granted = (await runtime.grantedTools?.(agent, requestedBy)) ?? [];
  return runtime.capabilities.forRun({
    ...(person !== undefined ? { person } : {}),
    ...(viewerId !== undefined
      ? { viewer: await (runtime.viewerOf ?? viewerLookup(undefined))(viewerId) }
      : {}),
    agentId: agent.id,
    memory: agent.memory,
    knowledge: person !== undefined && ((await runtime.canReadKnowledge?.(person)) ?? true),
    ...(agent.knowledgeBases ? { knowledgeBases: agent.knowledgeBases } : {}),
    ...(agent.toolsAllow ? { allow: agent.toolsAllow } : {}),
    deny: agent.toolsDeny,
    runTools: [...extraTools, ...granted],
    skills: agent.skills,
    persona: async () => (await runtime.personas.read(agent.id)).content,
    ...(person !== undefined && runtime.recallOwners
      ? { recallOwners: async () => runtime.recallOwners?.(person) ?? [person] }
      : {}),
  });
}

function isAppOnly(tool: Tool): boolean {
  return tool.kind === "json" && tool.mcp?.appOnly === true;
}

/** Runs the turn to its end; throws a DimsumError when the agent run fails or is aborted. */
export async function runAgentTurn(runtime: TurnRuntime, request: TurnRequest): Promise<TurnResult> {
  // Refused here, before anything runs, when a hard limit is reached; counted call by call.
  const gate = await runtime.budgets?.admit({
    person: request.billedTo ?? personOf(request),
    agentId: request.agent.id,
    channelId: request.channelId,
    ...(request.resume ? { resumed: true } : {}),
  });
  try {
    return await runTurn(runtime, request, gate);
  } finally {
    await gate?.end();
  }
}

async function runTurn(
  runtime: TurnRuntime,
  request: TurnRequest,
  gate: BudgetGate | undefined,
): Promise<TurnResult> {
  const { runId, channelId } = request;
  // Past a soft limit with a cheaper model set, the turn uses it instead of the agent's.
  const agent = gate?.cheaperModel ? { ...request.agent, model: gate.cheaperModel } : request.agent;
  const model = await runtime.resolveModel(agent);
  request.onModel?.(`${model.provider}:${model.id}`);
  const person = personOf(request);
  const capabilities = await agentCapabilities(
    runtime,
    agent,
    request.requestedBy ?? "system",
    request.extraTools,
    request.billedTo,
  );
  const { layers } = capabilities;
  // Tools only an MCP App may call stay out of the model's list (the app reaches them through McpApps).
  const all = capabilities.tools.list();
  const tools = all.some(isAppOnly)
    ? capabilities.tools.subset(all.filter((t) => !isAppOnly(t)).map((t) => t.name))
    : capabilities.tools;
  const broker = runtime.elicitations;
  const askable = broker && person !== undefined && request.present && channelId !== "" ? broker : undefined;
  const scope = {
    channelId,
    runId,
    userId: person ?? "",
    ...(request.askIn && request.askIn !== runId ? { shownIn: request.askIn } : {}),
  };
  const elicit: ElicitPerson | undefined = askable
    ? (server, input, signal) =>
        // Stopping the run withdraws the question even if the server does not cancel it.
        askable.ask(scope, server, input, AbortSignal.any([signal, request.signal]))
    : undefined;
  const sample: SamplePerson | undefined = askable
    ? personSampler({
        broker: askable,
        scope,
        model,
        stream: runtime.stream ?? defaultStream,
        runSignal: request.signal,
      })
    : undefined;
  let result: TurnResult | undefined;
  let seq = request.firstSeq ?? 0;
  const forward = (event: AgentEvent): void => {
    seq++;
    runtime.emit({ type: "agent", channelId, runId, seq, event });
    request.onEvent?.(event, seq);
  };
  const deltas = new DeltaBatcher(forward, runtime.deltaFrameMs);
  // Past a budget's soft limit the answer says so, with the cheaper model it moved to.
  if (gate?.cheaperModel && gate.softReason) {
    forward({
      type: "model_fallback",
      runId,
      from: request.agent.model ?? "the default model",
      to: `${model.provider}:${model.id}`,
      reason: gate.softReason,
      code: "rate_limited",
      skipped: true,
    });
  }
  // Text said before a tool call stays part of the message; each later turn starts a new paragraph.
  let shown = "";
  let newTurn = false;
  try {
    for await (const event of runSessionTurn({
      store: runtime.store,
      ref: request.ref,
      model,
      input: request.input,
      system: `${request.system}\n${RENDERING_NOTE}`,
      tools,
      toolEnvironment: {
        workspace: request.workspace,
        config: toolsConfigForAgent(runtime.config.tools, agent),
        networkGrants: createNetworkGrants(agent.name),
        ...(elicit ? { elicit } : {}),
        ...(sample ? { sample } : {}),
        ...(runtime.processes && channelId !== ""
          ? { processes: { manager: runtime.processes, key: chatProcessKey(channelId) } }
          : {}),
        ...(runtime.browser && channelId !== ""
          ? {
              browser: {
                sessions: runtime.browser,
                key: chatProcessKey(channelId),
                ...(runtime.chatFiles ? { attach: runtime.chatFiles(channelId, agent.id) } : {}),
              },
            }
          : {}),
      },
      maxIterations: runtime.config.maxIterations,
      keepImagesTurns: runtime.config.keepImagesTurns,
      signal: request.signal,
      stream: runtime.stream,
      ...(runtime.fallback ? { fallback: runtime.fallback } : {}),
      streamOptions: agent.reasoning
        ? { ...runtime.streamOptions, reasoning: { effort: agent.reasoning } }
        : runtime.streamOptions,
      layers,
      secrets: secretsFrom(runtime.config.env, [model.apiKey]),
      runId,
      askFirst: agent.askFirst,
      ...(request.approve ? { approve: request.approve } : {}),
      ...(request.steering ? { steering: request.steering } : {}),
      ...(request.resume ? { resume: request.resume } : {}),
      ...(runtime.observe ? { observe: runtime.observe, agentId: agent.id, agentName: agent.name } : {}),
      ...outputOf(request, agent),
      ...(request.sharedSession ? { storeTurnContext: false } : {}),
    })) {
      if (event.type === "text_delta") {
        const text = newTurn && shown !== "" && !shown.endsWith("\n\n") ? `\n\n${event.text}` : event.text;
        newTurn = false;
        shown += text;
        deltas.push(event);
        request.onDelta?.(text);
        continue;
      }
      if (event.type === "reasoning_delta") {
        deltas.push(event);
        continue;
      }
      deltas.flush();
      // The `messages` units repeat what the deltas and tool events said; they stay in the trace.
      // Checkpoints are the store's; a waiting run says so in its run state.
      if (event.type !== "messages" && event.type !== "checkpoint" && event.type !== "waiting")
        forward(event);
      if (event.type === "usage") await gate?.counted(event);
      switch (event.type) {
        case "waiting":
          result = { answer: "", text: shown, usage: event.checkpoint.usage, waiting: event.approvals };
          break;
        case "turn_start":
          newTurn = event.iteration > 1;
          // A hard limit passed during the turn: the step under way finished, no further one starts.
          if (newTurn) gate?.checkStep();
          break;
        case "done":
          result =
            event.output === undefined
              ? { answer: event.answer, text: shown.trim() === "" ? event.answer : shown, usage: event.usage }
              : // A structured answer: the validated JSON, not an invalid first try streamed before it.
                {
                  answer: JSON.stringify(event.output),
                  text: `\`\`\`json\n${JSON.stringify(event.output, null, 2)}\n\`\`\``,
                  usage: event.usage,
                };
          result.model = `${model.provider}:${model.id}`;
          if (event.costUsd !== undefined) result.costUsd = event.costUsd;
          break;
        case "error":
          throw new DimsumError(event.code, event.message, event.hint ? { hint: event.hint } : {});
      }
    }
  } finally {
    deltas.flush();
  }
  if (!result) throw new DimsumError("internal", `The run of @${agent.id} ended without an answer.`);
  return result;
}

/** The answer's schema: the request's, else the agent's answer format; none for free text. */
function outputOf(request: TurnRequest, agent: AgentRecord): { output?: OutputSpec } {
  if (request.output) return { output: request.output };
  return agent.answerFormat ? { output: { schema: agent.answerFormat } } : {};
}
