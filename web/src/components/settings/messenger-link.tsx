/**
 * Settings → Account: link a messenger account (Feishu, DingTalk, WeCom, Telegram) to this web
 * account with a one-time code sent to the bot in a private chat.
 */

import { useState } from "preact/hooks";
import { formatTime } from "../../format.js";
import { useAction, useServices } from "../../hooks.js";
import { t } from "../../i18n/index.js";
import { connectorApi, type LinkCodeView } from "../connector-api.js";

/** Shows `/link 123456` to send to a bot. */
export function MessengerLink() {
  const { api } = useServices();
  const [code, setCode] = useState<LinkCodeView | undefined>(undefined);
  const [ask, asking] = useAction(async () => setCode(await connectorApi(api).linkCode()));
  return (
    <section class="form" data-testid="messenger-link">
      <h3>{t("settings.messengers.title")}</h3>
      <p class="muted">{t("settings.messengers.intro")}</p>
      {code && (
        <p>
          {t("settings.messengers.sendBefore")}{" "}
          <code data-testid="messenger-link-command">{code.command}</code>{" "}
          {t("settings.messengers.sendAfter", { time: formatTime(code.expiresAt) })}
        </p>
      )}
      <div class="form-actions">
        <button
          type="button"
          class="btn btn-small"
          disabled={asking}
          onClick={() => void ask()}
          data-testid="messenger-link-ask"
        >
          {code ? t("settings.messengers.newCode") : t("settings.messengers.getCode")}
        </button>
      </div>
    </section>
  );
}
