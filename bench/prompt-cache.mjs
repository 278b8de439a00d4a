// Prompt caching (issue 25): a 20-turn chat with tools, memory and skills (src/testing/prompt-cache-scenario.ts)
// replayed through the session runner against the fake LLM server, which reports cached input by each
// provider's rule (src/testing/fake-prompt-cache.ts):
//   OpenAI    = the longest prefix shared with an earlier request, in 128-token blocks beyond the first 1,024;
//   Anthropic = the prefix up to the last cache_control breakpoint that an earlier request wrote.
// Baseline, same run: the order before this work (matched skill bodies and recalled memories in the system
// prompt, no cache_control, no prompt_cache_key). Cost is at the catalogue's prices (src/config/model-catalog.ts).
import { pathToFileURL } from "node:url";
import { runPromptCacheScenario } from "../dist/testing/prompt-cache-scenario.js";

const pct = (x) => `${(x * 100).toFixed(1)}%`;
const usd = (x) => `$${x.toFixed(4)}`;

async function measure() {
  const rows = [];
  for (const protocol of ["openai", "anthropic"]) {
    for (const layout of ["volatile-system", "stable-prefix"]) {
      const r = await runPromptCacheScenario({ protocol, layout });
      const input = r.calls.reduce((s, c) => s + c.usage.inputTokens, 0);
      const cached = r.calls.reduce((s, c) => s + (c.usage.cachedInputTokens ?? 0), 0);
      const written = r.calls.reduce((s, c) => s + (c.usage.cacheWriteTokens ?? 0), 0);
      rows.push({ protocol, layout, model: r.model, calls: r.calls.length, input, cached, written, r });
    }
  }
  return rows;
}

function section(rows) {
  const line = (cells) => `| ${cells.join(" | ")} |`;
  const out = [
    "## Prompt caching (issue 25)",
    "",
    "A 20-turn chat (arithmetic, memory writes, todos, a `/skill` message, three `load_skill` calls, plain questions; 6 skills, 8 stored memories, core memory, a persona) replayed through the session runner against the fake server in prompt-cache mode. Tokens are the fake's estimate (4 characters each). *Before*: matched skill bodies and recalled memories written into the system prompt, no `cache_control`, no `prompt_cache_key` (the order before this work). *After*: tools sorted, stable system text (persona, skill index, always-on skill, core memory), the turn context stored after each user message, breakpoints and the session key.",
    "",
    line([
      "protocol (model)",
      "order",
      "calls",
      "input tokens",
      "cached after turn 1",
      "cache writes",
      "cost with caching",
      "cost without caching",
      "saved",
    ]),
    line(["---", "---", "---:", "---:", "---:", "---:", "---:", "---:", "---:"]),
  ];
  for (const row of rows) {
    const { r } = row;
    out.push(
      line([
        `${row.protocol} (${row.model})`,
        row.layout === "stable-prefix" ? "**after**" : "before",
        row.calls,
        row.input,
        `**${pct(r.cachedShareAfterFirstTurn)}**`,
        row.written,
        usd(r.costWithCache),
        usd(r.costWithoutCache),
        pct(1 - r.costWithCache / r.costWithoutCache),
      ]),
    );
  }
  out.push(
    "",
    "Goal: at least 90% of input tokens from the cache after the first turn, for both protocols. Anthropic's cost counts cache writes at 1.25x input (5-minute TTL); OpenAI bills no writes. The scenario is deterministic, so one run is enough; `test/agent/prompt-cache.test.ts` asserts the same figures' floor (>= 90%) and that every request's tools and system text are identical and its history a prefix of the next one's.",
  );
  return out.join("\n");
}

/** The bench section for BENCHMARKS.md. */
export async function run() {
  return section(await measure());
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  console.log(await run());
}
