import { cpSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { type FakeLlmServer, startFakeLlmServer } from "../../src/testing/fake-llm-server.js";
import { cleanEnv, jsonLines, runCli } from "../support/cli.js";
import { projectRoot } from "../support/fixtures.js";

let llm: FakeLlmServer;
let cwd: string;
let env: NodeJS.ProcessEnv;

beforeAll(async () => {
  llm = await startFakeLlmServer({ strict: true });
  // A project holding a copy of the repository's own skills/ folder (code-review, commit-message).
  cwd = mkdtempSync(join(tmpdir(), "dimsum-skills-"));
  cpSync(join(projectRoot, "skills"), join(cwd, "skills"), { recursive: true });
  env = cleanEnv({
    OPENAI_API_KEY: "sk-test",
    OPENAI_BASE_URL: `${llm.url}/v1`,
    DIMSUM_MODEL: "openai:gpt-4o",
  });
});
afterAll(async () => {
  await llm.close();
});
beforeEach(() => llm.reset());

/** Runs one prompt; returns the skills named by the context event and the model request's text. */
async function run(prompt: string): Promise<{ skills: unknown; request: string }> {
  const before = llm.requests.length;
  llm.enqueue({ text: "ok" });
  const result = await runCli(["run", "--json", prompt], { env, cwd });
  expect(result.code).toBe(0);
  const context = jsonLines(result.stdout).find((e) => e.type === "context");
  return { skills: context?.skills, request: JSON.stringify(llm.requests[before]?.body) };
}

describe("the shipped skills apply only when they match", () => {
  it("sends no skill with prompts about dim sum and haikus", async () => {
    for (const prompt of ["Tell me about dim sum", "Write a haiku about autumn"]) {
      const { skills, request } = await run(prompt);
      expect(skills).toEqual([]);
      expect(request).not.toContain("# Code review");
      expect(request).not.toContain("# Commit message");
    }
  });

  it("sends no body on topic either (the index names it; the model loads it), and a /skill one on any prompt", async () => {
    const review = await run("Review my pull request for bugs");
    expect(review.skills).toEqual([]);
    expect(review.request).not.toContain("# Code review");
    expect(review.request).toContain("code-review");

    const named = await run("/skill commit-message Tell me about dim sum");
    expect(named.skills).toEqual(["commit-message"]);
    expect(named.request).toContain("# Commit message");
  });
});
