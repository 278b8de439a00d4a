/**
 * The seed's demo, end to end, through a real `dimsum serve` with a scripted model, the real sandbox
 * and the machine's Chromium: "Create a Vite + TypeScript app that shows a counter, install it, start
 * it, and show me a screenshot". The agent writes the app, installs it (from a local copy of Vite's
 * packages, the repository's own, in place of the registry: see bench/vite-demo.mjs for the registry
 * version), starts `npm run dev` as a session process, waits for its port, opens it in the browser,
 * clicks the counter and answers with the screenshot. The screenshot reached the model as an image
 * and the answer carries it as a file; a member of the chat opens the preview in Chromium (Vite's
 * root-relative module graph and all) and the counter counts there too; another member gets 404.
 */
import { cpSync, existsSync, mkdirSync, readFileSync, symlinkSync } from "node:fs";
import { join, resolve } from "node:path";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { TeamRun } from "../../src/team/types.js";
import { type FakeLlmServer, startFakeLlmServer } from "../../src/testing/fake-llm-server.js";
import { detectSandbox } from "../../src/tools/builtin/sandbox/detect.js";
import { call, login, type Session, tempDir } from "./helpers.js";
import { type ServeProcess, startServe } from "./serve-process.js";

const PASSWORD = "vite-demo-password";
const ROOT = resolve(import.meta.dirname, "../..");
const ready =
  (await detectSandbox("/usr/bin/bwrap")).available &&
  existsSync("/usr/bin/chromium") &&
  existsSync(join(ROOT, "node_modules/vite/package.json"));
const PORT = 5173;

let fake: FakeLlmServer;
let serve: ServeProcess | undefined;
let chromium: Browser | undefined;

beforeAll(async () => {
  fake = await startFakeLlmServer({ defaultTurn: { text: "done" } });
});
afterAll(async () => {
  await chromium?.close();
  await serve?.stop("SIGTERM");
  await fake.close();
});

async function json<T>(res: Response): Promise<T> {
  expect(res.status, await res.clone().text()).toBeLessThan(300);
  return (await res.json()) as T;
}

async function until<T>(read: () => T | undefined | Promise<T | undefined>, ms = 15_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const value = await read();
    if (value !== undefined) return value;
    if (Date.now() > end) throw new Error("timed out waiting");
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** Vite and the packages it needs, copied from the repository's node_modules (no registry). */
function offlinePackages(target: string): void {
  const seen = new Set<string>();
  const queue = ["vite"];
  while (queue.length > 0) {
    const name = queue.pop() as string;
    const source = join(ROOT, "node_modules", name);
    if (seen.has(name) || !existsSync(join(source, "package.json"))) continue;
    seen.add(name);
    cpSync(source, join(target, name), { recursive: true, dereference: true });
    const pkg = JSON.parse(readFileSync(join(source, "package.json"), "utf8")) as {
      dependencies?: Record<string, string>;
      optionalDependencies?: Record<string, string>;
    };
    queue.push(...Object.keys({ ...pkg.dependencies, ...pkg.optionalDependencies }));
  }
  mkdirSync(join(target, ".bin"), { recursive: true });
  symlinkSync("../vite/bin/vite.js", join(target, ".bin", "vite"));
}

const APP = {
  "counter/package.json": JSON.stringify(
    {
      name: "counter",
      private: true,
      type: "module",
      scripts: { dev: `vite --host 127.0.0.1 --port ${PORT} --strictPort` },
      devDependencies: { vite: "^8.0.0" },
    },
    null,
    2,
  ),
  "counter/index.html":
    '<!doctype html>\n<html><head><title>Counter</title></head>\n<body><div id="app"></div><script type="module" src="/src/main.ts"></script></body></html>\n',
  "counter/src/counter.ts":
    "export function setupCounter(button: HTMLButtonElement): void {\n  let count = 0;\n  const show = (n: number): void => {\n    count = n;\n    button.textContent = 'count is ' + count;\n  };\n  button.addEventListener('click', () => show(count + 1));\n  show(0);\n}\n",
  "counter/src/main.ts":
    "import { setupCounter } from './counter.ts';\n\nconst app = document.querySelector<HTMLDivElement>('#app')!;\napp.innerHTML = '<h1>Vite + TypeScript</h1><button id=\"counter\" type=\"button\"></button>';\nsetupCounter(document.querySelector<HTMLButtonElement>('#counter')!);\n",
};

interface StoredMessage {
  id: number;
  author: string;
  parts?: Array<{ type: string; id?: string; mimeType?: string; name?: string }>;
}

describe.skipIf(!ready)("the seed's demo: a Vite + TypeScript counter, started and shown", () => {
  it("scaffolds, installs, starts, clicks, answers with the screenshot; the preview opens for members only", async () => {
    const home = tempDir("dimsum-vite-demo-");
    serve = await startServe(home, {
      DIMSUM_OWNER_PASSWORD: PASSWORD,
      DIMSUM_MODEL: "openai:gpt-test",
      OPENAI_API_KEY: "sk-test-vite-demo",
      OPENAI_BASE_URL: `${fake.url}/v1`,
    });
    const url = serve.url;
    const owner = await login(url, "owner", PASSWORD);
    await json(
      await call(url, "/api/users", {
        session: owner,
        body: { username: "bob", password: "bob-password-1", role: "member" },
      }),
    );
    const bob: Session = await login(url, "bob", "bob-password-1");
    const channel = await json<{ id: string }>(
      await call(url, "/api/channels", {
        session: owner,
        body: {
          kind: "direct",
          name: "Demo",
          leaderAgentId: "assistant",
          agentIds: ["assistant"],
          userIds: [],
        },
      }),
    );
    // The chat's workspace holds the local copy of the packages the install takes.
    const workspace = join(home, "workspaces", channel.id);
    offlinePackages(join(workspace, ".offline-registry", "node_modules"));

    fake.reset();
    fake.enqueue(
      {
        toolCalls: Object.entries(APP).map(([path, content]) => ({
          name: "write_file",
          args: { path, content },
        })),
      },
      {
        toolCalls: [
          {
            name: "execute_command",
            args: {
              command:
                "cd counter && cp -R ../.offline-registry/node_modules node_modules && node_modules/.bin/vite --version",
            },
          },
        ],
      },
      {
        toolCalls: [
          {
            name: "process_start",
            args: { name: "dev", command: "npm run dev", workingDirectory: "counter" },
          },
        ],
      },
      { toolCalls: [{ name: "process_read", args: { name: "dev", waitForPort: PORT } }] },
      { toolCalls: [{ name: "browser", args: { action: "open", url: `http://localhost:${PORT}/` } }] },
      { toolCalls: [{ name: "browser", args: { action: "click", selector: "#counter" } }] },
      { toolCalls: [{ name: "browser", args: { action: "text" } }] },
      { toolCalls: [{ name: "browser", args: { action: "screenshot" } }] },
      { text: "Here is your counter app, running; the screenshot shows it after one click." },
    );
    const started = Date.now();
    const posted = await json<{ runs: TeamRun[] }>(
      await call(url, `/api/channels/${channel.id}/messages`, {
        session: owner,
        body: {
          text: "Create a Vite + TypeScript app that shows a counter, install it, start it, and show me a screenshot",
        },
      }),
    );
    const runId = posted.runs[0]?.id as string;
    const run = await until(async () => {
      const r = await json<TeamRun>(await call(url, `/api/runs/${runId}`, { session: owner }));
      return ["done", "error", "cancelled"].includes(r.status) ? r : undefined;
    }, 150_000);
    const last = JSON.stringify(fake.requests.at(-1)?.body);
    expect(run.status, last.slice(-3000)).toBe("done");
    console.log(`vite demo: time to answer ${Date.now() - started} ms`);

    // What the tools said, as the model read it.
    const body = fake.requests.at(-1)?.body as { messages: Array<{ role: string; content: unknown }> };
    const toolText = body.messages
      .filter((m) => m.role === "tool")
      .map((m) => (typeof m.content === "string" ? m.content : JSON.stringify(m.content)));
    expect(toolText.find((t) => t.includes("vite/") || /\d+\.\d+\.\d+/.test(t))).toBeDefined();
    expect(toolText.some((t) => t.includes("The port is listening."))).toBe(true);
    expect(toolText.some((t) => t.includes("(200): Counter"))).toBe(true);
    expect(toolText.some((t) => t.includes("count is 1"))).toBe(true);
    // The screenshot went to the model as an image.
    expect(last).toMatch(/data:image\/png;base64,iVBORw0KGgo/);

    // The answer carries the screenshot as a file of the chat, for its members only.
    const messages = await json<StoredMessage[] | { messages: StoredMessage[] }>(
      await call(url, `/api/channels/${channel.id}/messages`, { session: owner }),
    );
    const list = Array.isArray(messages) ? messages : messages.messages;
    const answer = list.find(
      (m) => m.author !== owner.userId && m.parts?.some((p) => p.type === "attachment"),
    );
    const shot = answer?.parts?.find((p) => p.type === "attachment");
    expect(shot?.mimeType).toBe("image/png");
    const file = await call(url, `/api/channels/${channel.id}/attachments/${shot?.id}`, { session: owner });
    expect(file.status).toBe(200);
    expect(
      Buffer.from(await file.arrayBuffer())
        .subarray(1, 4)
        .toString(),
    ).toBe("PNG");
    expect(
      (await call(url, `/api/channels/${channel.id}/attachments/${shot?.id}`, { session: bob })).status,
    ).toBe(404);

    // A member of the chat opens the preview: Vite's page, its root-relative modules, the counter.
    const listed = await json<Array<{ name: string; previews: Array<{ port: number; path: string }> }>>(
      await call(url, `/api/channels/${channel.id}/processes`, { session: owner }),
    );
    const path = listed.find((p) => p.name === "dev")?.previews.find((p) => p.port === PORT)?.path as string;
    expect(path).toBeDefined();
    const page = await call(url, path, { session: owner });
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('<div id="app"></div>');
    expect((await call(url, path, { session: bob })).status).toBe(404);
    expect((await fetch(`${url}${path}`)).status).toBe(404);

    const { chromium: launcher } = await import("playwright-core");
    chromium = await launcher.launch({ executablePath: "/usr/bin/chromium", args: ["--no-sandbox"] });
    const context = await chromium.newContext();
    const [name, value] = owner.cookie.split("=") as [string, string];
    await context.addCookies([{ name, value, url }]);
    const tab = await context.newPage();
    await tab.goto(`${url}${path}`);
    const button = tab.locator("#counter");
    await button.waitFor({ timeout: 30_000 });
    expect(await button.textContent()).toBe("count is 0");
    await button.click();
    expect(await button.textContent()).toBe("count is 1");
    // Bob, a member of the team but not of the chat, sees nothing.
    const other = await chromium.newContext();
    const [bobName, bobValue] = bob.cookie.split("=") as [string, string];
    await other.addCookies([{ name: bobName, value: bobValue, url }]);
    const bobTab = await other.newPage();
    const bobPage = await bobTab.goto(`${url}${path}`);
    expect(bobPage?.status()).toBe(404);
  }, 240_000);
});
