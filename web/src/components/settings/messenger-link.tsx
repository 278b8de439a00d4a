/**
 * Settings → Account: link a messenger account (Feishu, DingTalk, WeCom, Telegram) to this web
 * account with a one-time code sent to the bot in a private chat.
 */
import { useState } from "preact/hooks";
import { formatTime } from "../../format.js";
import { useAction, useServices } from "../../hooks.js";
import { connectorApi, type LinkCodeView } from "../connector-api.js";

/** Shows `/link 123456` to send to a bot. */
export function MessengerLink() {
  const { api } = useServices();
  const [code, setCode] = useState<LinkCodeView | undefined>(undefined);
  const [ask, asking] = useAction(async () => setCode(await connectorApi(api).linkCode()));
  return (
    <section class="form" data-testid="messenger-link">
      <h3>Messengers</h3>
      <p class="muted">
        Be yourself in Feishu, DingTalk, WeCom and Telegram chats too: the same memory, rights and approvals
        as here. Get a code, then send it to the bot in a private chat.
      </p>
      {code && (
        <p>
          Send <code data-testid="messenger-link-command">{code.command}</code> to the bot · works once, until{" "}
          {formatTime(code.expiresAt)}
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
          {code ? "New code" : "Get a link code"}
        </button>
      </div>
    </section>
  );
}
