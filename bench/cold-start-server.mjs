// The fake LLM of the cold-start bench, in its own process so its CPU time never counts as the
// runtime's. Script: call `calculator` until the request carries TOOL_ROUNDS tool results, then answer.
// When CAPTURE is set, the body of each conversation's first request is written there (the bench
// hands it to the hand-written loop, so both send the same requests).
import { writeFileSync } from "node:fs";
import { startFakeLlmServer } from "dimsum/testing";

const rounds = Number(process.env.TOOL_ROUNDS ?? 10);
const capture = process.env.CAPTURE;

const toolResults = (body) => (body?.messages ?? []).filter((m) => m.role === "tool").length;

const server = await startFakeLlmServer({
  defaultTurn: (request) => {
    const done = toolResults(request.body);
    if (done === 0 && capture) writeFileSync(capture, JSON.stringify(request.body));
    return done >= rounds
      ? { text: "All done: the numbers add up.", usage: { input: 500, output: 10 } }
      : {
          toolCalls: [{ name: "calculator", args: { expression: `${done} + 1` } }],
          usage: { input: 400, output: 20 },
        };
  },
});
setInterval(() => server.requests.splice(0), 1000).unref();
process.stdout.write(`${server.url}\n`);
process.on("SIGTERM", () => server.close().then(() => process.exit(0)));
