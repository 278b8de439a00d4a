/**
 * Team templates: the gallery of ready teams, each created in one click (its agents, group, chain and
 * schedule), and the import of a template file someone exported.
 */
import { useEffect, useRef, useState } from "preact/hooks";
import { useServices } from "../hooks.js";
import { t, useLocale } from "../i18n/index.js";
import type { Services } from "../services.js";
import { importErrorText, readTemplateFile } from "../template-file.js";
import type { GalleryEntry, ImportResult, SessionUser, Template } from "../types.js";

/** What the import created, in one sentence, with the renames it made. */
function createdText(result: ImportResult, name: string): string {
  const agents = t("templates.agentCount", { count: result.agents.length });
  const renamed = result.renamed.map((r) => t("templates.renamedOne", { from: r.from, to: r.to })).join(", ");
  const parts = [
    result.channel
      ? t(
          result.schedules.length > 0
            ? "templates.createdTeamScheduled"
            : result.channel.chain.length > 0
              ? "templates.createdTeamChain"
              : "templates.createdTeam",
          { name, agents },
        )
      : t("templates.createdAgent", { id: result.agents[0]?.id ?? "" }),
    result.channel && result.channel.chain.length > 0 ? t("templates.runFlow") : "",
    renamed ? t("templates.renamed", { renamed }) : "",
    ...result.notes,
  ];
  return parts.filter((p) => p !== "").join(" ");
}

/** Puts what an import created into the app's state, says so, and opens it. */
function showImported(services: Services, result: ImportResult, name: string): void {
  const { store, navigate } = services;
  for (const agent of result.agents) store.dispatch({ type: "agent_saved", agent });
  for (const notice of store.getState().notices) store.dispatch({ type: "dismiss", id: notice.id });
  store.dispatch({ type: "notice", kind: "info", text: createdText(result, name) });
  if (result.channel) {
    store.dispatch({ type: "channel_saved", channel: result.channel });
    navigate({ name: "channel", channelId: result.channel.id });
  } else if (result.agents[0]) {
    navigate({ name: "agent", agentId: result.agents[0].id });
  }
}

function scheduleText(template: Template): string | undefined {
  if (template.kind !== "team") return undefined;
  const first = template.schedules[0];
  if (!first) return undefined;
  return first.timing.kind === "cron"
    ? `⏰ ${t("templates.cron", { expression: first.timing.expression, timezone: first.timing.timezone })}`
    : `⏰ ${t("templates.every", { count: Math.round(first.timing.seconds / 60) })}`;
}

function TemplateCard({
  entry,
  canCreate,
  busy,
  onCreate,
}: {
  entry: GalleryEntry;
  canCreate: boolean;
  busy: boolean;
  onCreate: () => void;
}) {
  const { template } = entry;
  const agents = template.kind === "team" ? template.agents : [template.agent];
  const chain = template.kind === "team" ? template.group.chain : [];
  const nameOf = (id: string) => agents.find((a) => a.id === id)?.name ?? id;
  const schedule = scheduleText(template);
  return (
    <li class="template-card" data-testid={`template-card-${entry.id}`}>
      <div class="template-emojis" aria-hidden="true">
        {agents.map((a) => (
          <span key={a.id} class="avatar">
            {a.emoji || "🤖"}
          </span>
        ))}
      </div>
      <h3 class="template-name">{template.name}</h3>
      {template.description && <p class="template-description muted">{template.description}</p>}
      <ul class="template-agents" aria-label={t("nav.agents")}>
        {agents.map((a) => (
          <li key={a.id}>
            <strong>{a.name}</strong> <code>@{a.id}</code>
          </li>
        ))}
      </ul>
      {chain.length > 0 && (
        <p class="template-chain" data-testid="template-chain">
          <span class="muted">{t("templates.chain")}</span> {chain.map((s) => nameOf(s.agent)).join(" → ")}
        </p>
      )}
      {schedule && <p class="template-schedule muted">{schedule}</p>}
      <div class="template-actions">
        <button
          type="button"
          class="btn btn-primary"
          disabled={!canCreate || busy}
          title={canCreate ? undefined : t("templates.onlyAdmins")}
          onClick={onCreate}
          data-testid={`template-create-${entry.id}`}
        >
          {busy ? t("templates.creating") : t("templates.create")}
        </button>
      </div>
    </li>
  );
}

/** The templates page. */
export function TemplatesPage({ me }: { me: SessionUser }) {
  const services = useServices();
  const { api, store } = services;
  const [gallery, setGallery] = useState<GalleryEntry[] | undefined>(undefined);
  const [loadError, setLoadError] = useState<string | undefined>(undefined);
  const [busy, setBusy] = useState<string | undefined>(undefined);
  const fileInput = useRef<HTMLInputElement>(null);
  const canCreate = me.role === "owner" || me.role === "admin";
  const locale = useLocale();

  useEffect(() => {
    api.listTemplates(locale).then(setGallery, (err: unknown) => setLoadError(importErrorText(err)));
  }, [api, locale]);

  const run = async (key: string, work: () => Promise<{ result: ImportResult; name: string }>) => {
    setBusy(key);
    try {
      const { result, name } = await work();
      showImported(services, result, name);
    } catch (err) {
      store.dispatch({ type: "notice", kind: "error", text: importErrorText(err) });
    } finally {
      setBusy(undefined);
    }
  };

  const create = (entry: GalleryEntry) =>
    run(entry.id, async () => ({
      result: await api.importTemplate(entry.template),
      name: entry.template.name,
    }));

  const importFile = (file: File) =>
    run("file", async () => {
      const template = await readTemplateFile(file);
      const name =
        typeof template === "object" && template !== null && "name" in template
          ? String((template as { name: unknown }).name)
          : file.name;
      return { result: await api.importTemplate(template), name };
    });

  return (
    <section class="page" data-testid="templates-page">
      <header class="page-head">
        <h2>{t("nav.templates")}</h2>
        <span class="topbar-spacer" />
        {canCreate && (
          <>
            <button
              type="button"
              class="btn btn-small"
              disabled={busy !== undefined}
              onClick={() => fileInput.current?.click()}
              data-testid="template-import"
            >
              {busy === "file" ? t("templates.importing") : t("templates.import")}
            </button>
            <input
              ref={fileInput}
              type="file"
              accept=".json,application/json"
              class="visually-hidden"
              tabIndex={-1}
              aria-hidden="true"
              data-testid="template-import-file"
              onChange={(e) => {
                const input = e.currentTarget;
                const file = input.files?.[0];
                input.value = "";
                if (file) void importFile(file);
              }}
            />
          </>
        )}
      </header>
      <p class="muted template-intro">
        {t("templates.intro")}
        {!canCreate && ` ${t("templates.askAdmin")}`}
      </p>
      {loadError && <p class="form-error">{loadError}</p>}
      {!gallery && !loadError && <p class="muted">{t("common.loading")}</p>}
      {gallery && (
        <ul class="template-grid" data-testid="template-gallery">
          {gallery.map((entry) => (
            <TemplateCard
              key={entry.id}
              entry={entry}
              canCreate={canCreate}
              busy={busy === entry.id}
              onCreate={() => void create(entry)}
            />
          ))}
        </ul>
      )}
    </section>
  );
}
