// A fake LLM server in its own process, so its CPU time never counts as the runtime's.
// Script: call a tool until the request carries `TOOL_ROUNDS` tool results, then answer.
import { startFakeLlmServer } from "../dist/testing/fake-llm-server.js";

const rounds = Number(process.env.TOOL_ROUNDS ?? 9);

function toolResults(body) {
  return (body?.messages ?? []).filter((m) => m.role === "tool").length;
}

const server = await startFakeLlmServer({
  defaultTurn: (request) =>
    toolResults(request.body) >= rounds
      ? { text: "All done: the numbers add up.", usage: { input: 500, output: 10 } }
      : {
          toolCalls: [
            {
              name: `tool_${toolResults(request.body) % 20}`,
              args: { value: toolResults(request.body), label: "x" },
            },
          ],
          usage: { input: 400, output: 20 },
        },
});
// Keep the request log from growing across thousands of runs.
setInterval(() => server.requests.splice(0), 1000).unref();
process.stdout.write(`${server.url}\n`);
process.on("SIGTERM", () => server.close().then(() => process.exit(0)));
