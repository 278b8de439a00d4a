/**
 * A model chain: a call goes to the first model whose provider is not cooling down; when it fails
 * before any output with an error another model may not have (429, 5xx, overload, a stalled stream, a
 * call limit: once its retries are spent; auth or billing: at once), the call moves to the next model
 * and the provider cools down. A call that already streamed output is never moved.
 */
import type { DimsumError } from "../errors.js";
import { type CooldownStore, createMemoryCooldownStore } from "./cooldowns.js";
import { type FallbackClass, fallbackClassOf } from "./transport-errors.js";
import type { ModelEvent, ModelSpec, StreamFunction } from "./types.js";

export interface FallbackSettings {
  /** Shared by every run of the process, or of every instance (Redis). */
  cooldowns: CooldownStore;
  /** How long a provider rests after retryable failures (default 60 s). */
  cooldownMs?: number;
  /** How long after an auth or billing failure (default 30 min): a person has to fix something. */
  authCooldownMs?: number;
  now?: () => number;
}

export const DEFAULT_COOLDOWN_MS = 60_000;
export const DEFAULT_AUTH_COOLDOWN_MS = 30 * 60_000;

/**
 * The fallback settings of a process (CLI or server), built once and shared by all its runs so a
 * provider cooling down is skipped by the next run too: `modelFallback`'s lengths over `cooldowns`
 * (this process's memory unless given, e.g. the server's Redis store).
 */
export function fallbackSettings(
  lengths: { cooldownMs?: number; authCooldownMs?: number },
  cooldowns: CooldownStore = createMemoryCooldownStore(),
): FallbackSettings {
  return { cooldowns, ...lengths };
}

/** `provider:id`, how events and traces name a model. */
export function modelLabel(model: Pick<ModelSpec, "provider" | "id">): string {
  return `${model.provider}:${model.id}`;
}

/** The models of a chain in order, each without its own `fallbacks`. */
export function chainOf(model: ModelSpec): ModelSpec[] {
  const { fallbacks = [], ...primary } = model;
  return [primary, ...fallbacks.map(({ fallbacks: _nested, ...spec }) => spec)];
}

/** The model of the chain a label names (the primary when none does). */
export function chainModel(model: ModelSpec, label: string): ModelSpec {
  return chainOf(model).find((m) => modelLabel(m) === label) ?? model;
}

const OUTPUT_EVENTS = new Set<ModelEvent["type"]>(["text_delta", "reasoning_delta", "tool_call"]);

/** Wraps a stream function so a model with `fallbacks` walks its chain; a model without them is passed through. */
export function withFallbacks(inner: StreamFunction, settings: FallbackSettings): StreamFunction {
  return (model, context, options) =>
    model.fallbacks && model.fallbacks.length > 0
      ? walkChain(inner, settings, chainOf(model), context, options)
      : inner(model, context, options);
}

interface Move {
  from: ModelSpec;
  reason: string;
  code: DimsumError["code"];
  skipped?: boolean;
}

async function* walkChain(
  inner: StreamFunction,
  settings: FallbackSettings,
  chain: ModelSpec[],
  context: Parameters<StreamFunction>[1],
  options: Parameters<StreamFunction>[2],
): AsyncGenerator<ModelEvent> {
  const now = settings.now ?? Date.now;
  const cooling = await readCooldowns(settings.cooldowns, chain);
  // Every provider resting: the call still has to go somewhere, so the chain runs in order anyway.
  const ignoreCooldowns = chain.every((m) => cooling.has(m.provider));
  const wasCooling = new Set(cooling.keys());
  if (ignoreCooldowns) cooling.clear();
  const moves: Move[] = [];
  let lastError: DimsumError | undefined;
  for (const spec of chain) {
    const rest = cooling.get(spec.provider);
    if (rest !== undefined) {
      moves.push({
        from: spec,
        reason: `${spec.provider} is cooling down: ${rest.reason}`,
        code: rest.code,
        skipped: true,
      });
      continue;
    }
    for (const move of moves.splice(0)) {
      yield {
        type: "model_fallback",
        from: modelLabel(move.from),
        to: modelLabel(spec),
        reason: move.reason,
        code: move.code,
        ...(move.skipped ? { skipped: true } : {}),
      };
    }
    let output = false;
    let failed: DimsumError | undefined;
    for await (const event of inner(spec, context, options)) {
      if (event.type === "error") {
        failed = event.error;
        break;
      }
      if (OUTPUT_EVENTS.has(event.type)) output = true;
      // Before the `done` is handed on: a consumer stops reading once it has it.
      if (event.type === "done" && wasCooling.has(spec.provider)) {
        await settings.cooldowns.clear(spec.provider).catch(() => undefined);
      }
      yield event;
      if (event.type === "done") return;
    }
    if (failed === undefined) return;
    const kind = fallbackClassOf(failed);
    if (kind === undefined || output) {
      if (kind !== undefined) await coolDown(settings, spec, failed, kind, now);
      yield { type: "error", error: failed };
      return;
    }
    await coolDown(settings, spec, failed, kind, now);
    moves.push({ from: spec, reason: shortReason(failed, kind), code: failed.code });
    lastError = failed;
  }
  // Nothing answered: the last failure says why (a skipped tail adds nothing the person can act on).
  if (lastError) yield { type: "error", error: lastError };
}

async function readCooldowns(
  store: CooldownStore,
  chain: ModelSpec[],
): Promise<Map<string, { until: number; reason: string; code: DimsumError["code"] }>> {
  const out = new Map<string, { until: number; reason: string; code: DimsumError["code"] }>();
  const providers = [...new Set(chain.map((m) => m.provider))];
  await Promise.all(
    providers.map(async (provider) => {
      // A store that fails (Redis down) means no cooldown is known, not a failed call.
      const cooldown = await store.get(provider).catch(() => undefined);
      if (cooldown) out.set(provider, cooldown);
    }),
  );
  return out;
}

async function coolDown(
  settings: FallbackSettings,
  spec: ModelSpec,
  error: DimsumError,
  kind: FallbackClass,
  now: () => number,
): Promise<void> {
  const ms =
    kind === "retryable"
      ? (settings.cooldownMs ?? DEFAULT_COOLDOWN_MS)
      : (settings.authCooldownMs ?? DEFAULT_AUTH_COOLDOWN_MS);
  await settings.cooldowns
    .set(spec.provider, { until: now() + ms, reason: shortReason(error, kind), code: error.code })
    .catch(() => undefined);
}

/** The reason a move names: the failure's own message, shortened, with its kind when that is not obvious. */
function shortReason(error: DimsumError, kind: FallbackClass): string {
  const text = error.message.length > 200 ? `${error.message.slice(0, 200)}…` : error.message;
  return kind === "billing" ? `billing: ${text}` : text;
}
