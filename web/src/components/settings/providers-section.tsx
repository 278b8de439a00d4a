/** Providers (API keys are write-only: only a preview is ever shown) and the default model. */
import { useEffect, useState } from "preact/hooks";
import { useAction, useReportError, useServices } from "../../hooks.js";
import type { ProviderInfo, ProviderUpdate, Settings } from "../../types.js";

const PROTOCOLS = ["openai", "anthropic", "gemini"];

function ProviderRow({
  provider,
  onSave,
}: {
  provider: ProviderInfo;
  onSave: (update: ProviderUpdate) => Promise<void>;
}) {
  const [key, setKey] = useState("");
  const [baseUrl, setBaseUrl] = useState(provider.baseUrl ?? "");
  const [save, saving] = useAction(async () => {
    const update: ProviderUpdate = { name: provider.name };
    if (key) update.apiKey = key;
    if (baseUrl !== (provider.baseUrl ?? "")) update.baseUrl = baseUrl;
    await onSave(update);
    setKey("");
  });
  return (
    <li class="provider" data-testid="provider" data-provider={provider.name}>
      <div class="provider-head">
        <strong>{provider.name}</strong>
        {provider.protocol && <span class="muted">{provider.protocol}</span>}
        <span
          class={`badge ${provider.hasKey ? "badge-ok" : "badge-warning"}`}
          data-testid="provider-key-preview"
        >
          {provider.hasKey ? `key ${provider.keyPreview ?? "set"}` : "no key"}
        </span>
      </div>
      <form
        class="provider-form"
        onSubmit={(e) => {
          e.preventDefault();
          void save();
        }}
      >
        <input
          value={baseUrl}
          placeholder="Base URL (default for the protocol)"
          onInput={(e) => setBaseUrl(e.currentTarget.value)}
          data-testid="provider-base-url"
        />
        <input
          type="password"
          autocomplete="off"
          value={key}
          placeholder={provider.hasKey ? "New API key (leave empty to keep)" : "API key"}
          onInput={(e) => setKey(e.currentTarget.value)}
          data-testid="provider-key-input"
        />
        <button
          type="submit"
          class="btn btn-small btn-primary"
          disabled={saving || (!key && baseUrl === (provider.baseUrl ?? ""))}
          data-testid="provider-save"
        >
          Save
        </button>
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
    const update: ProviderUpdate = { name: name.trim(), protocol };
    if (baseUrl.trim()) update.baseUrl = baseUrl.trim();
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
        placeholder="Provider name"
        onInput={(e) => setName(e.currentTarget.value)}
        data-testid="provider-add-name"
      />
      <select
        value={protocol}
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
        value={baseUrl}
        placeholder="Base URL"
        onInput={(e) => setBaseUrl(e.currentTarget.value)}
        data-testid="provider-add-base-url"
      />
      <input
        type="password"
        autocomplete="off"
        value={key}
        placeholder="API key"
        onInput={(e) => setKey(e.currentTarget.value)}
        data-testid="provider-add-key"
      />
      <button
        type="submit"
        class="btn btn-small"
        disabled={adding || !name.trim()}
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

  useEffect(() => {
    api
      .getSettings()
      .then((s) => {
        setSettings(s);
        setDefaultModel(s.defaultModel ?? "");
      })
      .catch(report);
  }, [api]);

  const saveProvider = async (update: ProviderUpdate) => {
    const next = await api.putSettings({ providers: [update] });
    setSettings(next);
    store.dispatch({ type: "notice", kind: "info", text: `Provider ${update.name} saved.` });
  };
  const [saveModel, savingModel] = useAction(async () => {
    const next = await api.putSettings({ defaultModel: defaultModel.trim() });
    setSettings(next);
    store.dispatch({ type: "notice", kind: "info", text: "Default model saved." });
  });

  return (
    <section class="form" data-testid="settings-providers">
      <h3>Models and providers</h3>
      {!settings ? (
        <p class="muted">Loading…</p>
      ) : (
        <>
          <form
            class="inline-form"
            onSubmit={(e) => {
              e.preventDefault();
              void saveModel();
            }}
          >
            <label class="field">
              <span>Default model</span>
              <input
                value={defaultModel}
                placeholder="provider:model"
                onInput={(e) => setDefaultModel(e.currentTarget.value)}
                data-testid="default-model-input"
              />
            </label>
            <button
              type="submit"
              class="btn btn-primary btn-small"
              disabled={savingModel || defaultModel === (settings.defaultModel ?? "")}
              data-testid="default-model-save"
            >
              Save
            </button>
          </form>
          <ul class="provider-list">
            {settings.providers.map((provider) => (
              <ProviderRow key={provider.name} provider={provider} onSave={saveProvider} />
            ))}
          </ul>
          <AddProvider onSave={saveProvider} />
        </>
      )}
    </section>
  );
}
