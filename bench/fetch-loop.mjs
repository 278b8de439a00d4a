// The cold-start baseline: a hand-written agent loop with fetch and a minimal SSE reader, the
// least a program can do to run the same tool loop. It sends the request body Dimsum sent first
// (file in argv[2]: model, system prompt, tool schemas, the question), then after each streamed
// tool call appends the assistant message and the tool's result, until the model answers.
//   node bench/fetch-loop.mjs FIRST_REQUEST.json BASE_URL API_KEY
import { readFileSync } from "node:fs";

const [file, baseUrl, apiKey] = process.argv.slice(2);
const body = JSON.parse(readFileSync(file, "utf8"));

/** Parses one streamed chat completion: the text and the tool calls, assembled from their deltas. */
async function streamTurn(res) {
  const decoder = new TextDecoder();
  let buffer = "";
  let text = "";
  const calls = [];
  for await (const chunk of res.body) {
    buffer += decoder.decode(chunk, { stream: true });
    let end = buffer.indexOf("\n\n");
    while (end !== -1) {
      const event = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      end = buffer.indexOf("\n\n");
      for (const line of event.split("\n")) {
        if (!line.startsWith("data:")) continue;
        const data = line.slice(5).trim();
        if (data === "[DONE]") continue;
        const delta = JSON.parse(data).choices?.[0]?.delta ?? {};
        if (delta.content) text += delta.content;
        for (const d of delta.tool_calls ?? []) {
          calls[d.index] ??= { id: "", type: "function", function: { name: "", arguments: "" } };
          const call = calls[d.index];
          if (d.id) call.id = d.id;
          if (d.function?.name) call.function.name += d.function.name;
          if (d.function?.arguments) call.function.arguments += d.function.arguments;
        }
      }
    }
  }
  return { text, calls };
}

/** The one tool the bench's model calls: sums like `3 + 1`. */
function calculator({ expression }) {
  return String(expression.split("+").reduce((sum, term) => sum + Number(term), 0));
}

for (;;) {
  const res = await fetch(`${baseUrl}/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${apiKey}` },
    body: JSON.stringify(body),
  });
  if (!res.ok) throw new Error(`HTTP ${res.status}: ${await res.text()}`);
  const { text, calls } = await streamTurn(res);
  if (calls.length === 0) {
    process.stdout.write(`${text}\n`);
    break;
  }
  body.messages.push({ role: "assistant", content: text || null, tool_calls: calls });
  for (const call of calls) {
    const content = calculator(JSON.parse(call.function.arguments));
    body.messages.push({ role: "tool", tool_call_id: call.id, content });
  }
}
