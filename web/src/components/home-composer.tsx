/**
 * The home page's composer, as in ChatGPT: pick an agent, write (and attach files by the paperclip,
 * a drop or a paste), and a new direct chat opens with the message sent (named after its first
 * exchange). Files are checked at once and held until the chat exists, then uploaded to it.
 */
import { useState } from "preact/hooks";
import { useAction, useSelector, useServices } from "../hooks.js";
import { t } from "../i18n/index.js";
import { isImeKey } from "../ime.js";
import { AttachArea, AttachButton, pastedFiles } from "./attach-controls.js";
import { distinctName } from "./new-channel-form.js";
import { useAttachments } from "./use-attachments.js";
import { useFileDrop } from "./use-file-drop.js";

/** The composer. */
export function HomeComposer() {
  const { api, store, navigate } = useServices();
  const agents = useSelector((s) => s.agents);
  const channels = useSelector((s) => s.channels.list);
  const [agentId, setAgentId] = useState("");
  const [text, setText] = useState("");
  // Guests cannot attach files (the server refuses their uploads).
  const canAttach = useSelector((s) => s.auth.phase === "ready" && s.auth.user.role !== "guest");
  const attachments = useAttachments(undefined);
  const dragging = useFileDrop(canAttach, attachments.add);
  const chosen =
    agents.find((a) => a.id === agentId) ?? agents.find((a) => a.id === "assistant") ?? agents[0];
  const [start, busy] = useAction(async () => {
    const body = text.trim();
    if (!chosen || body === "" || attachments.busy || attachments.failed) return;
    const channel = await api.createChannel({
      kind: "direct",
      name: distinctName(
        chosen.name,
        channels.map((c) => c.name),
      ),
      agentIds: [chosen.id],
      userIds: [],
    });
    store.dispatch({ type: "channel_saved", channel });
    // Uploaded before leaving the page: the tray (and its uploads) go with it.
    const ids = attachments.files.length > 0 ? await attachments.uploadTo(channel.id) : [];
    navigate({ name: "channel", channelId: channel.id });
    const result = await api.postMessage(channel.id, body, ids);
    store.dispatch({ type: "posted", channelId: channel.id, result });
    setText("");
  });
  if (agents.length === 0) return null;
  return (
    <form
      class="home-composer"
      data-testid="home-composer"
      onSubmit={(e) => {
        e.preventDefault();
        void start();
      }}
    >
      <AttachArea dragging={dragging} attachments={attachments} hasText={text.trim() !== ""} />
      <textarea
        class="composer-input home-composer-input"
        rows={2}
        placeholder={t("homeComposer.placeholder", { name: chosen?.name ?? t("homeComposer.anAgent") })}
        value={text}
        onInput={(e) => setText(e.currentTarget.value)}
        onKeyDown={(e) => {
          if (e.key === "Enter" && !e.shiftKey && !isImeKey(e)) {
            e.preventDefault();
            void start();
          }
        }}
        onPaste={(e) => {
          const files = canAttach ? pastedFiles(e.clipboardData) : [];
          if (files.length === 0) return;
          e.preventDefault();
          attachments.add(files);
        }}
        data-testid="home-composer-input"
      />
      <div class="home-composer-row">
        {canAttach && <AttachButton onFiles={attachments.add} testId="home-composer" />}
        <label class="home-composer-agent">
          <span class="muted">{t("homeComposer.chatWith")}</span>
          <select
            value={chosen?.id ?? ""}
            onChange={(e) => setAgentId(e.currentTarget.value)}
            data-testid="home-composer-agent"
          >
            {agents.map((a) => (
              <option key={a.id} value={a.id}>
                {a.emoji} {a.name}
              </option>
            ))}
          </select>
        </label>
        <button
          type="submit"
          class="btn btn-primary"
          disabled={busy || text.trim() === "" || attachments.busy || attachments.failed}
          data-testid="home-composer-send"
        >
          {t("homeComposer.start")}
        </button>
      </div>
    </form>
  );
}
