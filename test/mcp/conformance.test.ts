/**
 * The official MCP conformance suite, a subset that must keep passing: client scenarios against our
 * McpManager and server scenarios against our HTTP endpoint (the full list and results come from
 * `node bench/mcp-conformance.mjs`). Runs from the compiled build; all servers are on localhost.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
// @ts-expect-error: a plain .mjs script without type declarations
import * as conformance from "../../bench/mcp-conformance.mjs";
import { projectRoot } from "../support/fixtures.js";
import { ensureBuilt, makeTempDir, removeTempDir } from "./helpers.js";

interface Summary {
  scenario: string;
  passed: boolean;
  checks: string;
  failedChecks: string[];
}

const suite = conformance as {
  runConformance(args: string[], cwd: string): Promise<{ code: number; output: string }>;
  summarise(scenario: string, side: string, run: { code: number; output: string }): Summary;
  startDimsumServer(): Promise<{ url: string; stop(): Promise<void> }>;
};

const CLIENT_SCENARIOS = [
  "initialize",
  "tools_call",
  "sse-retry",
  "elicitation-sep1034-client-defaults",
  "auth/metadata-default",
  "auth/scope-step-up",
  "auth/token-endpoint-auth-basic",
  "auth/offline-access-scope",
  "auth/client-credentials-basic",
  "auth/client-credentials-jwt",
  "auth/enterprise-managed-authorization",
  "auth/iss-supported",
  "request-metadata",
];
const SERVER_SCENARIOS = [
  "server-initialize",
  "ping",
  "tools-list",
  "dns-rebinding-protection",
  "http-header-validation",
  "server-sse-multiple-streams",
];

describe("MCP conformance suite", () => {
  let server: { url: string; stop(): Promise<void> };
  let cwd: string;

  beforeAll(async () => {
    ensureBuilt();
    cwd = await makeTempDir("dimsum-conformance-");
    server = await suite.startDimsumServer();
  }, 180_000);
  afterAll(async () => {
    await server?.stop();
    await removeTempDir(cwd);
  });

  for (const scenario of CLIENT_SCENARIOS) {
    it(`client: ${scenario}`, async () => {
      const command = `${process.execPath} ${projectRoot}/dist/mcp/conformance-client.js`;
      const run = await suite.runConformance(["client", "--command", command, "--scenario", scenario], cwd);
      const summary = suite.summarise(scenario, "client", run);
      expect(summary.failedChecks, run.output).toEqual([]);
      expect(summary.passed, run.output).toBe(true);
    }, 60_000);
  }

  for (const scenario of SERVER_SCENARIOS) {
    it(`server: ${scenario}`, async () => {
      const run = await suite.runConformance(["server", "--url", server.url, "--scenario", scenario], cwd);
      const summary = suite.summarise(scenario, "server", run);
      expect(summary.failedChecks, run.output).toEqual([]);
      expect(summary.passed, run.output).toBe(true);
    }, 60_000);
  }
});
