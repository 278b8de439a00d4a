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
import { KnowledgeVisibility } from "../components/knowledge-visibility.js";
import {
  VisibilityBadge,
  VisibilityField,
  type VisibilityValue,
  visibilityOf,
  visibilityPatch,
} from "../components/visibility-field.js";
import { formatTime } from "../format.js";
import { useAction, useReportError, useServices } from "../hooks.js";
import { t } from "../i18n/index.js";
import type { SessionUser } from "../types.js";

/** How retrieval runs, in the person's language (the server's `note` is English). */
function modeNote(status: KnowledgeStatus): string {
  if (status.mode !== "hybrid" || !status.embeddingModel) return t("kb.mode.bm25");
  if (status.chunksWithoutVectors > 0)
    return t("kb.mode.hybridPending", { model: status.embeddingModel, count: status.chunksWithoutVectors });
  return t("kb.mode.hybrid", { model: status.embeddingModel });
}

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
      if (
        !(await askConfirm({
          title: t("kb.doc.removeTitle", { title: doc.title, kb }),
          confirmLabel: t("kb.doc.remove"),
        }))
      )
        return;
      await client.removeDocument(kb, doc.id);
      // Bumps `version`, which reloads this list too.
      onChanged();
      return t("kb.doc.removed", { title: doc.title, kb });
    },
    (text) => text,
  );

  if (docs === undefined) return <p class="muted">{t("kb.doc.loading")}</p>;
  if (docs.length === 0)
    return (
      <p class="muted" data-testid="kb-documents-empty">
        {t("kb.doc.empty")}
      </p>
    );
  return (
    <table class="table" data-testid="kb-documents">
      <thead>
        <tr>
          <th>{t("kb.doc.title")}</th>
          <th>{t("kb.doc.source")}</th>
          <th>{t("kb.doc.type")}</th>
          <th>{t("kb.doc.size")}</th>
          <th>{t("kb.chunks")}</th>
          <th>{t("kb.doc.updated")}</th>
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
                  <span class="badge badge-error">{t("kb.doc.failed")}</span>
                  <br />
                  <span class="form-error" data-testid="kb-document-error">
                    {d.error ?? t("kb.doc.unreadable")}
                  </span>
                </>
              )}
            </td>
            <td data-label={t("kb.doc.source")} data-testid="kb-document-source">
              {d.source}
            </td>
            <td>
              {d.mime}
              {d.pages ? ` · ${t("kb.doc.pages", { count: d.pages })}` : ""}
            </td>
            <td class="nowrap" data-label={t("kb.doc.size")}>
              {sizeText(d.size)}
            </td>
            <td data-label={t("kb.chunks")}>{d.childChunks}</td>
            <td data-label={t("kb.doc.updated")}>{formatTime(d.updatedAt)}</td>
            {manage && (
              <td>
                <button
                  type="button"
                  class="btn btn-small btn-danger"
                  onClick={() => void remove(d)}
                  data-testid="kb-document-delete"
                >
                  {t("kb.doc.remove")}
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
  const [visibility, setVisibility] = useState<VisibilityValue>(() => visibilityOf(undefined));
  const [create, busy] = useAction(
    async () => {
      const base = await knowledgeApi(api).create(name.trim(), visibilityPatch(visibility, undefined));
      setName("");
      setVisibility(visibilityOf(undefined));
      onCreated(base.name);
      return t("kb.created", { name: base.name });
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
      <h3>{t("kb.new")}</h3>
      <input
        value={name}
        placeholder={t("kb.namePlaceholder")}
        aria-label={t("kb.nameLabel")}
        onInput={(e) => setName(e.currentTarget.value)}
        data-testid="kb-create-name"
      />{" "}
      <button type="submit" class="btn" disabled={busy || !name.trim()} data-testid="kb-create-submit">
        {t("kb.create")}
      </button>
      <VisibilityField
        resource={undefined}
        value={visibility}
        onChange={setVisibility}
        name="kbCreateVisibility"
        testId="kb-create-visibility"
      />
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
      const message = t("kb.deleteMessage");
      if (!(await askConfirm({ title: t("kb.deleteTitle", { name: base.name }), message }))) return;
      await client.remove(base.name);
      if (selected === base.name) setSelected(undefined);
      await reload();
      return t("kb.deleted", { name: base.name });
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
        <h2>{t("kb.heading")}</h2>
        <span class="muted" data-testid="kb-mode" data-mode={status?.mode ?? ""}>
          {status ? modeNote(status) : t("kb.intro")}
        </span>
      </header>
      <div class="page-body">
        {bases === undefined ? (
          <p class="muted">{t("common.loading")}</p>
        ) : bases.length === 0 ? (
          <p class="muted" data-testid="kb-empty">
            {t("kb.empty")}
          </p>
        ) : (
          <table class="table" data-testid="kb-list">
            <thead>
              <tr>
                <th>{t("kb.name")}</th>
                <th>{t("kb.agent")}</th>
                <th>{t("kb.documents")}</th>
                <th>{t("kb.chunks")}</th>
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
                    </button>{" "}
                    <VisibilityBadge resource={b} />
                  </td>
                  <td data-label={t("kb.agent")}>{b.agentId ? `@${b.agentId}` : t("kb.shared")}</td>
                  <td data-label={t("kb.documents")} data-testid="kb-row-documents">
                    {b.documents}
                  </td>
                  <td data-label={t("kb.chunks")} data-testid="kb-row-chunks">
                    {b.chunks}
                  </td>
                  {manage && (
                    <td>
                      <button
                        type="button"
                        class="btn btn-small btn-danger"
                        onClick={() => void remove(b)}
                        data-testid="kb-delete"
                      >
                        {t("common.delete")}
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
            <KnowledgeVisibility base={shown} onSaved={() => void reload()} />
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
