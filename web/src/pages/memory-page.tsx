/**
 * Memory: what the agents remember about you — core blocks (always in their context) and archival
 * memories (recalled when relevant) — searchable, editable and forgettable. Owners and admins may
 * choose whose memory they look at. `agentId` narrows it to what one agent sees.
 */
import { useEffect, useState } from "preact/hooks";
import { errorText } from "../api.js";
import { CoreBlockItem } from "../components/memory/core-block-item.js";
import { MemoryItem } from "../components/memory/memory-item.js";
import { notifySuccess } from "../components/notices.js";
import { useSelector, useServices } from "../hooks.js";
import { t } from "../i18n/index.js";
import type { CoreBlock, MemoryRecord, SessionUser } from "../types.js";

export interface MemoryPageProps {
  me: SessionUser;
  /** The agent whose view is shown; undefined for every agent. */
  agentId: string | undefined;
}

const SEARCH_PAUSE_MS = 250;

/** The blocks an agent sees: shared ones, replaced by its own of the same label. */
function blocksFor(blocks: CoreBlock[], agentId: string | undefined): CoreBlock[] {
  if (agentId === undefined) return blocks;
  const mine = blocks.filter((b) => b.agentId === agentId);
  const labels = new Set(mine.map((b) => b.label));
  return [...blocks.filter((b) => b.agentId === undefined && !labels.has(b.label)), ...mine].sort((a, b) =>
    a.label.localeCompare(b.label),
  );
}

/** The query typed, settled after a short pause. */
function useSettled(value: string): string {
  const [settled, setSettled] = useState(value);
  useEffect(() => {
    const timer = setTimeout(() => setSettled(value.trim()), SEARCH_PAUSE_MS);
    return () => clearTimeout(timer);
  }, [value]);
  return settled;
}

/** The memory page. */
export function MemoryPage({ me, agentId }: MemoryPageProps) {
  const { api, store, navigate } = useServices();
  const agents = useSelector((s) => s.agents);
  const isAdmin = me.role === "owner" || me.role === "admin";
  const [people, setPeople] = useState<SessionUser[]>([]);
  const [person, setPerson] = useState(me.id);
  const [typed, setTyped] = useState("");
  const q = useSettled(typed);
  const [memories, setMemories] = useState<MemoryRecord[] | undefined>(undefined);
  const [blocks, setBlocks] = useState<CoreBlock[] | undefined>(undefined);
  const [problem, setProblem] = useState<string | undefined>(undefined);
  const [version, setVersion] = useState(0);
  const userId = person === me.id ? undefined : person;
  const agent = agents.find((a) => a.id === agentId);
  const whose =
    person === me.id ? t("memory.you") : (people.find((p) => p.id === person)?.username ?? person);

  useEffect(() => {
    if (!isAdmin) return;
    api
      .listUsers()
      .then(setPeople)
      .catch(() => setPeople([]));
  }, [api, isAdmin]);

  useEffect(() => {
    let live = true;
    setProblem(undefined);
    const scope: { userId?: string; agentId?: string; q?: string; limit?: number } = { limit: 200 };
    if (userId) scope.userId = userId;
    if (agentId) scope.agentId = agentId;
    if (q) scope.q = q;
    Promise.all([api.listMemories(scope), api.coreBlocks(userId)])
      .then(([list, core]) => {
        if (!live) return;
        setMemories(list);
        setBlocks(core);
      })
      .catch((err: unknown) => live && setProblem(errorText(err)));
    return () => {
      live = false;
    };
  }, [api, userId, agentId, q, version]);

  const reload = () => setVersion((v) => v + 1);
  const done = (text: string) => {
    notifySuccess(store, text);
    reload();
  };

  const needle = q.toLowerCase();
  const shownBlocks = blocksFor(blocks ?? [], agentId).filter(
    (b) => needle === "" || `${b.label} ${b.value}`.toLowerCase().includes(needle),
  );

  return (
    <section class="page memory-page" data-testid="memory-page">
      <header class="page-head">
        <h2>{t("memory.heading")}</h2>
        <span class="muted">
          {agent ? t("memory.introAgent", { agent: `@${agent.id}`, whose }) : t("memory.introAll", { whose })}
        </span>
      </header>
      <div class="memory-toolbar">
        {isAdmin && people.length > 0 && (
          <label class="field">
            <span class="field-label">{t("memory.person")}</span>
            <select
              value={person}
              onChange={(e) => setPerson(e.currentTarget.value)}
              data-testid="memory-person"
            >
              {people.map((p) => (
                <option key={p.id} value={p.id}>
                  {p.username}
                  {p.id === me.id ? ` ${t("memory.youMark")}` : ""}
                </option>
              ))}
            </select>
          </label>
        )}
        <label class="field">
          <span class="field-label">{t("memory.agent")}</span>
          <select
            value={agentId ?? ""}
            onChange={(e) => {
              const next = e.currentTarget.value;
              navigate(next ? { name: "memory", agentId: next } : { name: "memory" }, { replace: true });
            }}
            data-testid="memory-agent-filter"
          >
            <option value="">{t("memory.everyAgent")}</option>
            {agents.map((a) => (
              <option key={a.id} value={a.id}>
                {a.emoji} {a.name} (@{a.id})
              </option>
            ))}
          </select>
        </label>
        <label class="field memory-search">
          <span class="field-label">{t("memory.search")}</span>
          <input
            type="search"
            value={typed}
            placeholder={t("memory.searchPlaceholder")}
            onInput={(e) => setTyped(e.currentTarget.value)}
            data-testid="memory-search"
          />
        </label>
      </div>
      {agent && !agent.memory && (
        <p class="notice notice-warning" data-testid="memory-off">
          {t("memory.off", { agent: agent.id })}
        </p>
      )}
      {problem && (
        <p class="form-error" role="alert" data-testid="memory-problem">
          {problem}
        </p>
      )}

      <section class="form memory-section" data-testid="core-section">
        <h3>{t("memory.core")}</h3>
        <p class="muted memory-hint">{t("memory.coreHint")}</p>
        {blocks === undefined && !problem && <p class="muted">{t("common.loading")}</p>}
        {blocks !== undefined && shownBlocks.length === 0 && (
          <p class="muted" data-testid="core-empty">
            {needle ? t("memory.coreNoMatch") : t("memory.coreEmpty")}
          </p>
        )}
        <ul class="memory-list">
          {shownBlocks.map((block) => (
            <CoreBlockItem
              key={`${block.agentId ?? ""}/${block.label}`}
              block={block}
              onSave={async (value) => {
                const scope: { userId?: string; agentId?: string } = {};
                if (userId) scope.userId = userId;
                if (block.agentId) scope.agentId = block.agentId;
                await api.setCoreBlock(block.label, value, scope);
                done(t("memory.coreSaved", { label: block.label }));
              }}
              onForget={async () => {
                const scope: { userId?: string; agentId?: string } = {};
                if (userId) scope.userId = userId;
                if (block.agentId) scope.agentId = block.agentId;
                await api.deleteCoreBlock(block.label, scope);
                done(t("memory.coreDeleted", { label: block.label }));
              }}
            />
          ))}
        </ul>
      </section>

      <section class="form memory-section" data-testid="archival-section">
        <h3>
          {t("memory.remembered")}{" "}
          {memories && (
            <span class="muted" data-testid="memory-count">
              {q
                ? t("memory.countMatching", { count: memories.length })
                : t("memory.count", { count: memories.length })}
            </span>
          )}
        </h3>
        <p class="muted memory-hint">{t("memory.rememberedHint")}</p>
        {memories === undefined && !problem && <p class="muted">{t("common.loading")}</p>}
        {memories !== undefined && memories.length === 0 && (
          <p class="muted" data-testid="memory-empty">
            {q ? t("memory.noMatch", { query: q }) : t("memory.empty")}
          </p>
        )}
        <ul class="memory-list">
          {(memories ?? []).map((memory) => (
            <MemoryItem
              key={`${memory.id}:${memory.updatedAt}`}
              memory={memory}
              onSave={async (text) => {
                await api.updateMemory(memory.id, { text }, userId);
                done(t("memory.updated"));
              }}
              onForget={async () => {
                await api.forgetMemory(memory.id, userId);
                done(t("memory.forgotten"));
              }}
            />
          ))}
        </ul>
      </section>
    </section>
  );
}
