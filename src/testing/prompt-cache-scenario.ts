/**
 * A 20-turn chat with tools, memory and skills, replayed through the session runner against the fake
 * LLM server in prompt-cache mode (see fake-prompt-cache.ts). Used by test/agent/prompt-cache.test.ts
 * and bench/prompt-cache.mjs. `layout: "volatile-system"` reproduces the order before prompt caching
 * (matched skill bodies and recalled memories written into the system prompt, no breakpoints).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { combineLayerProviders, type LayerProvider } from "../agent/layered-context.js";
import { runSessionTurn } from "../agent/session-runner.js";
import { costOf } from "../agent/usage.js";
import { memoryLayer, personaLayer, skillLayer } from "../capabilities/context-layers.js";
import { loadSkillTool } from "../capabilities/load-skill-tool.js";
import { lookupModel } from "../config/model-catalog.js";
import type { ModelSpec, Usage } from "../llm/types.js";
import { SqliteMemoryStore } from "../memory/sqlite-memory-store.js";
import { createMemoryTools } from "../memory/tools.js";
import { selectSkills } from "../skills/select-skills.js";
import type { Skill } from "../skills/types.js";
import { openDatabase } from "../store/database.js";
import { SqliteSessionStore } from "../store/sqlite-session-store.js";
import { defaultToolsConfig } from "../tools/builtin/defaults.js";
import { createBuiltinRegistry } from "../tools/builtin/index.js";
import { type FakeTurn, type RecordedRequest, startFakeLlmServer } from "./fake-llm-server.js";

export type ScenarioProtocol = "openai" | "anthropic";

export interface ScenarioCall {
  /** 1-based turn of the chat. */
  turn: number;
  usage: Usage;
}

export interface ScenarioResult {
  protocol: ScenarioProtocol;
  model: string;
  calls: ScenarioCall[];
  /** The request bodies the fake server received, in order. */
  requests: RecordedRequest[];
  /** Share of input tokens read from the cache, over the calls after the first turn. */
  cachedShareAfterFirstTurn: number;
  /** USD at catalogue prices, as billed (cache reads and writes at their rates) and with no caching. */
  costWithCache: number;
  costWithoutCache: number;
}

const SYSTEM =
  "You are Dimsum, a capable assistant that uses tools when they help. Work in the user's workspace. " +
  "Be concise; say what you did and what you found. When a question needs arithmetic, use the calculator. " +
  "When the person asks you to remember something, write it to memory. Keep track of multi-step work with todos.";

const PERSONA = [
  "You are Miro, the travel and writing assistant of a small design studio.",
  "You answer in plain, friendly English, in short paragraphs, and you never invent facts about bookings.",
  "You prefer concrete suggestions over general advice, and you say when you are unsure.",
  "When you suggest places, say why each fits the person, from what you know about them.",
  "You keep answers under two hundred words unless asked for more detail.",
].join("\n");

function skill(name: string, description: string, topic: string): Skill {
  const body = Array.from(
    { length: 14 },
    (_, i) =>
      `${i + 1}. When working on ${topic}, check step ${i + 1} carefully: read what the person gave, ` +
      `compare it with the house conventions for ${topic}, and write down what changes and why.`,
  ).join("\n");
  return {
    name,
    description,
    body: `# ${name}\n\n${body}`,
    hidden: false,
    tools: [],
    model: undefined,
    source: "user",
    dir: `/skills/${name}`,
    path: `/skills/${name}/SKILL.md`,
    files: [],
    extra: {},
  };
}

/** The skills of the scenario; `house-style` is the agent's always-on skill. */
export function scenarioSkills(): Skill[] {
  return [
    skill("code-review", "Review a code change for bugs, style and missing tests.", "code review"),
    skill("commit-message", "Write or review a git commit message in the team's format.", "commit messages"),
    skill("house-style", "The studio's writing style: tone, spelling and formatting.", "the house style"),
    skill("trip-planner", "Plan a trip day by day: sights, food, transport and bookings.", "trip planning"),
    skill("translate", "Translate text between languages, keeping tone and names.", "translation"),
    skill("budget", "Build and check a travel or project budget in a table.", "budgets"),
  ];
}

const FACTS = [
  "The person is planning a trip to Lisbon in May.",
  "The person prefers window seats on flights.",
  "The person drinks coffee black, no sugar.",
  "The person is vegetarian and avoids seafood.",
  "The person's budget for the Lisbon trip is 1,500 euros.",
  "The person works as a product designer at the studio.",
  "The person likes tiled facades and old trams.",
  "The person's partner Ana joins the trip for the weekend.",
];

interface ScriptedTurn {
  prompt: string;
  tool?: { name: string; args: Record<string, unknown> };
  answer: string;
}

function answer(topic: string): string {
  return (
    `Here is what I found about ${topic}. ` +
    "I kept it short and concrete, with the reasons for each suggestion, and I noted what I could not check. " +
    "Tell me if you want more detail on any part, or a different angle."
  );
}

/** Twenty turns: arithmetic, memory, todos, a named skill, skills the model loads, plain questions. */
function script(): ScriptedTurn[] {
  return [
    { prompt: "Hi! I'm planning a trip to Lisbon. Where should I start?", answer: answer("Lisbon") },
    {
      prompt: "What is 1500 divided by 6 nights?",
      tool: { name: "calculator", args: { expression: "1500 / 6" } },
      answer: "That is 250 euros a night.",
    },
    {
      prompt: "Remember that I want a hotel near Alfama.",
      tool: {
        name: "memory_write",
        args: { text: "The person wants a hotel near Alfama.", type: "semantic" },
      },
      answer: "Noted: a hotel near Alfama.",
    },
    {
      prompt: "Make me a three day plan.",
      tool: { name: "load_skill", args: { name: "trip-planner" } },
      answer: answer("a three day plan"),
    },
    {
      prompt: "Add a todo: book the hotel.",
      tool: { name: "todo", args: { action: "add", text: "book the hotel" } },
      answer: "Added to your todos.",
    },
    { prompt: "Which trams should I take?", answer: answer("trams") },
    {
      prompt: "/skill translate say 'where is the station' in Portuguese",
      answer: "Onde fica a estação?",
    },
    {
      prompt: "How much is 3 dinners at 35 euros for two?",
      tool: { name: "calculator", args: { expression: "3 * 35 * 2" } },
      answer: "210 euros.",
    },
    { prompt: "What vegetarian dishes should I try?", answer: answer("vegetarian food") },
    {
      prompt: "Can you check my budget table?",
      tool: { name: "load_skill", args: { name: "budget" } },
      answer: answer("your budget"),
    },
    {
      prompt: "Add a todo: buy tram passes.",
      tool: { name: "todo", args: { action: "add", text: "buy tram passes" } },
      answer: "Added.",
    },
    { prompt: "What should Ana and I do on Saturday?", answer: answer("Saturday") },
    {
      prompt: "What time is it now?",
      tool: { name: "current_time", args: { timezone: "Europe/Lisbon" } },
      answer: "It is the afternoon in Lisbon.",
    },
    {
      prompt: "Review this commit message: 'fix stuff'",
      tool: { name: "load_skill", args: { name: "commit-message" } },
      answer: answer("the commit message"),
    },
    { prompt: "Back to the trip: which viewpoints are best at sunset?", answer: answer("viewpoints") },
    {
      prompt: "What is 250 times 6 plus 210?",
      tool: { name: "calculator", args: { expression: "250 * 6 + 210" } },
      answer: "1,710 euros, over the budget by 210.",
    },
    {
      prompt: "Remember that Ana is allergic to nuts.",
      tool: { name: "memory_write", args: { text: "Ana is allergic to nuts.", type: "semantic" } },
      answer: "Noted.",
    },
    { prompt: "Which cafes serve good black coffee?", answer: answer("cafes") },
    {
      prompt: "Mark the hotel todo as done.",
      tool: { name: "todo", args: { action: "update", id: 1, status: "done" } },
      answer: "Done.",
    },
    { prompt: "Thanks! Summarise the plan in three lines.", answer: answer("the plan") },
  ];
}

/** Matched skill bodies and recalled memories in the system prompt: the order before prompt caching. */
function volatileSystem(skills: readonly Skill[], memory: LayerProvider): LayerProvider {
  return async (input) => {
    const recalled = await memory(input);
    const matched = selectSkills(skills, input.query, { explicit: ["house-style"] });
    const sections = [PERSONA];
    if (matched.length > 0) {
      sections.push(`# Skills\n\n${matched.map((s) => `## Skill: ${s.name}\n\n${s.body}`).join("\n\n")}`);
    }
    const memories = recalled.layers.memories ?? [];
    if (memories.length > 0) {
      sections.push(
        `# Relevant memories about the user\n\n${memories.map((m) => `- [${m.type} #${m.id}] ${m.text}`).join("\n")}`,
      );
    }
    return { layers: { coreMemory: recalled.layers.coreMemory ?? [], persona: sections.join("\n\n") } };
  };
}

function withoutCache(usage: Usage): Usage {
  const { cachedInputTokens: _read, cacheWriteTokens: _written, ...rest } = usage;
  return rest;
}

/** Runs the chat over one protocol and measures what the fake's cache served. */
export async function runPromptCacheScenario(options: {
  protocol: ScenarioProtocol;
  layout?: "stable-prefix" | "volatile-system";
  turns?: number;
}): Promise<ScenarioResult> {
  const { protocol } = options;
  const layout = options.layout ?? "stable-prefix";
  const server = await startFakeLlmServer({ strict: true, promptCache: true });
  const dir = mkdtempSync(join(tmpdir(), "dimsum-prompt-cache-"));
  const db = openDatabase(join(dir, "dimsum.db"));
  try {
    const store = new SqliteSessionStore(db);
    const memory = new SqliteMemoryStore(db);
    const scope = { userId: "ada" };
    for (const text of FACTS) await memory.remember({ ...scope, text, type: "semantic" });
    await memory.coreAppend(scope, "user", "Name: Ada. Lives in Berlin.");
    const skills = scenarioSkills();
    const modelId = protocol === "openai" ? "gpt-4.1" : "claude-sonnet-4-5";
    const model: ModelSpec = {
      provider: protocol,
      id: modelId,
      protocol,
      baseUrl: protocol === "openai" ? `${server.url}/v1` : server.url,
      apiKey: "test-key",
      contextWindow: 200_000,
      ...(lookupModel(modelId)?.pricing ? { pricing: lookupModel(modelId)?.pricing } : {}),
      ...(layout === "volatile-system" ? { quirks: { promptCache: false, promptCacheKey: false } } : {}),
    };
    const memoryLayers = memoryLayer(memory, scope);
    const layers =
      layout === "stable-prefix"
        ? combineLayerProviders([
            skillLayer(skills, ["house-style"]),
            memoryLayers,
            personaLayer(async () => PERSONA),
          ])
        : volatileSystem(skills, memoryLayers);
    const ref = { userId: "ada", sessionId: "trip" };
    const calls: ScenarioCall[] = [];
    const turns = script().slice(0, options.turns ?? 20);
    for (const [i, scripted] of turns.entries()) {
      const queued: FakeTurn[] = [];
      if (scripted.tool) queued.push({ toolCalls: [scripted.tool] });
      queued.push({ text: scripted.answer });
      server.enqueue(...queued);
      const tools = createBuiltinRegistry([
        "calculator",
        "current_time",
        "todo",
        "read_file",
        "write_file",
        "edit_file",
        "list_directory",
      ]);
      if (layout === "stable-prefix") tools.register(loadSkillTool(skills));
      for (const tool of createMemoryTools(memory, { scope })) tools.register(tool);
      for await (const event of runSessionTurn({
        store,
        ref,
        model,
        input: scripted.prompt,
        system: SYSTEM,
        tools,
        toolEnvironment: { workspace: dir, config: defaultToolsConfig() },
        layers,
      })) {
        if (event.type === "usage") calls.push({ turn: i + 1, usage: event.usage });
        if (event.type === "error") throw new Error(`turn ${i + 1}: ${event.message}`);
      }
    }
    const later = calls.filter((c) => c.turn > 1);
    const input = later.reduce((sum, c) => sum + c.usage.inputTokens, 0);
    const cached = later.reduce((sum, c) => sum + (c.usage.cachedInputTokens ?? 0), 0);
    const pricing = model.pricing;
    return {
      protocol,
      model: `${protocol}:${modelId}`,
      calls,
      requests: [...server.requests],
      cachedShareAfterFirstTurn: input === 0 ? 0 : cached / input,
      costWithCache: calls.reduce((sum, c) => sum + (costOf(c.usage, pricing) ?? 0), 0),
      costWithoutCache: calls.reduce((sum, c) => sum + (costOf(withoutCache(c.usage), pricing) ?? 0), 0),
    };
  } finally {
    db.close();
    rmSync(dir, { recursive: true, force: true });
    await server.close();
  }
}
