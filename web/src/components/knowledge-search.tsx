/** Searching one knowledge base: a query box and the passages found, each with its citation. */
import { useState } from "preact/hooks";
import { useAction, useServices } from "../hooks.js";
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
      </a>{" "}
      · <span data-testid="kb-citation-source">{c.source}</span>
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

/** The search box and its results for `kb`. */
export function KnowledgeSearch({ kb }: { kb: string }) {
  const { api } = useServices();
  const [query, setQuery] = useState("");
  const [result, setResult] = useState<SearchResult | undefined>(undefined);
  const [search, busy] = useAction(async () => {
    if (query.trim() === "") return;
    setResult(await knowledgeApi(api).search(kb, query.trim()));
  });

  return (
    <section class="form" data-testid="kb-search">
      <h3>Search</h3>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          void search();
        }}
      >
        <input
          type="search"
          value={query}
          placeholder="What are you looking for?"
          aria-label="Search query"
          onInput={(e) => setQuery(e.currentTarget.value)}
          data-testid="kb-search-input"
        />{" "}
        <button type="submit" class="btn" disabled={busy} data-testid="kb-search-submit">
          Search
        </button>
      </form>
      {result && result.passages.length === 0 && (
        <p class="muted" data-testid="kb-search-empty">
          Nothing found.
        </p>
      )}
      {result && result.passages.length > 0 && (
        <ol data-testid="kb-passages">
          {result.passages.map((p) => (
            <li key={p.citation.chunkId} id={`passage-${p.citation.chunkId}`} data-testid="kb-passage">
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
