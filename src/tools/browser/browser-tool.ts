/**
 * `browser`: a headless Chromium page per session the model drives with actions: open a URL, read
 * the page as text or as an accessibility snapshot, click, type, press a key, scroll, and take a
 * screenshot that goes back to the model as an image (and, in a chat, into the chat as a file). The
 * session's own processes' ports are reachable on localhost; other private addresses are not (see
 * browser-sessions.ts). Files a page downloads land in the workspace's `downloads/` folder.
 */
import * as z from "zod";
import { errorResult, toolFailure } from "../builtin/tool-error.js";
import { defineTool, type ToolContext, type ToolResult, type ZodTool } from "../types.js";
import { describeDownloads } from "./browser-downloads.js";
import type { SessionBrowser } from "./browser-sessions.js";

const MAX_TEXT = 20_000;
/** How long after a click or key press a download may still start and be reported with it. */
const DOWNLOAD_GRACE_MS = 300;
const IS_DOWNLOAD = " is a download.";

const params = z.object({
  action: z
    .enum(["open", "text", "snapshot", "click", "type", "press", "scroll", "screenshot"])
    .describe("What to do on the session's page"),
  url: z.string().optional().describe("open: the address (a session process's port: http://localhost:PORT/)"),
  selector: z
    .string()
    .optional()
    .describe("click/type: a Playwright selector, e.g. 'text=Count', 'role=button[name=\"Save\"]', '#id'"),
  text: z.string().optional().describe("type: the text to type"),
  key: z.string().optional().describe("press: a key such as Enter, Tab, ArrowDown"),
  direction: z.enum(["down", "up"]).default("down").describe("scroll: which way, by one screen"),
});

function browserOf(ctx: ToolContext): SessionBrowser {
  if (!ctx.browser)
    throw toolFailure("The browser is not available in this run.", "use fetch_url to read pages");
  return ctx.browser;
}

function need<T>(value: T | undefined, name: string, action: string): T {
  if (value === undefined || value === "") throw toolFailure(`${action} needs ${name}.`, `give ${name}`);
  return value;
}

/** The browser tool. */
export const browserTool: ZodTool = defineTool({
  name: "browser",
  description:
    "Drive a headless browser page of this session: open a URL, read it as text or as an accessibility " +
    "snapshot, click, type, press keys, scroll, take a screenshot (returned as an image, and shown in the chat). Downloads land in downloads/ of the " +
    "workspace. Pages served by " +
    "this session's processes are reachable at http://localhost:PORT/; private addresses are not.",
  parameters: params,
  concurrencySafe: false,
  timeoutMs: 120_000,
  async execute(args, ctx): Promise<ToolResult | string> {
    try {
      const browser = browserOf(ctx);
      const { page, notes } = await browser.sessions.use(browser.key, ctx.workspace);
      const result = await act(args, page, browser);
      // Clicks, keys and navigations may start downloads: they land in the workspace.
      const opened = typeof result === "string" && result.endsWith(IS_DOWNLOAD);
      const grace = opened || args.action === "click" || args.action === "press" ? DOWNLOAD_GRACE_MS : 0;
      const saved = describeDownloads(await browser.sessions.takeDownloads(browser.key, grace));
      return withLines(result, [...notes, ...(saved ? [saved] : [])]);
    } catch (err) {
      return errorResult(err);
    }
  },
});

type Args = z.output<typeof params>;

/** Text lines added to an answer (before its content). */
function withLines(result: ToolResult | string, lines: string[]): ToolResult | string {
  if (lines.length === 0) return result;
  const extra = lines.join("\n");
  if (typeof result === "string") return `${result}\n${extra}`;
  const content =
    typeof result.content === "string"
      ? `${result.content}\n${extra}`
      : [...result.content, { type: "text" as const, text: extra }];
  return { ...result, content };
}

function firstLine(err: unknown): string {
  return err instanceof Error ? (err.message.split("\n")[0] ?? "") : String(err);
}

async function act(
  args: Args,
  page: import("playwright-core").Page,
  browser: SessionBrowser,
): Promise<ToolResult | string> {
  switch (args.action) {
    case "open": {
      const url = need(args.url, "url", "open");
      let status = "no response";
      try {
        const response = await page.goto(url, { waitUntil: "load" });
        status = String(response?.status() ?? "no response");
      } catch (err) {
        // A link to a file: the navigation turns into a download (reported by the caller).
        if (/Download is starting|net::ERR_ABORTED/.test(firstLine(err))) return `${url}${IS_DOWNLOAD}`;
        throw toolFailure(
          `Could not open ${url}: ${firstLine(err)}.`,
          "private addresses are refused; a session process's page is at http://localhost:PORT/",
        );
      }
      return `Opened ${page.url()} (${status}): ${await page.title()}`;
    }
    case "text": {
      // biome-ignore lint/performance/useDomNodeTextContent: the visible text, as a person reads the page.
      const text = await page.innerText("body");
      return text.length > MAX_TEXT ? `${text.slice(0, MAX_TEXT)}\n… [cut]` : text;
    }
    case "snapshot":
      return await page.locator("body").ariaSnapshot();
    case "click":
      await page
        .locator(need(args.selector, "selector", "click"))
        .first()
        .click();
      return `Clicked ${args.selector}.`;
    case "type":
      await page
        .locator(need(args.selector, "selector", "type"))
        .first()
        .fill(need(args.text, "text", "type"));
      return `Typed into ${args.selector}.`;
    case "press":
      await page.keyboard.press(need(args.key, "key", "press"));
      return `Pressed ${args.key}.`;
    case "scroll":
      await page.mouse.wheel(0, args.direction === "up" ? -700 : 700);
      return `Scrolled ${args.direction}.`;
    case "screenshot":
      return screenshot(page, browser);
  }
}

/** A screenshot for the model (an image part) and, in a chat, for the people in it (a file). */
async function screenshot(
  page: import("playwright-core").Page,
  browser: SessionBrowser,
): Promise<ToolResult> {
  const png = await page.screenshot({ type: "png" });
  const name = `screenshot-${new Date().toISOString().replace(/[:.]/g, "-")}.png`;
  const file = browser.attach ? await browser.attach(png, name) : undefined;
  return {
    content: [
      {
        type: "text",
        text: `Screenshot of ${page.url()}${file ? ` (shown in the chat as ${file.name})` : ""}`,
      },
      { type: "image", mimeType: "image/png", data: png.toString("base64") },
    ],
    ...(file ? { file } : {}),
  };
}
