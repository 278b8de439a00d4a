/**
 * One headless Chromium per server (or CLI), loaded on first use from the optional dependency
 * playwright-core and the machine's Chromium, and one browser context per session, closed with it.
 * Every request a page makes is checked: the session's own processes' ports on localhost go through
 * their sandbox's bridge (nothing else on the loopback is reachable); other hosts only when every
 * address they resolve to is public (the rule of fetch_url), unless private ones are allowed.
 */
import { existsSync } from "node:fs";
import type { Browser, BrowserContext, Page, Route } from "playwright-core";
import { importExternal } from "../../import-external.js";
import { isAddressAllowed, systemLookup } from "../builtin/network-guard.js";
import { toolFailure } from "../builtin/tool-error.js";
import type { ProcessManager } from "../process/process-manager.js";
import { fetchThroughBridge } from "./bridge-fetch.js";

const LOOPBACK = new Set(["localhost", "127.0.0.1", "[::1]", "::1"]);
const ARGS = [
  "--headless=new",
  "--no-sandbox",
  "--disable-gpu",
  "--no-first-run",
  "--disable-background-networking",
];

export interface BrowserOptions {
  /** Chromium's path (default /usr/bin/chromium). */
  chromiumPath?: string;
  processes?: ProcessManager;
  /** Private addresses too (the operator's tools.fetch.allowPrivateNetwork). */
  allowPrivate?: boolean;
}

export class BrowserSessions {
  readonly #options: BrowserOptions;
  #browser: Promise<Browser> | undefined;
  readonly #contexts = new Map<string, Promise<{ context: BrowserContext; page: Page }>>();

  constructor(options: BrowserOptions = {}) {
    this.#options = options;
  }

  /** The session's page (its context created on first use). */
  async page(sessionKey: string): Promise<Page> {
    let entry = this.#contexts.get(sessionKey);
    if (!entry) {
      entry = this.#open(sessionKey);
      this.#contexts.set(sessionKey, entry);
      entry.catch(() => this.#contexts.delete(sessionKey));
    }
    const { context, page } = await entry;
    return page.isClosed() ? context.newPage() : page;
  }

  /** Closes a session's context. */
  async close(sessionKey: string): Promise<void> {
    const entry = this.#contexts.get(sessionKey);
    this.#contexts.delete(sessionKey);
    await entry?.then(({ context }) => context.close()).catch(() => {});
  }

  /** Closes every context and the browser. */
  async closeAll(): Promise<void> {
    await Promise.all([...this.#contexts.keys()].map((key) => this.close(key)));
    const browser = this.#browser;
    this.#browser = undefined;
    await browser?.then((b) => b.close()).catch(() => {});
  }

  async #launch(): Promise<Browser> {
    const path = this.#options.chromiumPath ?? "/usr/bin/chromium";
    let playwright: typeof import("playwright-core");
    try {
      playwright = (await importExternal("playwright-core")) as typeof import("playwright-core");
    } catch {
      throw toolFailure(
        "The browser tool needs the optional package playwright-core, which is not installed.",
        "install it next to Dimsum (npm install playwright-core)",
      );
    }
    if (!existsSync(path)) {
      throw toolFailure(
        `The browser tool needs Chromium at ${path}, and there is none.`,
        "install it (apt-get install chromium)",
      );
    }
    return playwright.chromium.launch({ executablePath: path, args: ARGS, timeout: 30_000 });
  }

  async #open(sessionKey: string): Promise<{ context: BrowserContext; page: Page }> {
    this.#browser ??= this.#launch();
    this.#browser.catch(() => {
      this.#browser = undefined;
    });
    const browser = await this.#browser;
    const context = await browser.newContext({
      viewport: { width: 1280, height: 800 },
      serviceWorkers: "block",
    });
    await context.route("**/*", (route) => this.#route(sessionKey, route));
    return { context, page: await context.newPage() };
  }

  async #route(sessionKey: string, route: Route): Promise<void> {
    try {
      const request = route.request();
      const url = new URL(request.url());
      if (url.protocol !== "http:" && url.protocol !== "https:") return await route.continue();
      if (LOOPBACK.has(url.hostname)) {
        const port = Number(url.port || (url.protocol === "https:" ? 443 : 80));
        const processes = this.#options.processes;
        const owner = url.protocol === "http:" ? processes?.ownerOfPort(sessionKey, port) : undefined;
        const socket = owner && processes ? await processes.connect(sessionKey, owner.name, port) : undefined;
        if (!socket) return await route.abort("blockedbyclient");
        const answer = await fetchThroughBridge(socket, {
          method: request.method(),
          path: `${url.pathname}${url.search}`,
          headers: await request.allHeaders(),
          body: request.postDataBuffer() ?? undefined,
          host: url.host,
        });
        return await route.fulfill(answer);
      }
      if (!this.#options.allowPrivate) {
        const addresses = await systemLookup(url.hostname.replace(/^\[|\]$/g, "")).catch(() => []);
        if (addresses.length === 0 || addresses.some((a) => !isAddressAllowed(a.address).allowed)) {
          return await route.abort("blockedbyclient");
        }
      }
      return await route.continue();
    } catch {
      await route.abort("failed").catch(() => {});
    }
  }
}

/** A session's browser, as a run's tools see it. */
export interface SessionBrowser {
  sessions: BrowserSessions;
  key: string;
}
