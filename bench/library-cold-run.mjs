// One cold library run, the README's "Library use" example: `import "dimsum"`, then one run with the
// built-in tools against the bench's fake LLM (argv[2] = its /v1 base URL), the answer on stdout.
// Spawned by bench/library-cold-start.mjs, whose baseline is bench/fetch-loop.mjs.
import { createBuiltinRegistry, loadConfig, memoryTodoStore, resolveModel, runAgent } from "dimsum";

const baseUrl = process.argv[2];
const config = loadConfig({ env: { OPENAI_API_KEY: "k", OPENAI_BASE_URL: baseUrl } });
let answer = "";
for await (const event of runAgent({
  model: resolveModel(config, "openai:gpt-bench"),
  messages: [{ role: "user", content: "add the numbers" }],
  tools: createBuiltinRegistry(),
  toolEnvironment: { workspace: process.cwd(), todos: memoryTodoStore(), config: config.tools },
  maxIterations: 20,
})) {
  if (event.type === "text_delta") answer += event.text;
}
process.stdout.write(`${answer}\n`);
