/**
 * Team templates: the gallery of ready teams, each created in one click (its agents, group, chain and
 * schedule), and the import of a template file someone exported.
 */
import { useEffect, useRef, useState } from "preact/hooks";
import { useServices } from "../hooks.js";
import type { Services } from "../services.js";
import { importErrorText, readTemplateFile } from "../template-file.js";
import type { GalleryEntry, ImportResult, SessionUser, Template } from "../types.js";

/** What the import created, in one sentence, with the renames it made. */
function createdText(result: ImportResult, name: string): string {
  const agents = `${result.agents.length} agent${result.agents.length === 1 ? "" : "s"}`;
  const renamed = result.renamed.map((r) => `@${r.from} is @${r.to} here`).join(", ");
  const parts = [
    result.channel
      ? `Created “${name}”: ${agents}, the group${result.channel.chain.length > 0 ? " and its chain" : ""}${result.schedules.length > 0 ? ", and a schedule" : ""}.`
      : `Created the agent @${result.agents[0]?.id ?? ""}.`,
    result.channel && result.channel.chain.length > 0
      ? "Send /flow followed by a task to run the chain."
      : "",
    renamed ? `(${renamed}: the id was taken.)` : "",
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
    ? `⏰ Runs on a schedule (${first.timing.expression}, ${first.timing.timezone})`
    : `⏰ Runs every ${Math.round(first.timing.seconds / 60)} minutes`;
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
      <ul class="template-agents" aria-label="Agents">
        {agents.map((a) => (
          <li key={a.id}>
            <strong>{a.name}</strong> <code>@{a.id}</code>
          </li>
        ))}
      </ul>
      {chain.length > 0 && (
        <p class="template-chain" data-testid="template-chain">
          <span class="muted">Chain:</span> {chain.map((s) => nameOf(s.agent)).join(" → ")}
        </p>
      )}
      {schedule && <p class="template-schedule muted">{schedule}</p>}
      <div class="template-actions">
        <button
          type="button"
          class="btn btn-primary"
          disabled={!canCreate || busy}
          title={canCreate ? undefined : "Only owners and admins can create agents"}
          onClick={onCreate}
          data-testid={`template-create-${entry.id}`}
        >
          {busy ? "Creating…" : "Create team"}
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

  useEffect(() => {
    api.listTemplates().then(setGallery, (err: unknown) => setLoadError(importErrorText(err)));
  }, [api]);

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
        <h2>Templates</h2>
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
              {busy === "file" ? "Importing…" : "Import from file"}
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
        Ready teams of agents that work together in a group: one click creates the agents with their personas,
        the group and its collaboration chain. Export any agent (Agents page) or group (its settings) to a
        file and import it on another Dimsum.
        {!canCreate && " Only owners and admins can create agents, so ask one to create a team for you."}
      </p>
      {loadError && <p class="form-error">{loadError}</p>}
      {!gallery && !loadError && <p class="muted">Loading…</p>}
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
