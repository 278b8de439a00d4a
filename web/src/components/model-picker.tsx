/**
 * A `provider:model` field with suggestions: the model catalogue plus what each configured provider
 * lists (`GET /api/models`), grouped by provider, configured ones first. Anything can still be typed.
 * Used wherever a model is chosen (the agent editor; Settings' default model).
 */
import { useEffect, useRef, useState } from "preact/hooks";
import type { ApiClient } from "../api.js";
import { errorText } from "../api.js";
import { useServices } from "../hooks.js";
import { t } from "../i18n/index.js";
import type { ModelChoice, ModelsResponse, ProviderModels } from "../types.js";

const REUSE_MS = 30_000;
let cached: { api: ApiClient; at: number; result: Promise<ModelsResponse> } | undefined;

/** The server's model list, shared by every picker on the page for half a minute. */
export function loadModels(api: ApiClient): Promise<ModelsResponse> {
  if (!cached || cached.api !== api || Date.now() - cached.at > REUSE_MS) {
    const result = api.listModels();
    cached = { api, at: Date.now(), result };
    result.catch(() => {
      cached = undefined;
    });
  }
  return cached.result;
}

export interface ModelPickerProps {
  value: string;
  onChange: (value: string) => void;
  /** On the input; the options get `<testId>-option`. */
  testId: string;
  /** Id of the input, for a `<label for>`. */
  id?: string;
  invalid?: boolean;
  /** Offer "the default model" (an empty value) as the first choice. */
  allowDefault?: boolean;
  placeholder?: string;
}

interface Group {
  provider: ProviderModels;
  models: ModelChoice[];
}

function groupsOf(data: ModelsResponse | undefined, filter: string): Group[] {
  if (!data) return [];
  const needle = filter.trim().toLowerCase();
  const exact = data.models.some((m) => m.id === filter.trim());
  const shown =
    exact || needle === "" ? data.models : data.models.filter((m) => m.id.toLowerCase().includes(needle));
  const groups = data.providers
    .map((provider) => {
      const all = shown.filter((m) => m.provider === provider.name);
      // Under "listed by the provider" only what its list returned: a suggestion it did not list
      // (a catalogue model a custom endpoint does not serve) would fail when picked.
      const listed = all.filter((m) => m.source === "provider");
      return { provider, models: provider.list === "listed" && listed.length > 0 ? listed : all };
    })
    .filter((g) => g.models.length > 0);
  // Providers that can run now first; the order within each kind stays the server's.
  return [...groups.filter((g) => g.provider.configured), ...groups.filter((g) => !g.provider.configured)];
}

function providerNote(provider: ProviderModels, models: ModelChoice[]): string {
  if (!provider.configured) return t("models.needsSetup");
  if (provider.list === "listed" && models.some((m) => m.source === "provider")) return t("models.listed");
  if (provider.list === "listed") return t("models.listedNone");
  return t("models.noAnswer");
}

/** "128k", "1M": a context window in tokens. */
function windowLabel(tokens: number): string {
  return tokens >= 1_000_000 ? `${Math.round(tokens / 100_000) / 10}M` : `${Math.round(tokens / 1000)}k`;
}

/** The picker. */
export function ModelPicker({
  value,
  onChange,
  testId,
  id,
  invalid,
  allowDefault = true,
  placeholder,
}: ModelPickerProps) {
  const { api } = useServices();
  const [data, setData] = useState<ModelsResponse | undefined>(undefined);
  const [problem, setProblem] = useState<string | undefined>(undefined);
  const [open, setOpen] = useState(false);
  const [active, setActive] = useState(-1);
  const listRef = useRef<HTMLDivElement>(null);

  useEffect(() => {
    let live = true;
    loadModels(api)
      .then((result) => live && setData(result))
      .catch((err: unknown) => live && setProblem(errorText(err)));
    return () => {
      live = false;
    };
  }, [api]);

  const groups = groupsOf(data, value);
  const choices: Array<{ id: string; label: string }> = [
    ...(allowDefault
      ? [
          {
            id: "",
            label: data?.defaultModel
              ? t("models.defaultNamed", { model: data.defaultModel })
              : t("models.default"),
          },
        ]
      : []),
    ...groups.flatMap((g) => g.models.map((m) => ({ id: m.id, label: m.model }))),
  ];
  const pick = (choice: string) => {
    onChange(choice);
    setOpen(false);
    setActive(-1);
  };

  useEffect(() => {
    if (active < 0) return;
    listRef.current?.querySelector(`[data-index="${active}"]`)?.scrollIntoView({ block: "nearest" });
  }, [active]);

  const onKeyDown = (event: KeyboardEvent) => {
    if (event.key === "ArrowDown" || event.key === "ArrowUp") {
      event.preventDefault();
      setOpen(true);
      const step = event.key === "ArrowDown" ? 1 : -1;
      setActive((i) => Math.max(0, Math.min(choices.length - 1, i + step)));
    } else if (event.key === "Enter" && open && active >= 0 && choices[active]) {
      event.preventDefault();
      pick(choices[active].id);
    } else if (event.key === "Escape" && open) {
      event.preventDefault();
      setOpen(false);
    }
  };

  const listId = `${testId}-options`;
  let index = allowDefault ? 1 : 0;
  return (
    <div class="model-picker">
      <input
        id={id}
        value={value}
        placeholder={
          placeholder ??
          (data?.defaultModel
            ? t("models.defaultPlaceholder", { model: data.defaultModel })
            : "provider:model")
        }
        role="combobox"
        aria-expanded={open}
        aria-controls={listId}
        aria-autocomplete="list"
        aria-activedescendant={open && active >= 0 ? `${testId}-choice-${active}` : undefined}
        aria-invalid={invalid ? "true" : undefined}
        autocomplete="off"
        spellcheck={false}
        onFocus={() => setOpen(true)}
        onClick={() => setOpen(true)}
        onBlur={() => setOpen(false)}
        onInput={(e) => {
          onChange(e.currentTarget.value);
          setOpen(true);
          setActive(-1);
        }}
        onKeyDown={onKeyDown}
        data-testid={testId}
      />
      {open && (
        <div
          class="model-options"
          id={listId}
          role="listbox"
          ref={listRef}
          // Keeps the focus in the input when the list's scrollbar or a heading is pressed.
          onMouseDown={(e) => e.preventDefault()}
          data-testid={listId}
        >
          {allowDefault && (
            <div
              id={`${testId}-choice-0`}
              role="option"
              tabIndex={-1}
              aria-selected={value === ""}
              data-index={0}
              class={`model-option model-default${active === 0 ? " active" : ""}`}
              onMouseDown={(e) => {
                e.preventDefault();
                pick("");
              }}
              data-testid={`${testId}-option`}
              data-value=""
            >
              {choices[0]?.label}
            </div>
          )}
          {groups.map((group) => (
            <div key={group.provider.name} class="model-group">
              <div class="model-group-head" aria-hidden="true">
                <strong>{group.provider.name}</strong>{" "}
                <span class="muted" title={group.provider.note}>
                  {providerNote(group.provider, group.models)}
                </span>
              </div>
              {group.models.map((model) => {
                const at = index++;
                return (
                  <div
                    key={model.id}
                    id={`${testId}-choice-${at}`}
                    role="option"
                    tabIndex={-1}
                    aria-selected={value === model.id}
                    aria-label={model.id}
                    data-index={at}
                    class={`model-option${active === at ? " active" : ""}${group.provider.configured ? "" : " unavailable"}`}
                    onMouseDown={(e) => {
                      e.preventDefault();
                      pick(model.id);
                    }}
                    data-testid={`${testId}-option`}
                    data-value={model.id}
                  >
                    <code>{model.model}</code>
                    {model.contextWindow && (
                      <span class="muted model-window" title={t("models.window")}>
                        {windowLabel(model.contextWindow)}
                      </span>
                    )}
                  </div>
                );
              })}
            </div>
          ))}
          {!data && !problem && <p class="model-note muted">{t("models.loading")}</p>}
          {problem && <p class="model-note muted">{t("models.failed", { problem })}</p>}
          {data && groups.length === 0 && value.trim() !== "" && (
            <p class="model-note muted">{t("models.typed", { value: value.trim() })}</p>
          )}
        </div>
      )}
    </div>
  );
}
