/**
 * Headless Chromium for the browser tests: Debian's `chromium` driven by playwright-core (which never
 * downloads a browser), a log of what the page printed, and screenshots saved as test artifacts.
 */
import { existsSync, mkdirSync, readdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { type Browser, chromium, type Page } from "playwright-core";

/** Where screenshots go (CI keeps this folder as the run's artifacts). */
export const ARTIFACTS_DIR = fileURLToPath(new URL("../../test-artifacts/e2e/", import.meta.url));

const CHROMIUM_CANDIDATES = ["/usr/bin/chromium", "/usr/bin/chromium-browser"];

const CHROMIUM_ARGS = [
  "--headless=new",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

/** The Chromium binary: `DIMSUM_CHROMIUM` if set, else Debian's; fails with how to install it. */
export function chromiumPath(): string {
  const override = process.env.DIMSUM_CHROMIUM;
  const found = override ? [override].filter(existsSync) : CHROMIUM_CANDIDATES.filter(existsSync);
  if (found[0]) return found[0];
  throw new Error(
    `Chromium was not found at ${override ?? CHROMIUM_CANDIDATES.join(" or ")}; the web UI's end-to-end tests need it. ` +
      "Run `npm test` (its pretest, scripts/ensure-test-packages.mjs, installs Debian's chromium and bubblewrap as root or prints the command), " +
      "install it yourself (`apt-get install chromium`) or point DIMSUM_CHROMIUM at a Chromium binary. " +
      "playwright-core never downloads a browser.",
  );
}

/** Launches headless Chromium with a fresh temporary profile. */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: chromiumPath(), args: CHROMIUM_ARGS, timeout: 30_000 });
}

/**
 * Runs in the page before its own scripts: reports CSP violations to the console (so they are
 * collected with the rest) and records every text a streaming run bubble shows, in order (its
 * text parts joined).
 */
const PAGE_PROBE = `
document.addEventListener("securitypolicyviolation", (e) => {
  console.error("Content Security Policy violation: " + e.violatedDirective + " blocked " + e.blockedURI);
});
window.__runTexts = {};
new MutationObserver(() => {
  for (const bubble of document.querySelectorAll('[data-testid="run-bubble"]')) {
    const id = bubble.getAttribute("data-run-id");
    if (!id) continue;
    // The text parts of the answer itself (not of agents it called), joined as one reads them.
    const parts = [...bubble.querySelectorAll('[data-testid="run-text"]')].filter(
      (el) => el.closest('[data-testid="agent-run"]') === null,
    );
    if (parts.length === 0) continue;
    const seen = (window.__runTexts[id] ??= []);
    const text = parts.map((el) => el.textContent.trim()).join(" ");
    if (seen[seen.length - 1] !== text) seen.push(text);
  }
}).observe(document, { subtree: true, childList: true, characterData: true });
`;

/** What a page printed: console messages and uncaught errors. */
export class PageLog {
  readonly lines: string[] = [];

  constructor(page: Page) {
    page.on("console", (m) => this.lines.push(`console.${m.type()}: ${m.text()}`));
    page.on("pageerror", (err) => this.lines.push(`pageerror: ${err.stack ?? err.message}`));
  }

  /** Console errors and uncaught exceptions. */
  errors(): string[] {
    return this.lines.filter((l) => l.startsWith("console.error") || l.startsWith("pageerror"));
  }

  /** Uncaught exceptions only. */
  uncaught(): string[] {
    return this.lines.filter((l) => l.startsWith("pageerror"));
  }

  /** Every message about the Content Security Policy (Chromium's own and the probe's). */
  cspViolations(): string[] {
    return this.lines.filter((l) => l.includes("Content Security Policy"));
  }
}

/** Opens a page with the probe installed and its log attached. */
export async function openPage(browser: Browser): Promise<{ page: Page; log: PageLog }> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 860 } });
  await context.addInitScript({ content: PAGE_PROBE });
  const page = await context.newPage();
  page.setDefaultTimeout(10_000);
  return { page, log: new PageLog(page) };
}

/** The texts the run's bubble showed while it streamed, in order. */
export async function runTextsOf(page: Page, runId: string): Promise<string[]> {
  const all = await page.evaluate<Record<string, string[]>>("window.__runTexts");
  return all[runId] ?? [];
}

/**
 * Removes the previous run's screenshots: those at the top of the artifacts folder, or of one
 * subfolder. Each test file (they run in parallel) resets only its own.
 */
export function resetArtifacts(subfolder?: string): void {
  if (subfolder !== undefined) {
    const dir = join(ARTIFACTS_DIR, subfolder);
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(dir, { recursive: true });
    return;
  }
  mkdirSync(ARTIFACTS_DIR, { recursive: true });
  for (const entry of readdirSync(ARTIFACTS_DIR, { withFileTypes: true }))
    if (entry.isFile()) rmSync(join(ARTIFACTS_DIR, entry.name), { force: true });
}

/**
 * Calls the API as the page's signed-in person: its session cookie and CSRF token, as the app's own
 * requests go. Throws with the status and body unless it succeeds; JSON back (undefined for 204).
 */
export async function pageApi<T = unknown>(
  page: Page,
  base: string,
  method: string,
  path: string,
  data?: unknown,
): Promise<T> {
  const me = await page.request.get(`${base}/api/auth/me`);
  const { csrfToken } = (await me.json()) as { csrfToken: string };
  const res = await page.request.fetch(base + path, {
    method,
    headers: { "x-csrf-token": csrfToken },
    ...(data === undefined ? {} : { data }),
  });
  if (!res.ok()) throw new Error(`${method} ${path}: ${res.status()} ${await res.text()}`);
  return (res.status() === 204 ? undefined : await res.json()) as T;
}

/**
 * How far the page, its content column, the message list or the composer run past their right edge
 * at the current width, in px: 0 or less when nothing scrolls sideways.
 */
export function sidewaysOverflow(page: Page): Promise<number> {
  return page.evaluate(() => {
    const over = (el: Element | null) => (el ? el.scrollWidth - el.clientWidth : 0);
    return Math.max(
      document.documentElement.scrollWidth - window.innerWidth,
      over(document.scrollingElement),
      over(document.querySelector("main.content")),
      over(document.querySelector(".message-scroller")),
      over(document.querySelector('[data-testid="composer"]')),
    );
  });
}

/**
 * Waits for the page's finite animations (a layout's transitions after a resize, say) to end. Looping
 * ones (a running answer's indicator) are left alone, and one cancelled meanwhile (its element
 * re-rendered, so `finished` rejects with AbortError) counts as ended.
 */
export async function animationsSettled(page: Page): Promise<void> {
  await page.evaluate(() =>
    Promise.all(
      document
        .getAnimations()
        .filter((a) => a.effect?.getComputedTiming().endTime !== Number.POSITIVE_INFINITY)
        .map((a) => a.finished.catch(() => undefined)),
    ),
  );
}

/** Saves a full-page screenshot as `test-artifacts/e2e/<name>.png`. */
export async function screenshot(page: Page, name: string): Promise<string> {
  const path = join(ARTIFACTS_DIR, `${name}.png`);
  await page.screenshot({ path, fullPage: true });
  return path;
}

/**
 * Runs one flow; on failure saves `<name>-failed.png` and rethrows with the page's console errors
 * and the server's log lines, so the report says what the browser saw.
 */
export async function flow(
  page: Page,
  log: PageLog,
  serverLog: string[],
  name: string,
  body: () => Promise<void>,
): Promise<void> {
  try {
    await body();
    await screenshot(page, name);
  } catch (err) {
    const shot = await screenshot(page, `${name}-failed`).catch((e: unknown) => `none (${String(e)})`);
    const error = err instanceof Error ? err : new Error(String(err));
    error.message = [
      error.message,
      `screenshot: ${shot}`,
      `page URL: ${page.url()}`,
      `page console errors:\n  ${log.errors().join("\n  ") || "(none)"}`,
      `server log:\n  ${serverLog.join("\n  ") || "(empty)"}`,
    ].join("\n");
    throw error;
  }
}
