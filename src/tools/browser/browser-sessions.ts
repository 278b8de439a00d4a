/**
 * One headless Chromium per server (or CLI), loaded on first use from the optional dependency
 * playwright-core and the machine's Chromium, and one browser context per session, closed with it.
 * Every request a page makes is checked: the session's own processes' ports on localhost go through
 * their sandbox's bridge (nothing else on the loopback is reachable); other hosts only when every
 * address they resolve to is public (the rule of fetch_url), unless private ones are allowed.
 */
import { existsSync } from "node:fs";
import type { Browser, BrowserContext, Page, Route, WebSocketRoute } from "playwright-core";
import { importExternal } from "../../import-external.js";
import { isAddressAllowed, systemLookup } from "../builtin/network-guard.js";
import { toolFailure } from "../builtin/tool-error.js";
import type { ProcessManager } from "../process/process-manager.js";
import type { ToolFile } from "../types.js";
import { fetchThroughBridge } from "./bridge-fetch.js";
import { type DownloadOutcome, saveDownload } from "./browser-downloads.js";

const LOOPBACK = new Set(["localhost", "127.0.0.1", "[::1]", "::1"]);
const ARGS = [
  "--headless=new",
  "--no-sandbox",
  "--disable-gpu",
  "--no-first-run",
  "--disable-background-networking",
];

/** A duration as a person reads it: "300 ms", "20 s", "10 min". */
function duration(ms: number): string {
  if (ms < 1000) return `${ms} ms`;
  return ms < 60_000 ? `${Math.round(ms / 1000)} s` : `${Math.round(ms / 60_000)} min`;
}

export interface BrowserLimits {
  /** Pages (tabs, popups) a session may have open at once; more are closed as they open. */
  maxPages: number;
  /** Longest wait of one action (a click, a navigation, a screenshot). */
  actionTimeoutMs: number;
  /** A session's browser closes after this long unused. */
  idleMs: number;
  /** A session's browser closes this long after it opened, used or not (the next use opens afresh). */
  lifetimeMs: number;
  /** Largest file a page may download into the workspace. */
  maxDownloadBytes: number;
}

export const DEFAULT_BROWSER_LIMITS: BrowserLimits = {
  maxPages: 4,
  actionTimeoutMs: 15_000,
  idleMs: 10 * 60_000,
  lifetimeMs: 60 * 60_000,
  maxDownloadBytes: 50 * 1024 * 1024,
};

export interface BrowserOptions {
  /** Chromium's path (default /usr/bin/chromium). */
  chromiumPath?: string;
  processes?: ProcessManager;
  /** Private addresses too (the operator's tools.fetch.allowPrivateNetwork). */
  allowPrivate?: boolean;
  limits?: Partial<BrowserLimits>;
}

/** One session's browser context. */
interface SessionContext {
  context: BrowserContext;
  /** The page actions go to: the newest open one. */
  current: Page;
  openedAt: number;
  timer?: ReturnType<typeof setTimeout>;
  /** The workspace downloads land in (the last run's that used the page). */
  workspace?: string;
  downloads: Array<Promise<DownloadOutcome>>;
  /** What the next action's answer should say (a page closed by the limit). */
  notes: string[];
}

/** A session's page as an action gets it. */
export interface SessionPage {
  page: Page;
  /** Said once: why the session's earlier browser is gone, or a popup over the page limit. */
  notes: string[];
}

export class BrowserSessions {
  readonly #options: BrowserOptions;
  readonly limits: BrowserLimits;
  #browser: Promise<Browser> | undefined;
  readonly #contexts = new Map<string, Promise<SessionContext>>();
  /** Why a session's browser was closed by a limit, said on its next use. */
  readonly #closedBecause = new Map<string, string>();

  constructor(options: BrowserOptions = {}) {
    this.#options = options;
    this.limits = { ...DEFAULT_BROWSER_LIMITS, ...options.limits };
  }

  /** The session's page (its context created on first use). */
  async page(sessionKey: string): Promise<Page> {
    return (await this.use(sessionKey)).page;
  }

  /**
   * The session's current page for one action, its context opened on first use (or afresh after a
   * limit closed it); downloads go into `workspace` from now on.
   */
  async use(sessionKey: string, workspace?: string): Promise<SessionPage> {
    let entry = this.#contexts.get(sessionKey);
    if (entry) {
      const open = await entry.catch(() => undefined);
      if (open && Date.now() - open.openedAt >= this.limits.lifetimeMs) {
        await this.#closeFor(sessionKey, "its lifetime ended");
        entry = undefined;
      }
    }
    if (!entry) {
      entry = this.#open(sessionKey);
      this.#contexts.set(sessionKey, entry);
      entry.catch(() => this.#contexts.delete(sessionKey));
    }
    const session = await entry;
    if (workspace) session.workspace = workspace;
    this.#arm(sessionKey, session);
    if (session.current.isClosed()) session.current = await session.context.newPage();
    const notes = session.notes.splice(0);
    const closed = this.#closedBecause.get(sessionKey);
    this.#closedBecause.delete(sessionKey);
    if (closed) notes.unshift(`The session's earlier browser was closed (${closed}); this is a fresh one.`);
    return { page: session.current, notes };
  }

  /**
   * The downloads started since the last call, once saved; waits `graceMs` first for one an action
   * just started (its event comes a moment after the click).
   */
  async takeDownloads(sessionKey: string, graceMs = 0): Promise<DownloadOutcome[]> {
    const session = await this.#contexts.get(sessionKey)?.catch(() => undefined);
    if (!session) return [];
    if (session.downloads.length === 0 && graceMs > 0) await new Promise((r) => setTimeout(r, graceMs));
    return Promise.all(session.downloads.splice(0));
  }

  /** Whether the session has a browser open now. */
  isOpen(sessionKey: string): boolean {
    return this.#contexts.has(sessionKey);
  }

  /** Closes a session's context. */
  async close(sessionKey: string): Promise<void> {
    const entry = this.#contexts.get(sessionKey);
    this.#contexts.delete(sessionKey);
    this.#closedBecause.delete(sessionKey);
    await entry
      ?.then((session) => {
        clearTimeout(session.timer);
        return session.context.close();
      })
      .catch(() => {});
  }

  /** Closes every context and the browser. */
  async closeAll(): Promise<void> {
    await Promise.all([...this.#contexts.keys()].map((key) => this.close(key)));
    const browser = this.#browser;
    this.#browser = undefined;
    await browser?.then((b) => b.close()).catch(() => {});
  }

  async #closeFor(sessionKey: string, why: string): Promise<void> {
    await this.close(sessionKey);
    this.#closedBecause.set(sessionKey, why);
  }

  /** Closes the session's browser when it has been idle too long or has lived its lifetime. */
  #arm(sessionKey: string, session: SessionContext): void {
    clearTimeout(session.timer);
    const now = Date.now();
    const idleEnds = now + this.limits.idleMs;
    const lifeEnds = session.openedAt + this.limits.lifetimeMs;
    const why = idleEnds <= lifeEnds ? `unused for ${duration(this.limits.idleMs)}` : "its lifetime ended";
    session.timer = setTimeout(
      () => void this.#closeFor(sessionKey, why),
      Math.max(0, Math.min(idleEnds, lifeEnds) - now),
    );
    session.timer.unref?.();
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

  async #open(sessionKey: string): Promise<SessionContext> {
    this.#browser ??= this.#launch();
    this.#browser.catch(() => {
      this.#browser = undefined;
    });
    const browser = await this.#browser;
    const context = await browser.newContext({
      viewport: { width: 1280, height: 800 },
      serviceWorkers: "block",
      acceptDownloads: true,
    });
    context.setDefaultTimeout(this.limits.actionTimeoutMs);
    context.setDefaultNavigationTimeout(this.limits.actionTimeoutMs);
    await context.route("**/*", (route) => this.#route(sessionKey, route));
    // WebSockets bypass request routing: the same rules, by hand (none to the loopback).
    await context.routeWebSocket(/.*/, (ws) => this.#routeSocket(ws));
    const first = await context.newPage();
    const session: SessionContext = {
      context,
      current: first,
      openedAt: Date.now(),
      downloads: [],
      notes: [],
    };
    const watch = (page: Page) => {
      page.on("download", (download) => {
        const workspace = session.workspace;
        if (!workspace) {
          void download.cancel().catch(() => {});
          return;
        }
        session.downloads.push(saveDownload(download, workspace, this.limits.maxDownloadBytes));
      });
      page.on("close", () => {
        if (session.current === page) {
          const open = context.pages().filter((p) => !p.isClosed());
          if (open.length > 0) session.current = open[open.length - 1] as Page;
        }
      });
    };
    watch(first);
    context.on("page", (page) => {
      if (page === first) return;
      if (context.pages().length > this.limits.maxPages) {
        session.notes.push(
          `A new page (${page.url()}) was closed: a session may have ${this.limits.maxPages} pages open.`,
        );
        void page.close().catch(() => {});
        return;
      }
      watch(page);
      session.current = page;
    });
    return session;
  }

  async #routeSocket(ws: WebSocketRoute): Promise<void> {
    try {
      const url = new URL(ws.url());
      if (LOOPBACK.has(url.hostname) || !(await this.#publicHost(url.hostname))) {
        await ws.close({ code: 1008, reason: "blocked by Dimsum" });
        return;
      }
      ws.connectToServer();
    } catch {
      await ws.close({ code: 1011 }).catch(() => {});
    }
  }

  /** Every address the host resolves to is public (or private ones are allowed). */
  async #publicHost(hostname: string): Promise<boolean> {
    if (this.#options.allowPrivate) return true;
    const addresses = await systemLookup(hostname.replace(/^\[|\]$/g, "")).catch(() => []);
    return addresses.length > 0 && addresses.every((a) => isAddressAllowed(a.address).allowed);
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
      if (!(await this.#publicHost(url.hostname))) return await route.abort("blockedbyclient");
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
  /** Puts a screenshot into the chat's attachments (absent outside a chat: the model alone sees it). */
  attach?: (data: Buffer, name: string) => Promise<ToolFile>;
}
