/**
 * Picks tool names from the catalogue (`GET /api/tools`), grouped by where they come from, with a
 * filter for long lists. Names picked earlier that the catalogue no longer has stay listed, so they
 * can be unticked.
 */
import { useState } from "preact/hooks";
import { t, toolDescription } from "../i18n/index.js";
import { toggleName } from "../state/agent-form.js";
import type { CatalogueEntry, ToolSource } from "../types.js";

const SOURCES: Array<[ToolSource, () => string]> = [
  ["builtin", () => t("tools.source.builtin")],
  ["memory", () => t("tools.source.memory")],
  ["knowledge", () => t("tools.source.knowledge")],
  ["mcp", () => t("tools.source.mcp")],
  ["http", () => t("tools.source.http")],
  ["plugin", () => t("tools.source.plugin")],
  ["team", () => t("tools.source.team")],
];

export interface ToolPickerProps {
  catalogue: CatalogueEntry[];
  picked: string[];
  onChange: (picked: string[]) => void;
  /** Prefix of the test ids: `<testId>-<tool>` per checkbox, `<testId>-group-<source>` per group. */
  testId: string;
  /** Shown next to grant-only tools, which "every tool" does not include. */
  grantOnlyNote?: string;
}

function matches(entry: CatalogueEntry, filter: string): boolean {
  const needle = filter.trim().toLowerCase();
  return needle === "" || `${entry.name} ${entry.description}`.toLowerCase().includes(needle);
}

/** A tool's description for people: the built-in ones in their language, others as their server gives them. */
function describe(name: string, description: string): string {
  return toolDescription(name) ?? description;
}

/** First sentence of a description, for the one-line list. */
function firstSentence(text: string): string {
  const line = text.split("\n")[0] ?? "";
  const end = line.search(/\.\s/);
  return end > 0 ? line.slice(0, end + 1) : line;
}

function Option({
  name,
  description,
  grantOnly,
  checked,
  onToggle,
  testId,
  note,
}: {
  name: string;
  description: string;
  grantOnly: boolean;
  checked: boolean;
  onToggle: (on: boolean) => void;
  testId: string;
  note: string | undefined;
}) {
  return (
    <li>
      <label class="tool-option" title={description}>
        <input
          type="checkbox"
          checked={checked}
          onChange={(e) => onToggle(e.currentTarget.checked)}
          data-testid={testId}
        />
        <span class="tool-option-text">
          <span class="tool-option-name">
            <code>{name}</code>
            {grantOnly && (
              <span class="badge" title={note}>
                grant only
              </span>
            )}
          </span>
          {description && <span class="muted tool-option-desc">{firstSentence(description)}</span>}
        </span>
      </label>
    </li>
  );
}

/** The picker. */
export function ToolPicker({ catalogue, picked, onChange, testId, grantOnlyNote }: ToolPickerProps) {
  const [filter, setFilter] = useState("");
  const known = new Set(catalogue.map((t) => t.name));
  const unknown = picked.filter((name) => !known.has(name));
  const toggle = (name: string) => (on: boolean) => onChange(toggleName(picked, name, on));
  const groups = SOURCES.map(([source, label]) => ({
    source,
    label: label(),
    tools: catalogue.filter((t) => t.source === source && matches(t, filter)),
  })).filter((g) => g.tools.length > 0);
  return (
    <div class="tool-picker" data-testid={testId}>
      {catalogue.length > 8 && (
        <div class="tool-picker-head">
          <input
            type="search"
            value={filter}
            placeholder={t("tools.filter")}
            aria-label={t("tools.filter")}
            onInput={(e) => setFilter(e.currentTarget.value)}
            data-testid={`${testId}-filter`}
          />
          <span class="muted">{t("tools.picked", { count: picked.length })}</span>
        </div>
      )}
      {picked.length > 0 && (
        <ul class="tool-chips" aria-label={t("tools.pickedLabel")} data-testid={`${testId}-picked`}>
          {picked.map((name) => (
            <li key={name} class="tool-chip">
              <code>{name}</code>
              <button
                type="button"
                class="icon-btn"
                aria-label={t("tools.remove", { name })}
                onClick={() => onChange(toggleName(picked, name, false))}
              >
                ×
              </button>
            </li>
          ))}
        </ul>
      )}
      {groups.map((group) => (
        <fieldset key={group.source} class="tool-group" data-testid={`${testId}-group-${group.source}`}>
          <legend>
            {group.label} <span class="muted">({group.tools.length})</span>
          </legend>
          <ul class="tool-options">
            {group.tools.map((tool) => (
              <Option
                key={tool.name}
                name={tool.name}
                description={describe(tool.name, tool.description)}
                grantOnly={tool.grantOnly}
                checked={picked.includes(tool.name)}
                onToggle={toggle(tool.name)}
                testId={`${testId}-${tool.name}`}
                note={grantOnlyNote}
              />
            ))}
          </ul>
        </fieldset>
      ))}
      {groups.length === 0 && <p class="muted">{t("tools.noMatch", { filter })}</p>}
      {unknown.length > 0 && (
        <fieldset class="tool-group" data-testid={`${testId}-group-unknown`}>
          <legend>{t("tools.unknown")}</legend>
          <ul class="tool-options">
            {unknown.map((name) => (
              <Option
                key={name}
                name={name}
                description={t("tools.unknownHelp")}
                grantOnly={false}
                checked
                onToggle={toggle(name)}
                testId={`${testId}-${name}`}
                note={undefined}
              />
            ))}
          </ul>
        </fieldset>
      )}
    </div>
  );
}
