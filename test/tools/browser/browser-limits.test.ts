/**
 * The browser tool's downloads, limits and chat files, with the real sandbox and the machine's
 * Chromium: a page of a session process downloads files into the workspace's downloads/ folder (one
 * over the size limit is not kept), popups over the page limit are closed, an action waits no longer
 * than the action timeout, an idle browser is closed and the next use says so, a screenshot goes to
 * the chat (the attach hook) and to the model, and a WebSocket to the host's loopback never connects.
 */
import { existsSync } from "node:fs";
import { mkdir, readFile, writeFile } from "node:fs/promises";
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
import type { ToolContext, ToolFile } from "../../../src/tools/types.js";
import { makeContext, makeTempDir, removeTempDir, runTool, textOf } from "../builtin/context.js";

const ready = (await detectSandbox("/usr/bin/bwrap")).available && existsSync("/usr/bin/chromium");
const KEY = "cli:browser-limits";
const PORT = 4175;
let workspace: string;
let manager: ProcessManager;
let browsers: BrowserSessions;
let ctx: ToolContext;
let hostServer: Server;
let upgrades = 0;
const attached: Array<{ name: string; bytes: number }> = [];

const PAGE = `<title>Files</title>
<a id=get href="/report.csv">Get the report</a>
<a id=big href="/big.bin">Get the big file</a>
<button id=pop onclick="for (let i = 0; i < 3; i++) window.open('/?popup=' + i)">Popups</button>
<p id=ws>ws: waiting</p>
<script>
  const port = new URLSearchParams(location.search).get("host");
  if (port) {
    const ws = new WebSocket("ws://127.0.0.1:" + port + "/");
    const state = document.getElementById("ws");
    ws.onopen = () => (state.textContent += " open");
    ws.onclose = () => (state.textContent += " closed");
  }
</script>`;
const SERVER = `node -e "
const fs = require('fs');
require('http').createServer((q, s) => {
  if (q.url === '/report.csv') { s.setHeader('content-type', 'text/csv'); s.setHeader('content-disposition', 'attachment; filename=report.csv'); return s.end('a,b\\n1,2\\n'); }
  if (q.url === '/big.bin') { s.setHeader('content-type', 'application/octet-stream'); s.setHeader('content-disposition', 'attachment; filename=big.bin'); return s.end(Buffer.alloc(4096, 7)); }
  s.setHeader('content-type', 'text/html'); s.end(fs.readFileSync('index.html'));
}).listen(${PORT}, '127.0.0.1')"`;

beforeAll(async () => {
  if (!ready) return;
  workspace = await makeTempDir("dimsum-browser-limits-");
  await mkdir(join(workspace, "site"));
  await writeFile(join(workspace, "site", "index.html"), PAGE);
  manager = new ProcessManager({ settings: DEFAULT_PROCESS_SETTINGS });
  browsers = new BrowserSessions({
    processes: manager,
    limits: { maxPages: 2, actionTimeoutMs: 4000, maxDownloadBytes: 1024 },
  });
  const base = makeContext(workspace);
  ctx = {
    ...base,
    config: { ...base.config, shell: { ...base.config.shell, allow: [] } },
    processes: { manager, key: KEY },
    browser: {
      sessions: browsers,
      key: KEY,
      attach: async (data, name): Promise<ToolFile> => {
        attached.push({ name, bytes: data.length });
        return { id: "f1", name, mimeType: "image/png", kind: "image", size: data.length };
      },
    },
  };
  // The host's own loopback: a page may not reach it, not even by WebSocket.
  hostServer = createServer((_q, s) => s.end("host secret"));
  hostServer.on("upgrade", (_req, socket) => {
    upgrades++;
    socket.destroy();
  });
  await new Promise<void>((r) => hostServer.listen(0, "127.0.0.1", r));
  const started = await runTool(
    processStartTool,
    { name: "files", command: SERVER, workingDirectory: "site" },
    ctx,
  );
  expect(started.isError, textOf(started)).toBeUndefined();
  const read = await runTool(processReadTool, { name: "files", waitForPort: PORT }, ctx);
  expect(textOf(read)).toContain("The port is listening.");
}, 60_000);

afterAll(async () => {
  await browsers?.closeAll();
  await manager?.closeAll();
  hostServer?.close();
  if (workspace) await removeTempDir(workspace);
});

describe.skipIf(!ready)("the browser tool's downloads and limits", () => {
  it("saves downloads into the workspace's downloads folder, and keeps none over the limit", async () => {
    const { port } = hostServer.address() as AddressInfo;
    const opened = await runTool(
      browserTool,
      { action: "open", url: `http://localhost:${PORT}/?host=${port}` },
      ctx,
    );
    expect(textOf(opened)).toContain("(200): Files");
    const clicked = await runTool(browserTool, { action: "click", selector: "#get" }, ctx);
    expect(textOf(clicked)).toContain("Downloaded downloads/report.csv (8 bytes) into the workspace.");
    expect(await readFile(join(workspace, "downloads", "report.csv"), "utf8")).toBe("a,b\n1,2\n");
    // Opening a file's address downloads it too; the first one is kept.
    const direct = await runTool(
      browserTool,
      { action: "open", url: `http://localhost:${PORT}/report.csv` },
      ctx,
    );
    expect(textOf(direct)).toContain("Downloaded downloads/report (2).csv");
    await runTool(browserTool, { action: "open", url: `http://localhost:${PORT}/?host=${port}` }, ctx);
    const big = await runTool(browserTool, { action: "click", selector: "#big" }, ctx);
    expect(textOf(big)).toContain("Did not keep the download big.bin: it is 4096 bytes, over the 1024 bytes");
    expect(existsSync(join(workspace, "downloads", "big.bin"))).toBe(false);
  }, 60_000);

  it("never connects a page's WebSocket to the host's loopback", async () => {
    const text = textOf(await runTool(browserTool, { action: "text" }, ctx));
    expect(text).toMatch(/ws: waiting( open)? closed/);
    expect(upgrades).toBe(0);
  }, 30_000);

  it("closes popups over the page limit and says so", async () => {
    await runTool(browserTool, { action: "open", url: `http://localhost:${PORT}/` }, ctx);
    await runTool(browserTool, { action: "click", selector: "#pop" }, ctx);
    const next = await runTool(browserTool, { action: "text" }, ctx);
    expect(textOf(next)).toContain("was closed: a session may have 2 pages open.");
    const page = await browsers.page(KEY);
    expect(page.context().pages()).toHaveLength(2);
    expect(page.url()).toContain("popup=0");
  }, 30_000);

  it("gives up an action after the action timeout", async () => {
    const started = Date.now();
    const missing = await runTool(browserTool, { action: "click", selector: "#nothing-here" }, ctx);
    expect(missing.isError).toBe(true);
    expect(textOf(missing)).toContain("4000ms");
    expect(Date.now() - started).toBeLessThan(10_000);
  }, 30_000);

  it("puts a screenshot into the chat and gives it to the model as an image", async () => {
    const shot = await runTool(browserTool, { action: "screenshot" }, ctx);
    const image = (shot.content as Array<{ type: string }>).find((p) => p.type === "image") as ImagePart;
    expect(Buffer.from(image.data, "base64").subarray(1, 4).toString()).toBe("PNG");
    expect(shot.file?.id).toBe("f1");
    expect(attached).toHaveLength(1);
    expect(attached[0]?.name).toMatch(/^screenshot-.*\.png$/);
    expect(attached[0]?.bytes).toBe(Buffer.from(image.data, "base64").length);
    expect(textOf(shot)).toContain("shown in the chat");
  }, 30_000);

  it("closes an idle session's browser, and its next use says so", async () => {
    const idle = new BrowserSessions({ limits: { idleMs: 300 } });
    try {
      await idle.use("idle-session", workspace);
      expect(idle.isOpen("idle-session")).toBe(true);
      await new Promise((r) => setTimeout(r, 800));
      expect(idle.isOpen("idle-session")).toBe(false);
      const again = await idle.use("idle-session", workspace);
      expect(again.notes.join(" ")).toContain("earlier browser was closed (unused for 300 ms)");
      const lived = new BrowserSessions({ limits: { lifetimeMs: 200 } });
      try {
        await lived.use("short", workspace);
        await new Promise((r) => setTimeout(r, 400));
        expect((await lived.use("short", workspace)).notes.join(" ")).toContain("its lifetime ended");
      } finally {
        await lived.closeAll();
      }
    } finally {
      await idle.closeAll();
    }
  }, 60_000);
});
