/**
 * One agent turn for the team: the agent's model, its allowed tools, its SOUL.md as the persona layer,
 * run through the persisted session runner, with agent events forwarded as team events of the run.
 */
import { combineLayerProviders, type LayerProvider } from "../agent/layered-context.js";
import { runSessionTurn } from "../agent/session-runner.js";
import { secretsFrom } from "../agent/trace-recorder.js";
import type { DimsumConfig } from "../config/load-config.js";
import { DimsumError } from "../errors.js";
import type { ModelSpec, StreamFunction, StreamOptions, Usage } from "../llm/types.js";
import type { SessionRef, SessionStore } from "../store/types.js";
import type { ToolRegistry } from "../tools/registry.js";
import type { Tool } from "../tools/types.js";
import { DeltaBatcher } from "./delta-batcher.js";
import type { PersonaFiles } from "./personas.js";
import type { AgentRecord, TeamEvent } from "./types.js";

/** What every turn shares, built once per team. */
export interface TurnRuntime {
  store: SessionStore;
  config: DimsumConfig;
  personas: PersonaFiles;
  /** Every built-in tool; each agent gets the subset it is allowed. */
  baseTools: ToolRegistry;
  resolveModel: (agent: AgentRecord) => ModelSpec;
  emit: (event: TeamEvent) => void;
  stream?: StreamFunction;
  streamOptions?: Omit<StreamOptions, "signal" | "toolChoice">;
  /** More context layers for an agent's turn (skills, memory), composed by the edge. */
  extraLayers?: (agent: AgentRecord, ref: SessionRef) => LayerProvider | undefined;
  /**
   * Tools an agent gets only when its `toolsAllow` names them explicitly (e.g. `manage_schedule`),
   * acting for the person who started the run.
   */
  grantedTools?: (agent: AgentRecord, requestedBy: string) => Tool[];
}

export interface TurnRequest {
  agent: AgentRecord;
  runId: string;
  /** Channel the events belong to ("" for runs outside channels). */
  channelId: string;
  ref: SessionRef;
  input: string;
  /** The team part of the system prompt; the persona follows it. */
  system: string;
  workspace: string;
  signal: AbortSignal;
  /** Tools beyond the built-ins (call_agent), still subject to the agent's allow/deny lists. */
  extraTools?: Tool[];
  /** User id of the person whose message started the run ("system" for scheduled or internal runs). */
  requestedBy?: string;
  onDelta?: (text: string) => void;
}

export interface TurnResult {
  /** The final answer (what call_agent and flow steps hand on). */
  answer: string;
  /** Everything the agent said, turn after turn, as streamed live: what the channel stores. */
  text: string;
  usage: Usage;
}

/** The tools an agent may use: allow list (all when unset) minus deny list. */
export function toolsForAgent(
  agent: AgentRecord,
  base: ToolRegistry,
  extra: readonly Tool[] = [],
): ToolRegistry {
  const allowed = (name: string) =>
    (agent.toolsAllow === undefined || agent.toolsAllow.includes(name)) && !agent.toolsDeny.includes(name);
  const registry = base.subset(base.names().filter(allowed));
  for (const tool of extra) if (allowed(tool.name)) registry.register(tool);
  return registry;
}

/** The persona layer (SOUL.md, read for every run so an edit applies to the next message) plus any extra layers. */
function layersFor(runtime: TurnRuntime, agent: AgentRecord, ref: SessionRef): LayerProvider {
  const persona: LayerProvider = async () => ({
    layers: { persona: (await runtime.personas.read(agent.id)).content },
  });
  const extra = runtime.extraLayers?.(agent, ref);
  // The persona comes last so no other provider can replace it.
  return extra ? combineLayerProviders([extra, persona]) : persona;
}

/** Runs the turn to its end; throws a DimsumError when the agent run fails or is aborted. */
export async function runAgentTurn(runtime: TurnRuntime, request: TurnRequest): Promise<TurnResult> {
  const { agent, runId, channelId } = request;
  const model = runtime.resolveModel(agent);
  const granted = (runtime.grantedTools?.(agent, request.requestedBy ?? "system") ?? []).filter((tool) =>
    agent.toolsAllow?.includes(tool.name),
  );
  const tools = toolsForAgent(agent, runtime.baseTools, [...(request.extraTools ?? []), ...granted]);
  let result: TurnResult | undefined;
  const deltas = new DeltaBatcher((type, text) => runtime.emit({ type, channelId, runId, text }));
  // Text said before a tool call stays part of the message; each later turn starts a new paragraph.
  let shown = "";
  let newTurn = false;
  try {
    for await (const event of runSessionTurn({
      store: runtime.store,
      ref: request.ref,
      model,
      input: request.input,
      system: request.system,
      tools,
      toolEnvironment: { workspace: request.workspace, config: runtime.config.tools },
      maxIterations: runtime.config.maxIterations,
      signal: request.signal,
      stream: runtime.stream,
      streamOptions: runtime.streamOptions,
      layers: layersFor(runtime, agent, request.ref),
      secrets: secretsFrom(runtime.config.env, [model.apiKey]),
      runId,
    })) {
      if (event.type === "text_delta") {
        const text = newTurn && shown !== "" && !shown.endsWith("\n\n") ? `\n\n${event.text}` : event.text;
        newTurn = false;
        shown += text;
        deltas.push("delta", text);
        request.onDelta?.(text);
        continue;
      }
      if (event.type === "reasoning_delta") {
        deltas.push("reasoning", event.text);
        continue;
      }
      deltas.flush();
      switch (event.type) {
        case "turn_start":
          newTurn = event.iteration > 1;
          break;
        case "tool_call":
          runtime.emit({
            type: "tool_start",
            channelId,
            runId,
            callId: event.id,
            name: event.name,
            args: event.args,
          });
          break;
        case "tool_result":
          runtime.emit({
            type: "tool_end",
            channelId,
            runId,
            callId: event.id,
            name: event.name,
            ok: event.ok,
            output: event.output,
            durationMs: event.durationMs,
          });
          break;
        case "done":
          result = {
            answer: event.answer,
            text: shown.trim() === "" ? event.answer : shown,
            usage: event.usage,
          };
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
