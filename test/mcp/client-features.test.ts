/**
 * The client features end to end, through real `dimsum` processes and the fake LLM: an elicitation
 * answered at the `dimsum chat` prompt (validation, defaults, decline), an MCP prompt used as a slash
 * command, sampling approved in chat, and in a headless `dimsum run`: a resource read by the agent,
 * the workspace announced as a root, and an elicitation declined with the reason in the trace.
 */
import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { type FakeLlmServer, startFakeLlmServer } from "../../src/testing/fake-llm-server.js";
import { cleanEnv, jsonLines, runCli } from "../support/cli.js";
import { projectRoot } from "../support/fixtures.js";
import { ensureBuilt, FIXTURES, makeTempDir, removeTempDir } from "./helpers.js";

/** A `dimsum chat` process driven line by line: each answer is written once its question shows. */
class ChatProcess {
  readonly child: ChildProcessWithoutNullStreams;
  stdout = "";
  stderr = "";
  readonly closed: Promise<number | null>;

  constructor(args: string[], env: Record<string, string | undefined>, cwd: string) {
    this.child = spawn(process.execPath, [join(projectRoot, "bin/dimsum.js"), "chat", ...args], { env, cwd });
    this.child.stdout.on("data", (d) => {
      this.stdout += d;
    });
    this.child.stderr.on("data", (d) => {
      this.stderr += d;
    });
    this.closed = new Promise((resolve) => this.child.on("close", resolve));
  }

  /** Waits until stderr (prompts) or stdout (answers) has shown `text` `count` times. */
  async waitFor(text: string, count = 1): Promise<void> {
    const deadline = Date.now() + 30_000;
    while (occurrences(this.stderr + this.stdout, text) < count) {
      if (Date.now() > deadline)
        throw new Error(`never saw ${JSON.stringify(text)}:\n${this.stderr}\n${this.stdout}`);
      await new Promise((r) => setTimeout(r, 25));
    }
  }

  send(line: string): void {
    this.child.stdin.write(`${line}\n`);
  }

  async end(): Promise<number | null> {
    this.child.stdin.end();
    const timer = setTimeout(() => this.child.kill("SIGKILL"), 30_000);
    const code = await this.closed;
    clearTimeout(timer);
    return code;
  }
}

function occurrences(text: string, part: string): number {
  return text.split(part).length - 1;
}

describe("MCP client features in dimsum chat and run", () => {
  let llm: FakeLlmServer;
  let env: Record<string, string | undefined>;
  let cwd: string;

  beforeAll(async () => {
    ensureBuilt();
    llm = await startFakeLlmServer({ strict: true });
    cwd = await makeTempDir("dimsum-features-");
    env = cleanEnv({
      OPENAI_API_KEY: "sk-test",
      OPENAI_BASE_URL: `${llm.url}/v1`,
      DIMSUM_MODEL: "openai:gpt-4o",
    });
    await writeFile(
      join(env.DIMSUM_HOME as string, "mcp.json"),
      JSON.stringify({
        mcpServers: {
          features: { command: process.execPath, args: [join(FIXTURES, "client-features-server.mjs")] },
        },
      }),
    );
  }, 120_000);
  beforeEach(() => llm.reset());
  afterAll(async () => {
    await llm.close();
    await removeTempDir(cwd);
    await removeTempDir(env.DIMSUM_HOME as string);
  });

  it("chat: answers an elicitation at the prompt, with validation and defaults, then declines one", async () => {
    llm.enqueue(
      { toolCalls: [{ name: "features_ask_name", args: {} }] },
      { text: "Greeted you." },
      { toolCalls: [{ name: "features_ask_name", args: {} }] },
      { text: "No name then." },
    );
    const chat = new ChatProcess(["--user", "ada", "--session", "elicit"], env, cwd);
    await chat.waitFor("type /help for commands");
    chat.send("greet me");
    await chat.waitFor("Name [required]: ");
    chat.send("x");
    await chat.waitFor("at least 2 characters");
    await chat.waitFor("Name [required]: ", 2);
    chat.send("Ada");
    await chat.waitFor("Age [default 30]: ");
    chat.send("");
    await chat.waitFor("Greeted you.");
    chat.send("again");
    await chat.waitFor("Name [required]: ", 3);
    chat.send("/decline");
    await chat.waitFor("No name then.");
    expect(await chat.end()).toBe(0);
    expect(chat.stderr).toContain('MCP server "features" asks: What should I call you?');
    const sent = llm.requests.map((r) => JSON.stringify(r.body));
    expect(sent[1]).toContain("hello Ada, age 30");
    expect(sent[1]).toContain("asked you for input");
    expect(sent[3]).toContain("no name (decline)");
  }, 90_000);

  it("chat: an MCP prompt is a slash command with arguments, and sampling runs after approval", async () => {
    llm.enqueue(
      { text: "Dumplings: dough around filling." },
      { toolCalls: [{ name: "features_sample_haiku", args: {} }] },
      { text: "steam rises softly" },
      { text: "Here is your haiku." },
    );
    const chat = new ChatProcess(["--user", "ada", "--session", "prompts"], env, cwd);
    await chat.waitFor("mcp prompt /features:summarize <topic> [style]");
    chat.send('/features:summarize "soup dumplings" style=briefly');
    await chat.waitFor("Dumplings: dough around filling.");
    chat.send("a haiku please");
    await chat.waitFor("Allow? [y/N] ");
    chat.send("y");
    await chat.waitFor("Here is your haiku.");
    expect(await chat.end()).toBe(0);
    const sent = llm.requests.map((r) => JSON.stringify(r.body));
    expect(sent[0]).toContain("Summarise soup dumplings in one line, briefly.");
    expect(sent[2]).toContain("Write a haiku about dumplings.");
    expect(sent[3]).toContain("haiku: steam rises softly");
  }, 90_000);

  it("run: the agent reads a resource, sees the roots, and a headless elicitation is declined in the trace", async () => {
    llm.enqueue(
      {
        toolCalls: [
          { name: "features_list_resources", args: {} },
          { name: "features_read_resource", args: { uri: "notes://welcome" } },
          { name: "features_list_roots", args: {} },
          { name: "features_ask_name", args: {} },
          { name: "features_sample_haiku", args: {} },
        ],
      },
      { text: "The word is dumpling." },
    );
    const result = await runCli(["run", "--json", "what is the secret word?"], {
      env,
      cwd,
      timeoutMs: 60_000,
    });
    expect(result.code).toBe(0);
    const results = jsonLines(result.stdout).filter((e) => e.type === "tool_result");
    const text = JSON.stringify(results);
    expect(text).toContain("notes://welcome");
    expect(text).toContain("notes://note/{index}");
    expect(text).toContain("The secret word is dumpling.");
    expect(text).toContain(`workspace ${pathToFileURL(cwd).href}`);
    expect(text).toContain("no name (decline)");
    expect(text).toContain("declined the server's request for input");
    expect(text).toContain("headless");
    expect(text).toContain("Sampling refused");
    expect(JSON.stringify(llm.requests[1]?.body)).toContain("The secret word is dumpling.");
  }, 90_000);
});
