/** API tokens for the OpenAI-compatible endpoint: create (shown once, with a copy button), list, revoke. */

import { useEffect, useState } from "preact/hooks";
import { formatTime } from "../../format.js";
import { useAction, useReportError, useServices } from "../../hooks.js";
import { t } from "../../i18n/index.js";
import type { ApiTokenInfo, CreatedToken } from "../../types.js";

/** Copies text, falling back to selecting it where the Clipboard API is unavailable (plain http). */
async function copyText(text: string, fallbackInput: HTMLInputElement | null): Promise<boolean> {
  try {
    await navigator.clipboard.writeText(text);
    return true;
  } catch {
    fallbackInput?.select();
    return false;
  }
}

/** The API tokens section. */
export function TokensSection() {
  const { api } = useServices();
  const report = useReportError();
  const [tokens, setTokens] = useState<ApiTokenInfo[] | undefined>(undefined);
  const [name, setName] = useState("");
  const [created, setCreated] = useState<CreatedToken | undefined>(undefined);
  const [copied, setCopied] = useState(false);

  const reload = () => api.listTokens().then(setTokens).catch(report);
  useEffect(() => {
    void reload();
  }, [api]);

  const [create, creating] = useAction(async () => {
    const token = await api.createToken(name.trim());
    setCreated(token);
    setCopied(false);
    setName("");
    await reload();
  });
  const [revoke, revoking] = useAction(async (id: string) => {
    await api.deleteToken(id);
    if (created?.id === id) setCreated(undefined);
    await reload();
  });

  return (
    <section class="form" data-testid="settings-tokens">
      <h3>{t("settings.tokens.title")}</h3>
      <p class="muted">
        {t("settings.tokens.introBefore")} <code>POST /v1/chat/completions</code>
        {t("settings.tokens.introAfter")}
      </p>
      <form
        class="inline-form"
        onSubmit={(e) => {
          e.preventDefault();
          void create();
        }}
      >
        <input
          value={name}
          required
          placeholder={t("settings.tokens.namePlaceholder")}
          onInput={(e) => setName(e.currentTarget.value)}
          data-testid="token-name"
        />
        <button
          type="submit"
          class="btn btn-primary btn-small"
          disabled={creating || !name.trim()}
          data-testid="token-create"
        >
          {t("settings.tokens.create")}
        </button>
      </form>
      {created && (
        <div class="notice notice-info token-created" data-testid="token-created">
          <p>{t("settings.tokens.copyNow")}</p>
          <div class="inline-form">
            <input
              id="created-token"
              class="code-input"
              readOnly
              value={created.token}
              onFocus={(e) => e.currentTarget.select()}
              data-testid="token-value"
            />
            <button
              type="button"
              class="btn btn-small"
              onClick={() => {
                const input = document.getElementById("created-token") as HTMLInputElement | null;
                void copyText(created.token, input).then(setCopied);
              }}
              data-testid="token-copy"
            >
              {copied ? t("settings.tokens.copied") : t("settings.tokens.copy")}
            </button>
            <button
              type="button"
              class="btn btn-small"
              onClick={() => setCreated(undefined)}
              data-testid="token-dismiss"
            >
              {t("settings.tokens.done")}
            </button>
          </div>
        </div>
      )}
      {tokens === undefined ? (
        <p class="muted">{t("common.loading")}</p>
      ) : tokens.length === 0 ? (
        <p class="muted">{t("settings.tokens.empty")}</p>
      ) : (
        <table class="table" data-testid="token-list">
          <thead>
            <tr>
              <th>{t("settings.tokens.name")}</th>
              <th>{t("settings.tokens.token")}</th>
              <th>{t("settings.tokens.created")}</th>
              <th>{t("settings.tokens.lastUsed")}</th>
              <th />
            </tr>
          </thead>
          <tbody>
            {tokens.map((token) => (
              <tr key={token.id} data-testid="token-row" data-token-id={token.id}>
                <td>{token.name}</td>
                <td>
                  <code>{token.preview}</code>
                </td>
                <td>{formatTime(token.createdAt)}</td>
                <td>{token.lastUsedAt ? formatTime(token.lastUsedAt) : t("settings.tokens.never")}</td>
                <td>
                  <button
                    type="button"
                    class="btn btn-small btn-danger"
                    disabled={revoking}
                    onClick={() => void revoke(token.id)}
                    data-testid="token-revoke"
                  >
                    {t("settings.tokens.revoke")}
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}
