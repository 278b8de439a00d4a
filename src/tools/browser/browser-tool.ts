/**
 * `browser`: a headless Chromium page per session the model drives with actions: open a URL, read
 * the page as text or as an accessibility snapshot, click, type, press a key, scroll, and take a
 * screenshot that goes back to the model as an image. The session's own processes' ports are
 * reachable on localhost; other private addresses are not (see browser-sessions.ts).
 */
import * as z from "zod";
import { errorResult, toolFailure } from "../builtin/tool-error.js";
import { defineTool, type ToolContext, type ToolResult, type ZodTool } from "../types.js";
import type { SessionBrowser } from "./browser-sessions.js";

const ACTION_TIMEOUT_MS = 15_000;
const MAX_TEXT = 20_000;

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
    "snapshot, click, type, press keys, scroll, take a screenshot (returned as an image). Pages served by " +
    "this session's processes are reachable at http://localhost:PORT/; private addresses are not.",
  parameters: params,
  concurrencySafe: false,
  timeoutMs: 120_000,
  async execute(args, ctx): Promise<ToolResult | string> {
    try {
      const browser = browserOf(ctx);
      const page = await browser.sessions.page(browser.key);
      page.setDefaultTimeout(ACTION_TIMEOUT_MS);
      switch (args.action) {
        case "open": {
          const url = need(args.url, "url", "open");
          const response = await page.goto(url, { waitUntil: "load" }).catch((err: unknown) => {
            throw toolFailure(
              `Could not open ${url}: ${err instanceof Error ? err.message.split("\n")[0] : String(err)}.`,
              "private addresses are refused; a session process's page is at http://localhost:PORT/",
            );
          });
          return `Opened ${page.url()} (${response?.status() ?? "no response"}): ${await page.title()}`;
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
        case "screenshot": {
          const png = await page.screenshot({ type: "png" });
          return {
            content: [
              { type: "text", text: `Screenshot of ${page.url()}` },
              { type: "image", mimeType: "image/png", data: png.toString("base64") },
            ],
          };
        }
      }
    } catch (err) {
      return errorResult(err);
    }
  },
});
