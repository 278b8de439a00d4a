/** Knowledge bases: the list with retrieval mode, create and delete; one base's upload, documents and search. */

import { useEffect, useState } from "preact/hooks";
import { askConfirm } from "../components/confirm-dialog.js";
import {
  type KnowledgeBase,
  type KnowledgeDocument,
  type KnowledgeStatus,
  knowledgeApi,
  type UploadLimits,
} from "../components/knowledge-api.js";
import { KnowledgeSearch } from "../components/knowledge-search.js";
import { KnowledgeUpload } from "../components/knowledge-upload.js";
import { formatTime } from "../format.js";
import { useAction, useReportError, useServices } from "../hooks.js";
import type { SessionUser } from "../types.js";

function sizeText(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`;
  return `${(bytes / (1024 * 1024)).toFixed(1)} MB`;
}

/** One base's documents; `onChanged` runs after a removal so counts and search results follow. */
function Documents({
  kb,
  manage,
  version,
  onChanged,
}: {
  kb: string;
  manage: boolean;
  version: number;
  onChanged: () => void;
}) {
  const { api } = useServices();
  const report = useReportError();
  const [docs, setDocs] = useState<KnowledgeDocument[] | undefined>(undefined);
  const client = knowledgeApi(api);
  const reload = () => client.documents(kb).then(setDocs).catch(report);
  useEffect(() => {
    void reload();
  }, [kb, version]);
  const [remove] = useAction(
    async (doc: KnowledgeDocument) => {
      if (!(await askConfirm({ title: `Remove "${doc.title}" from ${kb}?`, confirmLabel: "Remove" }))) return;
      await client.removeDocument(kb, doc.id);
      // Bumps `version`, which reloads this list too.
      onChanged();
      return `Removed "${doc.title}" from ${kb}.`;
    },
    (text) => text,
  );

  if (docs === undefined) return <p class="muted">Loading documents…</p>;
  if (docs.length === 0)
    return (
      <p class="muted" data-testid="kb-documents-empty">
        No documents yet.
      </p>
    );
  return (
    <table class="table" data-testid="kb-documents">
      <thead>
        <tr>
          <th>Title</th>
          <th>Source</th>
          <th>Type</th>
          <th>Size</th>
          <th>Chunks</th>
          <th>Updated</th>
          {manage && <th />}
        </tr>
      </thead>
      <tbody>
        {docs.map((d) => (
          <tr key={d.id} data-testid="kb-document" data-document-id={d.id} data-status={d.status}>
            <td>
              {d.title}
              {d.status === "failed" && (
                <>
                  {" "}
                  <span class="badge badge-error">failed</span>
                  <br />
                  <span class="form-error" data-testid="kb-document-error">
                    {d.error ?? "could not be read"}
                  </span>
                </>
              )}
            </td>
            <td data-testid="kb-document-source">{d.source}</td>
            <td>
              {d.mime}
              {d.pages ? ` · ${d.pages} pages` : ""}
            </td>
            <td class="nowrap">{sizeText(d.size)}</td>
            <td>{d.childChunks}</td>
            <td>{formatTime(d.updatedAt)}</td>
            {manage && (
              <td>
                <button
                  type="button"
                  class="btn btn-small btn-danger"
                  onClick={() => void remove(d)}
                  data-testid="kb-document-delete"
                >
                  Remove
                </button>
              </td>
            )}
          </tr>
        ))}
      </tbody>
    </table>
  );
}

function CreateBase({ onCreated }: { onCreated: (name: string) => void }) {
  const { api } = useServices();
  const [name, setName] = useState("");
  const [create, busy] = useAction(
    async () => {
      const base = await knowledgeApi(api).create(name.trim());
      setName("");
      onCreated(base.name);
      return `Knowledge base "${base.name}" created.`;
    },
    (text) => text,
  );
  return (
    <form
      class="form"
      data-testid="kb-create"
      onSubmit={(e) => {
        e.preventDefault();
        if (name.trim()) void create();
      }}
    >
      <h3>New knowledge base</h3>
      <input
        value={name}
        placeholder="name, e.g. handbook"
        aria-label="Knowledge base name"
        onInput={(e) => setName(e.currentTarget.value)}
        data-testid="kb-create-name"
      />{" "}
      <button type="submit" class="btn" disabled={busy || !name.trim()} data-testid="kb-create-submit">
        Create
      </button>
    </form>
  );
}

/** The knowledge page. Owners and admins manage; members browse and search. */
export function KnowledgePage({ me }: { me: SessionUser }) {
  const { api } = useServices();
  const report = useReportError();
  const [status, setStatus] = useState<KnowledgeStatus | undefined>(undefined);
  const [limits, setLimits] = useState<UploadLimits | undefined>(undefined);
  const [bases, setBases] = useState<KnowledgeBase[] | undefined>(undefined);
  const [selected, setSelected] = useState<string | undefined>(undefined);
  const [version, setVersion] = useState(0);
  const manage = me.role === "owner" || me.role === "admin";
  const client = knowledgeApi(api);

  const reload = () =>
    client
      .list()
      .then((r) => {
        setStatus(r.status);
        setLimits(r.limits);
        setBases(r.bases);
      })
      .catch(report);
  useEffect(() => {
    void reload();
  }, [api]);

  const [remove] = useAction(
    async (base: KnowledgeBase) => {
      const message = "All its documents are deleted too.";
      if (!(await askConfirm({ title: `Delete the knowledge base "${base.name}"?`, message }))) return;
      await client.remove(base.name);
      if (selected === base.name) setSelected(undefined);
      await reload();
      return `Knowledge base "${base.name}" deleted.`;
    },
    (text) => text,
  );

  const shown = bases?.find((b) => b.name === selected);
  const changed = () => {
    setVersion((v) => v + 1);
    void reload();
  };
  return (
    <section class="page" data-testid="knowledge-page">
      <header class="page-head">
        <h2>Knowledge</h2>
        <span class="muted" data-testid="kb-mode" data-mode={status?.mode ?? ""}>
          {status?.note ?? "Documents your agents answer from, with citations."}
        </span>
      </header>
      <div class="page-body">
        {bases === undefined ? (
          <p class="muted">Loading…</p>
        ) : bases.length === 0 ? (
          <p class="muted" data-testid="kb-empty">
            No knowledge bases yet.
          </p>
        ) : (
          <table class="table" data-testid="kb-list">
            <thead>
              <tr>
                <th>Name</th>
                <th>Agent</th>
                <th>Documents</th>
                <th>Chunks</th>
                {manage && <th />}
              </tr>
            </thead>
            <tbody>
              {bases.map((b) => (
                <tr key={b.id} data-testid="kb-row" data-kb={b.name}>
                  <td>
                    <button
                      type="button"
                      class="btn btn-small"
                      aria-pressed={selected === b.name}
                      onClick={() => setSelected(selected === b.name ? undefined : b.name)}
                      data-testid="kb-open"
                    >
                      {b.name}
                    </button>
                  </td>
                  <td>{b.agentId ? `@${b.agentId}` : "shared"}</td>
                  <td data-testid="kb-row-documents">{b.documents}</td>
                  <td data-testid="kb-row-chunks">{b.chunks}</td>
                  {manage && (
                    <td>
                      <button
                        type="button"
                        class="btn btn-small btn-danger"
                        onClick={() => void remove(b)}
                        data-testid="kb-delete"
                      >
                        Delete
                      </button>
                    </td>
                  )}
                </tr>
              ))}
            </tbody>
          </table>
        )}
        {shown && (
          <section class="form" data-testid="kb-detail" data-kb={shown.name}>
            <h3>{shown.name}</h3>
            {manage && (
              <KnowledgeUpload key={shown.name} kb={shown.name} limits={limits} onIngested={changed} />
            )}
            <Documents
              key={shown.name}
              kb={shown.name}
              manage={manage}
              version={version}
              onChanged={changed}
            />
            <KnowledgeSearch key={shown.name} kb={shown.name} revision={version} />
          </section>
        )}
        {manage && (
          <CreateBase
            onCreated={(name) => {
              setSelected(name);
              void reload();
            }}
          />
        )}
      </div>
    </section>
  );
}
