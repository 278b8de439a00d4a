// The HTTP half of scripts/image-smoke.sh: talks to a Dimsum server as the owner, the way the web UI
// does (session cookie + CSRF token), and prints one JSON line.
//   node scripts/image-smoke-client.mjs chat   <url> <owner password>   → {"channelId", "answer"}
//   node scripts/image-smoke-client.mjs recall <url> <owner password> <channelId> → {"answers": [...]}
//   node scripts/image-smoke-client.mjs shell  <url> <owner password>   → Settings' shell offer
const [command, base, password, channelId] = process.argv.slice(2);

async function login() {
  const res = await fetch(`${base}/api/auth/login`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ username: "owner", password }),
  });
  if (res.status !== 200) throw new Error(`login: HTTP ${res.status} ${await res.text()}`);
  const { csrfToken } = await res.json();
  const cookie = res.headers
    .getSetCookie()
    .find((c) => c.startsWith("dimsum_session="))
    ?.split(";")[0];
  if (!cookie) throw new Error("login: no session cookie");
  return async (path, body) => {
    const r = await fetch(`${base}${path}`, {
      method: body === undefined ? "GET" : "POST",
      headers: {
        cookie,
        ...(body === undefined ? {} : { "content-type": "application/json", "x-csrf-token": csrfToken }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    if (r.status >= 400) throw new Error(`${path}: HTTP ${r.status} ${await r.text()}`);
    return r.json();
  };
}

const answersOf = (messages) => messages.filter((m) => m.runId && m.text).map((m) => m.text);

const call = await login();
if (command === "chat") {
  const channel = await call("/api/channels", {
    kind: "group",
    name: "smoke",
    agentIds: ["assistant"],
    userIds: [],
  });
  // A group collects a burst of messages before its run starts: the answer is the message a run wrote.
  await call(`/api/channels/${channel.id}/messages`, { text: "@assistant say hello" });
  const deadline = Date.now() + 60_000;
  for (;;) {
    const messages = await call(`/api/channels/${channel.id}/messages`);
    const answer = messages.find((m) => m.runId && m.text);
    if (answer) {
      console.log(JSON.stringify({ channelId: channel.id, answer: answer.text }));
      break;
    }
    if (Date.now() > deadline) throw new Error(`no answer within 60 s: ${JSON.stringify(messages)}`);
    await new Promise((r) => setTimeout(r, 250));
  }
} else if (command === "recall") {
  console.log(JSON.stringify({ answers: answersOf(await call(`/api/channels/${channelId}/messages`)) }));
} else if (command === "shell") {
  console.log(JSON.stringify((await call("/api/settings")).shell));
} else {
  throw new Error(`unknown command ${command}`);
}
