/**
 * The default model and every provider: the built-in ones are always listed, each taking a key and
 * a base URL directly, and say where their key comes from ("from environment" when the server was
 * started with e.g. OPENAI_API_KEY; never the key itself). Keys are write-only: a key saved here
 * shows only a preview. Custom providers defined in the config file are listed too, marked "from
 * config file": their name and protocol can only change there, a key or base URL saved here overrides.
 */
import { useEffect, useState } from "preact/hooks";
import { useAction, useReportError, useServices } from "../../hooks.js";
import type { ProviderInfo, ProviderUpdate, Settings } from "../../types.js";
import { askConfirm } from "../confirm-dialog.js";
import { ModelPicker } from "../model-picker.js";

const PROTOCOLS = ["openai", "anthropic", "gemini"];

const LABELS: Record<string, string> = {
  openai: "OpenAI",
  anthropic: "Anthropic",
  gemini: "Google Gemini",
  deepseek: "DeepSeek",
  qwen: "Qwen (DashScope)",
  kimi: "Kimi (Moonshot)",
  glm: "GLM (Zhipu)",
  minimax: "MiniMax",
  xai: "xAI (Grok)",
  perplexity: "Perplexity",
  openrouter: "OpenRouter",
  ollama: "Ollama",
};

function KeyBadge({ provider }: { provider: ProviderInfo }) {
  // A key that is there is named first: a provider that needs none may still have one saved.
  const [cls, text] =
    provider.keySource === "settings"
      ? ["badge-ok", `key ${provider.keyPreview ?? "saved"}`]
      : provider.keySource === "environment"
        ? ["badge-ok", "key from environment"]
        : provider.keySource === "config"
          ? ["badge-ok", "key from config file"]
          : !provider.needsKey
            ? ["badge-ok", "no key needed"]
            : ["badge-warning", "no key"];
  return (
    <span class={`badge ${cls}`} data-testid="provider-key-status" data-source={provider.keySource}>
      {text}
    </span>
  );
}

function sourceLine(provider: ProviderInfo): string {
  const parts: string[] = [];
  if (provider.keySource === "environment")
    parts.push(`Key from environment (${provider.keyEnv}); a key saved here replaces it.`);
  else if (provider.keySource === "config")
    parts.push("Key from the config file; a key saved here replaces it.");
  else if (provider.keySource === "settings") parts.push("Key saved here; leave the field empty to keep it.");
  else if (provider.keyEnv) parts.push(`Paste a key, or start the server with ${provider.keyEnv}.`);
  const url =
    provider.baseUrlSource === "environment"
      ? `${provider.baseUrl} (from environment)`
      : provider.baseUrlSource === "config"
        ? `${provider.baseUrl} (from config file)`
        : provider.baseUrlSource === "settings"
          ? `${provider.baseUrl} (saved here${provider.fromConfigFile ? `; the config file says ${provider.defaultBaseUrl}` : ""})`
          : provider.baseUrl;
  if (url) parts.push(`Base URL ${url}.`);
  return parts.join(" ");
}

function ProviderRow({
  provider,
  onSave,
  onForget,
}: {
  provider: ProviderInfo;
  onSave: (update: ProviderUpdate) => Promise<void>;
  onForget: (provider: ProviderInfo) => Promise<void>;
}) {
  const savedUrl = provider.baseUrlSource === "settings" ? provider.baseUrl : "";
  const [key, setKey] = useState("");
  const [baseUrl, setBaseUrl] = useState(savedUrl);
  // Follows the saved URL when it changes (saved or reset), during render: an effect would run after
  // the first paint and could wipe what was typed meanwhile.
  const [shownSaved, setShownSaved] = useState(savedUrl);
  if (shownSaved !== savedUrl) {
    setShownSaved(savedUrl);
    setBaseUrl(savedUrl);
  }
  const changed = key !== "" || baseUrl.trim() !== savedUrl;
  const [save, saving] = useAction(async () => {
    const update: ProviderUpdate = { name: provider.name };
    if (key) update.apiKey = key;
    if (baseUrl.trim() !== savedUrl) update.baseUrl = baseUrl.trim() || null;
    await onSave(update);
    setKey("");
  });
  const [forget, forgetting] = useAction(() => onForget(provider));
  const label = LABELS[provider.name] ?? provider.name;
  const keyPlaceholder = provider.keySource === "none" ? "API key" : "New API key";
  return (
    <li class="provider" data-testid="provider" data-provider={provider.name}>
      <div class="provider-head">
        <strong>{label}</strong>
        {!provider.builtin && <span class="muted">{provider.protocol}</span>}
        {provider.fromConfigFile && (
          <span
            class="badge"
            data-testid="provider-from-config"
            title="Defined in the config file: its name and protocol change only there"
          >
            from config file
          </span>
        )}
        <KeyBadge provider={provider} />
      </div>
      <p class="muted provider-source" data-testid="provider-source">
        {sourceLine(provider)}
      </p>
      <form
        class="provider-form"
        onSubmit={(e) => {
          e.preventDefault();
          void save();
        }}
      >
        <input
          type="url"
          value={baseUrl}
          aria-label={`${label} base URL`}
          placeholder={provider.builtin || provider.fromConfigFile ? "Base URL (optional)" : "Base URL"}
          onInput={(e) => setBaseUrl(e.currentTarget.value)}
          data-testid="provider-base-url"
        />
        {(provider.needsKey || !provider.builtin) && (
          <input
            type="password"
            autocomplete="off"
            value={key}
            aria-label={`${label} API key`}
            placeholder={keyPlaceholder}
            onInput={(e) => setKey(e.currentTarget.value)}
            data-testid="provider-key-input"
          />
        )}
        <button
          type="submit"
          class="btn btn-small btn-primary"
          disabled={saving || !changed}
          data-testid="provider-save"
        >
          Save
        </button>
        {(provider.keySource === "settings" || provider.baseUrlSource === "settings") && (
          <button
            type="button"
            class="btn btn-small"
            disabled={forgetting}
            onClick={() => void forget()}
            data-testid="provider-forget"
          >
            {provider.builtin || provider.fromConfigFile ? "Reset" : "Remove"}
          </button>
        )}
      </form>
    </li>
  );
}

function AddProvider({ onSave }: { onSave: (update: ProviderUpdate) => Promise<void> }) {
  const [name, setName] = useState("");
  const [protocol, setProtocol] = useState("openai");
  const [baseUrl, setBaseUrl] = useState("");
  const [key, setKey] = useState("");
  const [add, adding] = useAction(async () => {
    const update: ProviderUpdate = { name: name.trim(), protocol, baseUrl: baseUrl.trim() };
    if (key) update.apiKey = key;
    await onSave(update);
    setName("");
    setBaseUrl("");
    setKey("");
  });
  return (
    <form
      class="provider-form provider-add"
      data-testid="provider-add"
      onSubmit={(e) => {
        e.preventDefault();
        void add();
      }}
    >
      <input
        value={name}
        required
        aria-label="Provider name"
        placeholder="Name, e.g. my-llm"
        onInput={(e) => setName(e.currentTarget.value)}
        data-testid="provider-add-name"
      />
      <select
        value={protocol}
        aria-label="Protocol"
        onChange={(e) => setProtocol(e.currentTarget.value)}
        data-testid="provider-add-protocol"
      >
        {PROTOCOLS.map((p) => (
          <option key={p} value={p}>
            {p}
          </option>
        ))}
      </select>
      <input
        type="url"
        value={baseUrl}
        required
        aria-label="Base URL"
        placeholder="Base URL"
        onInput={(e) => setBaseUrl(e.currentTarget.value)}
        data-testid="provider-add-base-url"
      />
      <input
        type="password"
        autocomplete="off"
        value={key}
        aria-label="API key"
        placeholder="API key (optional)"
        onInput={(e) => setKey(e.currentTarget.value)}
        data-testid="provider-add-key"
      />
      <button
        type="submit"
        class="btn btn-small"
        disabled={adding || !name.trim() || !baseUrl.trim()}
        data-testid="provider-add-submit"
      >
        Add provider
      </button>
    </form>
  );
}

/** The providers and default model section (owner/admin). */
export function ProvidersSection() {
  const { api, store } = useServices();
  const report = useReportError();
  const [settings, setSettings] = useState<Settings | undefined>(undefined);
  const [defaultModel, setDefaultModel] = useState("");

  const apply = (next: Settings) => {
    setSettings(next);
    setDefaultModel(next.defaultModel ?? "");
    store.dispatch({ type: "model_status", status: next.modelStatus });
  };
  useEffect(() => {
    api.getSettings().then(apply).catch(report);
  }, [api]);

  const saveProvider = async (update: ProviderUpdate) => {
    apply(await api.saveProvider(update));
    store.dispatch({ type: "notice", kind: "info", text: `${LABELS[update.name] ?? update.name} saved.` });
  };
  const forgetProvider = async (provider: ProviderInfo) => {
    const label = LABELS[provider.name] ?? provider.name;
    const ok = await askConfirm(
      provider.builtin
        ? {
            title: `Reset ${label}?`,
            message: "The key and base URL saved here are forgotten; the environment's (if any) apply again.",
            confirmLabel: "Reset",
          }
        : provider.fromConfigFile
          ? {
              title: `Reset ${label}?`,
              message: "The key and base URL saved here are forgotten; the config file's apply again.",
              confirmLabel: "Reset",
            }
          : {
              title: `Remove the provider ${label}?`,
              message: "Its saved key is forgotten too.",
              confirmLabel: "Remove",
            },
    );
    if (!ok) return;
    apply(await api.removeProvider(provider.name));
  };
  const [saveModel, savingModel] = useAction(async () => {
    apply(await api.putSettings({ defaultModel: defaultModel.trim() }));
    store.dispatch({ type: "notice", kind: "info", text: "Default model saved." });
  });

  if (!settings) {
    return (
      <section class="form" data-testid="settings-providers">
        <h3>Models and providers</h3>
        <p class="muted">Loading…</p>
      </section>
    );
  }
  const builtins = settings.providers.filter((p) => p.builtin);
  const custom = settings.providers.filter((p) => !p.builtin);
  return (
    <>
      <section class="form" data-testid="settings-providers">
        <h3>Default model</h3>
        {!settings.modelStatus.ready && (
          <p class="model-notice" role="status" data-testid="settings-model-status">
            {settings.modelStatus.problem === "no_default_model"
              ? "No default model yet: enter one below as provider:model, and give that provider a key under Providers."
              : settings.modelStatus.problem === "no_key"
                ? `The default model needs an API key for ${settings.defaultModel?.split(":")[0] ?? "its provider"}: paste it under Providers below.`
                : settings.modelStatus.message}
          </p>
        )}
        <form
          class="inline-form"
          onSubmit={(e) => {
            e.preventDefault();
            void saveModel();
          }}
        >
          <div class="field">
            <label class="field-label" for="default-model">
              Default model (provider:model)
            </label>
            <ModelPicker
              id="default-model"
              value={defaultModel}
              placeholder="e.g. openai:gpt-4o"
              onChange={setDefaultModel}
              testId="default-model-input"
            />
          </div>
          <button
            type="submit"
            class="btn btn-primary"
            disabled={
              savingModel || !defaultModel.trim() || defaultModel.trim() === (settings.defaultModel ?? "")
            }
            data-testid="default-model-save"
          >
            Save
          </button>
        </form>
        {settings.defaultModelSource === "environment" && (
          <p class="muted section-intro" data-testid="default-model-source">
            From the environment (DIMSUM_MODEL) or the config file; saving here overrides it.
          </p>
        )}
      </section>
      <section class="form" data-testid="settings-provider-list">
        <h3>Providers</h3>
        <p class="muted section-intro">
          Agents reach models through these. A key saved here is stored encrypted on the server and wins over
          the environment's.
        </p>
        <ul class="provider-list">
          {builtins.map((provider) => (
            <ProviderRow
              key={provider.name}
              provider={provider}
              onSave={saveProvider}
              onForget={forgetProvider}
            />
          ))}
        </ul>
      </section>
      <section class="form" data-testid="settings-custom-providers">
        <h3>Custom providers</h3>
        <p class="muted section-intro">
          Any other server speaking the OpenAI, Anthropic or Gemini protocol. Those marked "from config file"
          are defined under <code>providers</code> in the config file and can be removed only there.
        </p>
        {custom.length > 0 && (
          <ul class="provider-list">
            {custom.map((provider) => (
              <ProviderRow
                key={provider.name}
                provider={provider}
                onSave={saveProvider}
                onForget={forgetProvider}
              />
            ))}
          </ul>
        )}
        <AddProvider onSave={saveProvider} />
      </section>
    </>
  );
}
