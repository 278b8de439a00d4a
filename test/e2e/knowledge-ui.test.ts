/**
 * The knowledge page end to end in real headless Chromium against a real server (the `dimsum serve`
 * wiring, knowledge routes over a temp SQLite file): log in, create a base, upload a Markdown and a
 * text file through the file input and another by drag and drop, watch the upload and indexing
 * progress, see an unsupported and an oversized file refused, search with citations, and remove a
 * document from the list and the results. The flows build on each other, in order, in one page.
 */
import type { Locator, Page } from "playwright-core";
import { describe, expect, it } from "vitest";
import { flow, type PageLog, resetArtifacts } from "./browser.js";
import type { E2eServer } from "./e2e-server.js";
import { e2eStack, setUpOwner } from "./stack.js";

const FLOW_TIMEOUT_MS = 30_000;
const PASSWORD = "owner-password-1";
const KB = "handbook";
/** Small, so the oversized file is small too; the message names it. */
const MAX_FILE_BYTES = 64 * 1024;
/** This file's screenshots, apart from the other browser tests' (which empty the folder above). */
const SHOTS = "knowledge";

const HANDBOOK_MD = [
  "# Employee Handbook",
  "",
  // Long enough (over a quarter of a parent chunk) that the next section starts a passage of its own.
  ...Array.from(
    { length: 6 },
    (_, i) =>
      `Welcome, part ${i + 1}. This handbook explains how the company works day to day: who to ask, where things are kept, how meetings are run and which forms exist for what. Read it before your first week.\n`,
  ),
  "## Onboarding",
  "",
  "Every new hire receives a brass compass engraved Zephyrine on their first morning,",
  "handed over by the quartermaster in the east atrium.",
  "",
  "## Holidays",
  "",
  "The office closes for the lantern festival and for the midsummer regatta.",
  "",
].join("\n");
const GREENHOUSE_TXT = [
  "Greenhouse maintenance notes",
  "",
  "The orchid misting pump runs every quarter hour. Its quokka-shaped valve must be turned",
  "clockwise twice before the winter drain, or the pipes crack.",
  "A compass plant grows by the door; it is not brass.",
  "",
].join("\n");
const GLOSSARY_MD = [
  "# Glossary",
  "",
  "## Snorkelwort",
  "",
  "Snorkelwort is the herb the canteen grows on the roof terrace for its pesto.",
  "Its watering tap has a valve as well.",
  "",
].join("\n");

let server: E2eServer;
let page: Page;
let log: PageLog;

const byTest = (id: string) => page.getByTestId(id);
const step = (name: string, body: () => Promise<void>) =>
  flow(page, log, server.logLines, `${SHOTS}/${name}`, body);
const text = (locator: Locator) => async () => ((await locator.textContent()) ?? "").trim();
/** Polls until the value matches, for up to 10 s (vitest's default of 1 s is tight on a busy CI box). */
const until = <T>(read: () => Promise<T>) => expect.poll(read, { timeout: 10_000, interval: 50 });
const squash = (s: string) => s.replace(/\s+/g, " ").trim();

const upload = () => byTest("kb-upload");
const documentRows = () => byTest("kb-document");
const sources = () => byTest("kb-document-source").allTextContents();
/** The source of each passage found, best first. */
const passageSources = () =>
  byTest("kb-passage").evaluateAll((els) => els.map((el) => el.getAttribute("data-source")));
const baseRow = () => page.locator(`[data-testid="kb-row"][data-kb="${KB}"]`);

/**
 * Runs in the page: records each phase the upload area passes through (and the progress line it
 * showed), so a test can tell the progress was on screen even when indexing takes a moment only.
 */
const PHASE_PROBE = `
window.__kbPhases = [];
new MutationObserver(() => {
  const zone = document.querySelector('[data-testid="kb-upload"]');
  if (!zone) return;
  const line = zone.querySelector('[data-testid="kb-upload-progress"], [data-testid="kb-ingest-progress"]');
  const entry = zone.getAttribute("data-phase") + (line ? ": " + line.textContent.replace(/\\s+/g, " ").trim() : "");
  const seen = window.__kbPhases;
  if (seen[seen.length - 1] !== entry) seen.push(entry);
}).observe(document, { subtree: true, childList: true, characterData: true, attributes: true });
`;

/** The phases recorded since the last call, then forgets them. */
async function takePhases(): Promise<string[]> {
  return page.evaluate<string[]>("window.__kbPhases.splice(0)");
}

/** GETs an API path with the browser's own session cookie. */
async function apiGet<T>(path: string): Promise<T> {
  const res = await page.request.get(server.url + path);
  const body = await res.text();
  if (res.status() !== 200) throw new Error(`GET ${path}: ${res.status()} ${body}`);
  return JSON.parse(body) as T;
}

/** How many searches the page has finished (its search box counts them). */
const searchesDone = async () => Number(await byTest("kb-search").getAttribute("data-searches"));

/** Searches the base from the page and waits until the results of this search are on screen. */
async function search(words: string): Promise<void> {
  const before = await searchesDone();
  await byTest("kb-search-input").fill(words);
  await byTest("kb-search-submit").click();
  await until(searchesDone).toBeGreaterThan(before);
}

/**
 * Waits for the upload area to show a finished job with this summary (polled: the previous job's
 * result stays on screen until the next upload starts).
 */
async function seeFinished(summary: string): Promise<void> {
  await until(async () => squash(await text(byTest("kb-ingest-summary"))())).toBe(summary);
  expect(await byTest("kb-ingest-result").getAttribute("data-status")).toBe("done");
}

e2eStack(
  { before: () => resetArtifacts(SHOTS), server: { knowledge: { maxFileBytes: MAX_FILE_BYTES } } },
  async (stack) => {
    ({ server, page, log } = stack);
    await page.context().addInitScript({ content: PHASE_PROBE });
  },
);

describe("knowledge page in headless Chromium", () => {
  it(
    "logs in, opens the knowledge page and creates a base",
    async () => {
      await step("01-base-created", async () => {
        await setUpOwner(page, server.url, PASSWORD);
        await byTest("app-shell").waitFor();

        await byTest("nav-knowledge").click();
        await page.waitForURL(/\/knowledge$/);
        await byTest("kb-empty").waitFor();
        // No embedding model is configured, and the page says what that means.
        expect(await byTest("kb-mode").getAttribute("data-mode")).toBe("bm25");
        expect(await text(byTest("kb-mode"))()).toContain("BM25 only");

        await byTest("kb-create-name").fill(KB);
        await byTest("kb-create-submit").click();
        await baseRow().waitFor();
        // The new base opens, ready for files.
        await page.locator(`[data-testid="kb-detail"][data-kb="${KB}"]`).waitFor();
        await byTest("kb-documents-empty").waitFor();
        expect(await upload().getAttribute("data-phase")).toBe("idle");
        // The limits the server enforces are stated before anyone uploads.
        expect(squash(await text(byTest("kb-upload-limits"))())).toMatch(/up to \d+ files of 64 KB each\.$/);
      });
      const list = await apiGet<{ bases: Array<{ name: string; documents: number }> }>("/api/kb");
      expect(list.bases.map((b) => [b.name, b.documents])).toEqual([[KB, 0]]);
    },
    FLOW_TIMEOUT_MS,
  );

  it(
    "uploads a Markdown and a text file through the file input and shows upload and indexing progress",
    async () => {
      await step("02-files-uploaded", async () => {
        await takePhases();
        // The "choose files" button opens the page's file input, as a person would use it.
        const [chooser] = await Promise.all([page.waitForEvent("filechooser"), byTest("kb-pick").click()]);
        expect(chooser.isMultiple()).toBe(true);
        await chooser.setFiles([
          { name: "handbook.md", mimeType: "text/markdown", buffer: Buffer.from(HANDBOOK_MD) },
          { name: "greenhouse.txt", mimeType: "text/plain", buffer: Buffer.from(GREENHOUSE_TXT) },
        ]);
        await seeFinished("Done: 2 added.");
        const files = byTest("kb-ingest-file");
        expect(await files.evaluateAll((els) => els.map((el) => el.getAttribute("data-outcome")))).toEqual([
          "added",
          "added",
        ]);
        expect(squash(await text(files.filter({ hasText: "handbook.md" }))())).toMatch(
          /^handbook\.md: added \(\d+ chunks\)$/,
        );

        await until(sources).toEqual(["greenhouse.txt", "handbook.md"]);
        await until(text(baseRow().getByTestId("kb-row-documents"))).toBe("2");
      });
      // Bytes went up, then the job was polled, then it finished: each was on screen in turn.
      const phases = await takePhases();
      const order = phases.map((p) => p.split(":")[0]).filter((p, i, all) => all[i - 1] !== p);
      expect(order).toEqual(["uploading", "ingesting", "finished"]);
      expect(phases).toContain("uploading: Uploading 2 files… 0%");
      expect(phases.some((p) => /^ingesting: Indexing 0\/2 Cancel$/.test(p))).toBe(true);

      const docs = await apiGet<Array<{ source: string; mime: string; status: string; childChunks: number }>>(
        `/api/kb/${KB}/documents`,
      );
      expect(docs.map((d) => [d.source, d.mime, d.status]).sort()).toEqual([
        ["greenhouse.txt", "text/plain", "ready"],
        ["handbook.md", "text/markdown", "ready"],
      ]);
      expect(docs.every((d) => d.childChunks > 0)).toBe(true);
    },
    FLOW_TIMEOUT_MS,
  );

  it(
    "takes a file dropped on the drop zone",
    async () => {
      await step("03-file-dropped", async () => {
        const zone = byTest("kb-dropzone");
        const dropped = await page.evaluateHandle((content) => {
          const transfer = new DataTransfer();
          transfer.items.add(new File([content], "glossary.md", { type: "text/markdown" }));
          return transfer;
        }, GLOSSARY_MD);
        await zone.dispatchEvent("dragenter", { dataTransfer: dropped });
        await zone.dispatchEvent("dragover", { dataTransfer: dropped });
        // The zone lights up while files are over it.
        await until(() => zone.getAttribute("data-over")).toBe("true");
        await zone.dispatchEvent("drop", { dataTransfer: dropped });
        await until(() => zone.getAttribute("data-over")).toBe("false");
        await seeFinished("Done: 1 added.");
        await until(sources).toEqual(["glossary.md", "greenhouse.txt", "handbook.md"]);
        await until(text(baseRow().getByTestId("kb-row-documents"))).toBe("3");
      });
    },
    FLOW_TIMEOUT_MS,
  );

  it(
    "refuses an unsupported file type and a file over the size limit, saying why, and adds nothing",
    async () => {
      const error = byTest("kb-upload-error");
      const message = async () => squash(await text(byTest("kb-upload-error-text"))());
      await step("04-unsupported-refused", async () => {
        // A good file in the same batch: the batch is refused whole.
        await byTest("kb-file-input").setInputFiles([
          { name: "notes.md", mimeType: "text/markdown", buffer: Buffer.from("# Notes\n\nkept out\n") },
          {
            name: "installer.exe",
            mimeType: "application/octet-stream",
            buffer: Buffer.from([0x4d, 0x5a, 0x90, 0x00]),
          },
        ]);
        await error.waitFor();
        expect(await error.getAttribute("role")).toBe("alert");
        expect(await message()).toBe(
          "Upload refused: installer.exe: unsupported file type; upload Markdown, text, HTML, PDF or source code files. Nothing from these files was added.",
        );
        expect(await upload().getAttribute("data-phase")).toBe("problem");
      });
      await step("05-oversized-refused", async () => {
        await byTest("kb-file-input").setInputFiles([
          { name: "huge.txt", mimeType: "text/plain", buffer: Buffer.alloc(100 * 1024, "a") },
        ]);
        await until(message).toBe(
          "Upload refused: huge.txt is 100.0 KB, over the 64.0 KB limit per file; split it or leave it out. Nothing from these files was added.",
        );
        expect(await error.isVisible()).toBe(true);
        expect(await upload().getAttribute("data-phase")).toBe("problem");
      });
      await byTest("kb-upload-error-dismiss").click();
      await error.waitFor({ state: "detached" });
      expect(await upload().getAttribute("data-phase")).toBe("idle");
      expect(await sources()).toEqual(["glossary.md", "greenhouse.txt", "handbook.md"]);
      const docs = await apiGet<Array<{ source: string }>>(`/api/kb/${KB}/documents`);
      expect(docs.map((d) => d.source).sort()).toEqual(["glossary.md", "greenhouse.txt", "handbook.md"]);
    },
    FLOW_TIMEOUT_MS,
  );

  it(
    "shows a file that could not be read as failed, with the reason, until it is removed",
    async () => {
      const broken = documentRows().filter({ has: page.getByText("broken.pdf", { exact: true }) });
      await step("06-damaged-file", async () => {
        await byTest("kb-file-input").setInputFiles([
          { name: "broken.pdf", mimeType: "application/pdf", buffer: Buffer.from("%PDF-1.4 not really") },
        ]);
        await seeFinished("Done: 1 failed.");
        const line = byTest("kb-ingest-file");
        expect(await line.getAttribute("data-outcome")).toBe("failed");
        expect(squash(await text(line)())).toMatch(
          /^broken\.pdf: failed — broken\.pdf is not a readable PDF/,
        );
        await until(() => broken.getAttribute("data-status")).toBe("failed");
        expect(squash(await text(broken.getByTestId("kb-document-error"))())).toContain(
          "open it in a PDF viewer and export it again",
        );
      });
      await broken.getByTestId("kb-document-delete").click();
      await byTest("confirm-ok").click();
      await until(sources).toEqual(["glossary.md", "greenhouse.txt", "handbook.md"]);
    },
    FLOW_TIMEOUT_MS,
  );

  it(
    "searches the base and ranks the right passage first, with its citation",
    async () => {
      const first = byTest("kb-passage").first();
      await step("07-search-markdown", async () => {
        await search("brass compass Zephyrine");
        // The text file mentions a compass (not brass) as well; the handbook's passage comes first.
        expect(await passageSources()).toEqual(["handbook.md", "greenhouse.txt"]);
        expect(await text(first.getByTestId("kb-citation-source"))()).toBe("handbook.md");
        expect(await text(first.getByTestId("kb-citation-title"))()).toBe("Employee Handbook");
        expect(await text(first.getByTestId("kb-citation-section"))()).toBe("Employee Handbook › Onboarding");
        expect(squash(await text(first.getByTestId("kb-passage-text"))())).toContain(
          "brass compass engraved Zephyrine",
        );
      });
      await step("08-search-text", async () => {
        await search("quokka valve clockwise");
        // The glossary has a valve too; the greenhouse notes match all three words.
        expect(await passageSources()).toEqual(["greenhouse.txt", "glossary.md"]);
        // A text file is titled by its name, so the citation names it once.
        expect(await text(first.getByTestId("kb-citation-title"))()).toBe("greenhouse.txt");
        expect(await first.getByTestId("kb-citation-source").count()).toBe(0);
        expect(squash(await text(first.getByTestId("kb-passage-text"))())).toContain(
          "quokka-shaped valve must be turned clockwise",
        );
      });
    },
    FLOW_TIMEOUT_MS,
  );

  it(
    "removes a document: gone from the list, the counts and the search results",
    async () => {
      await step("09-document-removed", async () => {
        await search("brass compass Zephyrine");
        const handbookDoc = documentRows().filter({ has: page.getByText("handbook.md", { exact: true }) });
        await handbookDoc.getByTestId("kb-document-delete").click();
        // The in-app confirm dialog (never the browser's confirm()) asks first.
        const dialog = byTest("confirm-dialog");
        expect(await dialog.getAttribute("aria-label")).toBe(`Remove "Employee Handbook" from ${KB}?`);
        await dialog.getByTestId("confirm-ok").click();
        await until(sources).toEqual(["glossary.md", "greenhouse.txt"]);
        await until(text(baseRow().getByTestId("kb-row-documents"))).toBe("2");

        // The results on screen follow at once: the search ran again, only the decoy is left.
        await until(passageSources).toEqual(["greenhouse.txt"]);
        // And a fresh search for the word only the removed document had finds nothing.
        await search("Zephyrine");
        expect(await byTest("kb-passage").count()).toBe(0);
        expect(squash(await text(byTest("kb-search-empty"))())).toBe(`Nothing in ${KB} matches “Zephyrine”.`);
        await search("quokka valve clockwise");
        expect(await passageSources()).toEqual(["greenhouse.txt", "glossary.md"]);
      });
      const docs = await apiGet<Array<{ source: string }>>(`/api/kb/${KB}/documents`);
      expect(docs.map((d) => d.source).sort()).toEqual(["glossary.md", "greenhouse.txt"]);
    },
    FLOW_TIMEOUT_MS,
  );

  it("logged no Content Security Policy violations and no uncaught page errors", () => {
    expect(log.cspViolations()).toEqual([]);
    expect(log.uncaught()).toEqual([]);
  });
});
