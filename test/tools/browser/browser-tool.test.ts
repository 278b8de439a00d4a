/**
 * The browser tool with the real sandbox and the machine's Chromium: it opens a page served by a
 * session process (reached through the process's bridge), clicks a button that changes the page,
 * and its screenshot comes back as an image part; a private address outside the session is refused,
 * and so is a loopback port no process of the session serves.
 */
import { existsSync } from "node:fs";
import { mkdir, writeFile } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ImagePart } from "../../../src/llm/types.js";
import { BrowserSessions } from "../../../src/tools/browser/browser-sessions.js";
import { browserTool } from "../../../src/tools/browser/browser-tool.js";
import { detectSandbox } from "../../../src/tools/builtin/sandbox/detect.js";
import { ProcessManager } from "../../../src/tools/process/process-manager.js";
import { processReadTool, processStartTool } from "../../../src/tools/process/process-tools.js";
import { DEFAULT_PROCESS_SETTINGS } from "../../../src/tools/process/types.js";
import type { ToolContext } from "../../../src/tools/types.js";
import { makeContext, makeTempDir, removeTempDir, runTool, textOf } from "../builtin/context.js";

const ready = (await detectSandbox("/usr/bin/bwrap")).available && existsSync("/usr/bin/chromium");
let workspace: string;
let manager: ProcessManager;
let browsers: BrowserSessions;
let ctx: ToolContext;
let hostServer: Server;

const PAGE =
  '<title>Counter</title><button onclick="n.textContent = Number(n.textContent) + 1">Count</button><p>count: <span id=n>0</span></p>';
const SERVER = `node -e "const fs=require('fs');require('http').createServer((q,s)=>{s.setHeader('content-type','text/html');s.end(fs.readFileSync('index.html'))}).listen(4174,'127.0.0.1')"`;

beforeAll(async () => {
  if (!ready) return;
  workspace = await makeTempDir("dimsum-browser-");
  await mkdir(join(workspace, "site"));
  await writeFile(join(workspace, "site", "index.html"), PAGE);
  manager = new ProcessManager({ settings: DEFAULT_PROCESS_SETTINGS });
  browsers = new BrowserSessions({ processes: manager });
  const base = makeContext(workspace);
  ctx = {
    ...base,
    config: { ...base.config, shell: { ...base.config.shell, allow: [] } },
    processes: { manager, key: "cli:browser" },
    browser: { sessions: browsers, key: "cli:browser" },
  };
  // A server on the host's own loopback: not the session's, so never reachable.
  hostServer = createServer((_q, s) => s.end("host secret"));
  await new Promise<void>((r) => hostServer.listen(0, "127.0.0.1", r));
}, 60_000);

afterAll(async () => {
  await browsers?.closeAll();
  await manager?.closeAll();
  hostServer?.close();
  if (workspace) await removeTempDir(workspace);
});

describe.skipIf(!ready)("the browser tool", () => {
  it("opens a session process's page, clicks, and returns a screenshot as an image", async () => {
    const started = await runTool(
      processStartTool,
      { name: "web", command: SERVER, workingDirectory: "site" },
      ctx,
    );
    expect(started.isError, textOf(started)).toBeUndefined();
    expect(textOf(await runTool(processReadTool, { name: "web", waitForPort: 4174 }, ctx))).toContain(
      "The port is listening.",
    );
    const opened = await runTool(browserTool, { action: "open", url: "http://localhost:4174/" }, ctx);
    expect(textOf(opened)).toContain("(200): Counter");
    expect(textOf(await runTool(browserTool, { action: "text" }, ctx))).toContain("count: 0");
    await runTool(browserTool, { action: "click", selector: "text=Count" }, ctx);
    expect(textOf(await runTool(browserTool, { action: "text" }, ctx))).toContain("count: 1");
    expect(textOf(await runTool(browserTool, { action: "snapshot" }, ctx))).toContain('button "Count"');
    const shot = await runTool(browserTool, { action: "screenshot" }, ctx);
    const image = (shot.content as Array<{ type: string }>).find((p) => p.type === "image") as ImagePart;
    expect(image.mimeType).toBe("image/png");
    expect(Buffer.from(image.data, "base64").subarray(1, 4).toString()).toBe("PNG");
  }, 60_000);

  it("refuses the host's loopback outside the session and private addresses", async () => {
    const { port } = hostServer.address() as AddressInfo;
    const host = await runTool(browserTool, { action: "open", url: `http://127.0.0.1:${port}/` }, ctx);
    expect(host.isError).toBe(true);
    expect(textOf(host)).toContain("ERR_BLOCKED_BY_CLIENT");
    const metadata = await runTool(
      browserTool,
      { action: "open", url: "http://169.254.169.254/latest/" },
      ctx,
    );
    expect(metadata.isError).toBe(true);
    expect(textOf(metadata)).toContain("ERR_BLOCKED_BY_CLIENT");
  }, 60_000);
});
