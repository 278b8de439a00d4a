/**
 * The default model and every provider: the built-in ones are always listed, each taking a key and
 * a base URL directly, and say where their key comes from ("from environment" when the server was
 * started with e.g. OPENAI_API_KEY; never the key itself). Keys are write-only: a key saved here
 * shows only a preview. Custom providers defined in the config file are listed too, marked "from
 * config file": their name and protocol can only change there, a key or base URL saved here overrides.
 */

import { useEffect, useState } from "preact/hooks";
import { useAction, useReportError, useServices } from "../../hooks.js";
import { t } from "../../i18n/index.js";
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
      ? [
          "badge-ok",
          t("settings.providers.keyPreview", {
            preview: provider.keyPreview ?? t("settings.providers.keySaved"),
          }),
        ]
      : provider.keySource === "environment"
        ? ["badge-ok", t("settings.providers.keyFromEnv")]
        : provider.keySource === "config"
          ? ["badge-ok", t("settings.providers.keyFromConfig")]
          : !provider.needsKey
            ? ["badge-ok", t("settings.providers.noKeyNeeded")]
            : ["badge-warning", t("settings.providers.noKey")];
  return (
    <span class={`badge ${cls}`} data-testid="provider-key-status" data-source={provider.keySource}>
      {text}
    </span>
  );
}

function sourceLine(provider: ProviderInfo): string {
  const parts: string[] = [];
  if (provider.keySource === "environment")
    parts.push(t("settings.providers.sourceEnv", { env: provider.keyEnv ?? "" }));
  else if (provider.keySource === "config") parts.push(t("settings.providers.sourceConfig"));
  else if (provider.keySource === "settings") parts.push(t("settings.providers.sourceSettings"));
  else if (provider.keyEnv) parts.push(t("settings.providers.sourceNone", { env: provider.keyEnv }));
  const url =
    provider.baseUrlSource === "environment"
      ? t("settings.providers.urlFromEnv", { url: provider.baseUrl ?? "" })
      : provider.baseUrlSource === "config"
        ? t("settings.providers.urlFromConfig", { url: provider.baseUrl ?? "" })
        : provider.baseUrlSource === "settings"
          ? provider.fromConfigFile
            ? t("settings.providers.urlSavedOverConfig", {
                url: provider.baseUrl ?? "",
                config: provider.defaultBaseUrl ?? "",
              })
            : t("settings.providers.urlSaved", { url: provider.baseUrl ?? "" })
          : provider.baseUrl;
  if (url) parts.push(t("settings.providers.baseUrlLine", { url }));
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
  const keyPlaceholder =
    provider.keySource === "none" ? t("settings.providers.apiKey") : t("settings.providers.newApiKey");
  return (
    <li class="provider" data-testid="provider" data-provider={provider.name}>
      <div class="provider-head">
        <strong>{label}</strong>
        {!provider.builtin && <span class="muted">{provider.protocol}</span>}
        {provider.fromConfigFile && (
          <span
            class="badge"
            data-testid="provider-from-config"
            title={t("settings.providers.fromConfigTitle")}
          >
            {t("settings.providers.fromConfig")}
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
          aria-label={t("settings.providers.baseUrlOf", { label })}
          placeholder={
            provider.builtin || provider.fromConfigFile
              ? t("settings.providers.baseUrlOptional")
              : t("settings.providers.baseUrl")
          }
          onInput={(e) => setBaseUrl(e.currentTarget.value)}
          data-testid="provider-base-url"
        />
        {(provider.needsKey || !provider.builtin) && (
          <input
            type="password"
            autocomplete="off"
            value={key}
            aria-label={t("settings.providers.apiKeyOf", { label })}
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
          {t("settings.providers.save")}
        </button>
        {(provider.keySource === "settings" || provider.baseUrlSource === "settings") && (
          <button
            type="button"
            class="btn btn-small"
            disabled={forgetting}
            onClick={() => void forget()}
            data-testid="provider-forget"
          >
            {provider.builtin || provider.fromConfigFile
              ? t("settings.providers.reset")
              : t("settings.providers.remove")}
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
        aria-label={t("settings.providers.providerName")}
        placeholder={t("settings.providers.namePlaceholder")}
        onInput={(e) => setName(e.currentTarget.value)}
        data-testid="provider-add-name"
      />
      <select
        value={protocol}
        aria-label={t("settings.providers.protocol")}
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
        aria-label={t("settings.providers.baseUrl")}
        placeholder={t("settings.providers.baseUrl")}
        onInput={(e) => setBaseUrl(e.currentTarget.value)}
        data-testid="provider-add-base-url"
      />
      <input
        type="password"
        autocomplete="off"
        value={key}
        aria-label={t("settings.providers.apiKey")}
        placeholder={t("settings.providers.apiKeyOptional")}
        onInput={(e) => setKey(e.currentTarget.value)}
        data-testid="provider-add-key"
      />
      <button
        type="submit"
        class="btn btn-small"
        disabled={adding || !name.trim() || !baseUrl.trim()}
        data-testid="provider-add-submit"
      >
        {t("settings.providers.add")}
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
    store.dispatch({
      type: "notice",
      kind: "info",
      text: t("settings.providers.saved", { label: LABELS[update.name] ?? update.name }),
    });
  };
  const forgetProvider = async (provider: ProviderInfo) => {
    const label = LABELS[provider.name] ?? provider.name;
    const ok = await askConfirm(
      provider.builtin
        ? {
            title: t("settings.providers.resetTitle", { label }),
            message: t("settings.providers.resetBuiltinMessage"),
            confirmLabel: t("settings.providers.reset"),
          }
        : provider.fromConfigFile
          ? {
              title: t("settings.providers.resetTitle", { label }),
              message: t("settings.providers.resetConfigMessage"),
              confirmLabel: t("settings.providers.reset"),
            }
          : {
              title: t("settings.providers.removeTitle", { label }),
              message: t("settings.providers.removeMessage"),
              confirmLabel: t("settings.providers.remove"),
            },
    );
    if (!ok) return;
    apply(await api.removeProvider(provider.name));
  };
  const [saveModel, savingModel] = useAction(async () => {
    apply(await api.putSettings({ defaultModel: defaultModel.trim() }));
    store.dispatch({ type: "notice", kind: "info", text: t("settings.providers.defaultModelSaved") });
  });

  if (!settings) {
    return (
      <section class="form" data-testid="settings-providers">
        <h3>{t("settings.providers.loadingTitle")}</h3>
        <p class="muted">{t("common.loading")}</p>
      </section>
    );
  }
  const builtins = settings.providers.filter((p) => p.builtin);
  const custom = settings.providers.filter((p) => !p.builtin);
  return (
    <>
      <section class="form" data-testid="settings-providers">
        <h3>{t("settings.providers.defaultModel")}</h3>
        {!settings.modelStatus.ready && (
          <p class="model-notice" role="status" data-testid="settings-model-status">
            {settings.modelStatus.problem === "no_default_model"
              ? t("settings.providers.noDefaultModel")
              : settings.modelStatus.problem === "no_key"
                ? t("settings.providers.defaultNeedsKey", {
                    provider: settings.defaultModel?.split(":")[0] ?? t("settings.providers.itsProvider"),
                  })
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
              {t("settings.providers.defaultModelLabel")}
            </label>
            <ModelPicker
              id="default-model"
              value={defaultModel}
              placeholder={t("settings.providers.defaultModelPlaceholder")}
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
            {t("settings.providers.save")}
          </button>
        </form>
        {settings.defaultModelSource === "environment" && (
          <p class="muted section-intro" data-testid="default-model-source">
            {t("settings.providers.defaultModelFromEnv")}
          </p>
        )}
      </section>
      <section class="form" data-testid="settings-provider-list">
        <h3>{t("settings.providers.title")}</h3>
        <p class="muted section-intro">{t("settings.providers.intro")}</p>
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
        <h3>{t("settings.providers.customTitle")}</h3>
        <p class="muted section-intro">
          {t("settings.providers.customIntroBefore")} <code>providers</code>{" "}
          {t("settings.providers.customIntroAfter")}
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
