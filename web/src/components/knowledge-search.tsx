/** Searching one knowledge base: a query box and the passages found, each with its citation. */
import { useEffect, useRef, useState } from "preact/hooks";
import { useAction, useServices } from "../hooks.js";
import { t } from "../i18n/index.js";
import { citationHref, knowledgeApi, type Passage, pageLabel, type SearchResult } from "./knowledge-api.js";

function CitationLine({ passage }: { passage: Passage }) {
  const c = passage.citation;
  const page = pageLabel(c);
  const external = citationHref(c).startsWith("http");
  return (
    <p class="muted" data-testid="kb-citation">
      <a
        href={citationHref(c)}
        data-testid="kb-citation-link"
        {...(external ? { target: "_blank", rel: "noopener noreferrer" } : {})}
      >
        <strong data-testid="kb-citation-title">{c.title}</strong>
      </a>
      {/* Uploads without a heading are titled by their file name; saying it twice helps no one. */}
      {c.source !== c.title && (
        <>
          {" "}
          · <span data-testid="kb-citation-source">{c.source}</span>
        </>
      )}
      {c.section && (
        <>
          {" "}
          · <span data-testid="kb-citation-section">{c.section}</span>
        </>
      )}
      {page && (
        <>
          {" "}
          · <span data-testid="kb-citation-page">{page}</span>
        </>
      )}
    </p>
  );
}

/**
 * The search box and its results for `kb`. When `revision` changes (documents were added or
 * removed) the last search runs again, so no result points at a document that is gone.
 */
export function KnowledgeSearch({ kb, revision }: { kb: string; revision: number }) {
  const { api } = useServices();
  const [query, setQuery] = useState("");
  const [asked, setAsked] = useState("");
  const [result, setResult] = useState<SearchResult | undefined>(undefined);
  // Counts finished searches, so a test (or a screen reader hint) can tell a repeat search landed.
  const [searches, setSearches] = useState(0);
  const [search, busy] = useAction(async (words: string) => {
    if (words === "") return;
    const found = await knowledgeApi(api).search(kb, words);
    setAsked(words);
    setResult(found);
    setSearches((n) => n + 1);
  });
  const seenRevision = useRef(revision);
  useEffect(() => {
    if (seenRevision.current === revision) return;
    seenRevision.current = revision;
    if (asked) void search(asked);
  }, [revision]);

  return (
    <section class="form" data-testid="kb-search" data-searches={searches} aria-busy={busy}>
      <h3>{t("kb.search.heading")}</h3>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          void search(query.trim());
        }}
      >
        <input
          type="search"
          value={query}
          placeholder={t("kb.search.placeholder")}
          aria-label={t("kb.search.label")}
          class="kb-search-input"
          onInput={(e) => setQuery(e.currentTarget.value)}
          data-testid="kb-search-input"
        />{" "}
        <button
          type="submit"
          class="btn"
          disabled={busy || query.trim() === ""}
          data-testid="kb-search-submit"
        >
          {t("kb.search.submit")}
        </button>
      </form>
      {result && result.passages.length === 0 && (
        <p class="muted" data-testid="kb-search-empty">
          {t("kb.search.none", { kb, query: asked })}
        </p>
      )}
      {result && result.passages.length > 0 && (
        <ol data-testid="kb-passages" data-query={asked}>
          {result.passages.map((p) => (
            <li
              key={p.citation.chunkId}
              id={`passage-${p.citation.chunkId}`}
              data-testid="kb-passage"
              data-document-id={p.citation.documentId}
              data-source={p.citation.source}
            >
              <CitationLine passage={p} />
              <pre class="tool-pre" data-testid="kb-passage-text">
                {p.text}
              </pre>
            </li>
          ))}
        </ol>
      )}
      {result && result.trace.warnings.length > 0 && (
        <p class="muted" data-testid="kb-search-warnings">
          {result.trace.warnings.join(" · ")}
        </p>
      )}
    </section>
  );
}
