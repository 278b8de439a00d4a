/**
 * The message composer: Enter sends, Shift+Enter adds a line, `@` opens agent autocomplete
 * (arrows move, Enter/Tab pick, Escape closes), and `/` at the start offers MCP prompts, whose
 * text (after their arguments) is put into the composer to edit and send. Files come by the paperclip,
 * a drop anywhere on the chat, or a paste; each uploads at once into the tray above the input.
 */
import { useEffect, useLayoutEffect, useMemo, useRef, useState } from "preact/hooks";
import { useReportError, useSelector, useServices } from "../hooks.js";
import { t } from "../i18n/index.js";
import { isImeKey } from "../ime.js";
import { activeRuns } from "../state/chat.js";
import { agentsBlindToImages } from "../state/image-readers.js";
import {
  applyMention,
  type MentionCandidate,
  type MentionMenu,
  mentionCandidates,
  mentionKey,
  mentionMenuAt,
  mentionNeeded,
} from "../state/mention.js";
import { composerHint } from "../state/queue-mode.js";
import type { AgentRecord, ChannelRecord, McpPromptInfo } from "../types.js";
import { EDIT_LAST_EVENT } from "../use-chat-keys.js";
import { AttachArea, AttachButton, pastedFiles } from "./attach-controls.js";
import { Link } from "./link.js";
import { ModelNotice } from "./model-notice.js";
import { matchingPrompts, PromptArguments, PromptMenu, slashQuery, usePrompts } from "./prompt-picker.js";
import { useAttachments } from "./use-attachments.js";
import { useFileDrop } from "./use-file-drop.js";

const MAX_MESSAGE_BYTES = 32 * 1024;
const MAX_HEIGHT_PX = 240;

export interface ComposerProps {
  channel: ChannelRecord;
  agents: AgentRecord[];
  disabled?: boolean;
}

/**
 * While agents of the chat work: what a message sent now does (per the chat's queue mode), with a
 * link to change it for those who manage the chat.
 */
function WorkingHint({ channel }: { channel: ChannelRecord }) {
  const hint = useSelector((s) => {
    const chat = s.chat?.channelId === channel.id ? s.chat : undefined;
    if (!chat) return undefined;
    const working = activeRuns(chat).flatMap((view) =>
      view.run && view.run.parentRunId === undefined && view.run.channelId === channel.id ? [view.run] : [],
    );
    const nameOf = (id: string) => s.agents.find((a) => a.id === id)?.name ?? `@${id}`;
    return composerHint(channel, working, nameOf)?.text;
  });
  const manages = useSelector((s) => {
    if (s.auth.phase !== "ready") return false;
    const { user } = s.auth;
    return (
      user.role === "owner" ||
      user.role === "admin" ||
      (user.role !== "guest" && channel.createdBy === user.id)
    );
  });
  if (!hint) return null;
  return (
    <p class="composer-hint muted" role="status" data-testid="composer-hint">
      <span>{hint}</span>
      {manages && (
        <Link
          to={{ name: "channel_settings", channelId: channel.id }}
          class="composer-hint-link"
          testId="composer-hint-settings"
        >
          {t("composer.change")}
        </Link>
      )}
    </p>
  );
}

/**
 * In a group without a leader, before a message that mentions no agent is sent: whom to mention,
 * and (for those who manage the group) a link to pick a leader.
 */
function MentionNeeded({ channel, agentIds }: { channel: ChannelRecord; agentIds: string[] }) {
  const shown = agentIds.slice(0, 3).map((id) => `@${id}`);
  const who =
    agentIds.length > 1
      ? t("composer.orAll", { list: `${shown.join(", ")}${agentIds.length > 3 ? "…" : ""}` })
      : shown[0];
  return (
    <p class="composer-hint composer-warn" role="alert" data-testid="composer-mention-needed">
      <span>{t("composer.mentionNeeded", { who: who ?? "" })}</span>
      <Link
        to={{ name: "channel_settings", channelId: channel.id }}
        class="composer-hint-link"
        testId="composer-pick-leader"
      >
        {t("composer.pickLeader")}
      </Link>
    </p>
  );
}

/** As soon as an image is attached for an agent whose model cannot read images: why it will be refused. */
function ImageWarning({ blind }: { blind: AgentRecord[] }) {
  const first = blind[0];
  if (!first) return null;
  const who =
    blind.length === 1
      ? t("composer.modelOf", { name: first.name, model: first.modelInput?.model ?? "" })
      : t("composer.modelsOf", { names: blind.map((a) => a.name).join(", ") });
  return (
    <p class="composer-hint composer-warn" role="alert" data-testid="attach-image-warning">
      <span>{t("composer.cannotReadImages", { who })}</span>
    </p>
  );
}

/** A chat's name as the placeholder says it: a long one cut to fit one line on a phone. */
function shortName(name: string): string {
  const chars = [...name];
  return chars.length > 24 ? `${chars.slice(0, 23).join("").trimEnd()}…` : name;
}

/** The composer of a channel. */
export function Composer({ channel, agents, disabled }: ComposerProps) {
  const { api, store } = useServices();
  const report = useReportError();
  const [text, setText] = useState("");
  const [menu, setMenu] = useState<MentionMenu | null>(null);
  const [sending, setSending] = useState(false);
  const meId = useSelector((s) => (s.auth.phase === "ready" ? s.auth.user.id : ""));
  // Guests cannot attach files (the server refuses their uploads).
  const canAttach = useSelector((s) => s.auth.phase === "ready" && s.auth.user.role !== "guest");
  const attachments = useAttachments(channel.id);
  const dragging = useFileDrop(canAttach && !disabled, attachments.add);
  const imageAttached = attachments.files.some((f) => f.kind === "image" && f.status !== "error");
  const blind = imageAttached ? agentsBlindToImages(text, channel, agents) : [];
  // Shown as soon as the text would reach no agent (a note to the group is still allowed to go).
  const needed = text.trim() !== "" ? mentionNeeded(text, channel, meId) : undefined;
  const input = useRef<HTMLTextAreaElement>(null);
  const caretAfterRender = useRef<number | null>(null);
  const candidates = useMemo(() => mentionCandidates(channel, agents), [channel, agents]);
  const slash = slashQuery(text);
  const prompts = usePrompts(slash !== undefined);
  const [promptIndex, setPromptIndex] = useState(0);
  const [promptClosed, setPromptClosed] = useState(false);
  const [picked, setPicked] = useState<McpPromptInfo | undefined>();
  const promptItems = slash !== undefined && !promptClosed ? matchingPrompts(prompts, slash) : [];
  const promptMenu = promptItems.length > 0 && !picked;

  const takePromptText = (value: string) => {
    setPicked(undefined);
    setText(value);
    caretAfterRender.current = value.length;
    input.current?.focus();
  };
  const pickPrompt = (prompt: McpPromptInfo) => {
    setPromptIndex(0);
    if (prompt.arguments.length > 0) {
      setPicked(prompt);
      return;
    }
    api
      .getMcpPrompt(prompt.server, prompt.name, {})
      .then((r) => takePromptText(r.text))
      .catch(report);
  };

  useLayoutEffect(() => {
    const el = input.current;
    if (!el) return;
    el.style.height = "auto";
    // Empty, it is one line: a long placeholder (a group's name) does not grow it.
    if (el.value !== "") el.style.height = `${Math.min(el.scrollHeight, MAX_HEIGHT_PX)}px`;
    if (caretAfterRender.current !== null) {
      el.setSelectionRange(caretAfterRender.current, caretAfterRender.current);
      caretAfterRender.current = null;
    }
  });

  // Opening a chat puts the caret in its composer, as in any chat app (not on touch screens, where
  // focusing would pop the keyboard over the conversation one came to read).
  useEffect(() => {
    const touch = typeof matchMedia === "function" && matchMedia("(pointer: coarse)").matches;
    if (!touch) input.current?.focus();
  }, [channel.id]);

  const refreshMenu = (value: string, caret: number) =>
    setMenu((prev) => mentionMenuAt(value, caret, candidates, prev));

  const pick = (item: MentionCandidate) => {
    if (!menu) return;
    const next = applyMention(text, menu.query, item.id);
    setText(next.text);
    setMenu(null);
    caretAfterRender.current = next.caret;
    input.current?.focus();
  };

  const send = async () => {
    const body = text.trim();
    if (!body || sending || attachments.busy || attachments.failed) return;
    if (new TextEncoder().encode(body).length > MAX_MESSAGE_BYTES) {
      report(new Error(t("composer.tooLong")));
      return;
    }
    setSending(true);
    try {
      const result = await api.postMessage(channel.id, body, attachments.ids);
      store.dispatch({ type: "posted", channelId: channel.id, result });
      setText("");
      attachments.clear();
      setMenu(null);
    } catch (err) {
      report(err);
    } finally {
      setSending(false);
      input.current?.focus();
    }
  };

  const onKeyDown = (event: KeyboardEvent) => {
    if (isImeKey(event)) return;
    if (promptMenu) {
      const handled = ["ArrowDown", "ArrowUp", "Enter", "Tab", "Escape"].includes(event.key);
      if (handled) event.preventDefault();
      const count = promptItems.length;
      const index = Math.min(promptIndex, count - 1);
      if (event.key === "ArrowDown") setPromptIndex((index + 1) % count);
      else if (event.key === "ArrowUp") setPromptIndex((index - 1 + count) % count);
      else if (event.key === "Escape") setPromptClosed(true);
      else if (event.key === "Enter" || event.key === "Tab") {
        const prompt = promptItems[index];
        if (prompt) pickPrompt(prompt);
      }
      if (handled) return;
    }
    if (menu) {
      const result = mentionKey(menu, event.key);
      if (result.kind !== "ignore") event.preventDefault();
      if (result.kind === "move") setMenu({ ...menu, index: result.index });
      else if (result.kind === "pick") pick(result.item);
      else if (result.kind === "close") setMenu(null);
      if (result.kind !== "ignore") return;
    }
    if (event.key === "Enter" && !event.shiftKey) {
      event.preventDefault();
      void send();
    } else if (event.key === "ArrowUp" && text === "" && !event.shiftKey && !event.altKey) {
      // As in Slack: ↑ in an empty composer edits your last message.
      event.preventDefault();
      window.dispatchEvent(new CustomEvent(EDIT_LAST_EVENT, { detail: { channelId: channel.id } }));
    }
  };

  const onCaretMove = (event: KeyboardEvent | MouseEvent) => {
    if (event instanceof KeyboardEvent && !["ArrowLeft", "ArrowRight", "Home", "End"].includes(event.key))
      return;
    const el = event.currentTarget as HTMLTextAreaElement;
    refreshMenu(el.value, el.selectionStart);
  };

  const activeId = menu ? `mention-${menu.items[menu.index]?.id}` : undefined;
  return (
    <form
      class="composer"
      data-testid="composer"
      onSubmit={(e) => {
        e.preventDefault();
        void send();
      }}
    >
      <ModelNotice />
      <WorkingHint channel={channel} />
      {needed && <MentionNeeded channel={channel} agentIds={needed} />}
      <ImageWarning blind={blind} />
      <AttachArea dragging={dragging} attachments={attachments} hasText={text.trim() !== ""} />
      {promptMenu && (
        <PromptMenu
          items={promptItems}
          index={Math.min(promptIndex, promptItems.length - 1)}
          onPick={pickPrompt}
        />
      )}
      {picked && (
        <PromptArguments
          key={`${picked.server}:${picked.name}`}
          prompt={picked}
          onText={takePromptText}
          onClose={() => {
            setPicked(undefined);
            input.current?.focus();
          }}
        />
      )}
      {menu && (
        <div class="mention-menu" role="listbox" aria-label={t("keys.mention")} data-testid="mention-menu">
          {menu.items.map((item, index) => (
            <div
              key={item.id}
              id={`mention-${item.id}`}
              role="option"
              tabIndex={-1}
              aria-selected={index === menu.index}
              class={index === menu.index ? "selected" : ""}
              data-testid="mention-option"
              data-agent-id={item.id}
              onMouseDown={(e) => {
                // Keep focus (and the caret) in the textarea.
                e.preventDefault();
                pick(item);
              }}
            >
              <span aria-hidden="true">{item.emoji}</span> <strong>@{item.id}</strong>{" "}
              <span class="muted">{item.name}</span>
            </div>
          ))}
        </div>
      )}
      {canAttach && <AttachButton disabled={disabled} onFiles={attachments.add} />}
      <textarea
        ref={input}
        class="composer-input"
        rows={1}
        placeholder={t(channel.kind === "group" ? "composer.placeholderGroup" : "composer.placeholder", {
          name: shortName(channel.name),
        })}
        value={text}
        disabled={disabled}
        aria-autocomplete="list"
        aria-activedescendant={activeId}
        onInput={(e) => {
          const el = e.currentTarget;
          setText(el.value);
          setPromptClosed(false);
          refreshMenu(el.value, el.selectionStart);
        }}
        onKeyDown={onKeyDown}
        onPaste={(e) => {
          const files = canAttach ? pastedFiles(e.clipboardData) : [];
          if (files.length === 0) return;
          e.preventDefault();
          attachments.add(files);
        }}
        onKeyUp={onCaretMove}
        onClick={onCaretMove}
        onBlur={() => setMenu(null)}
        data-testid="composer-input"
      />
      <button
        type="submit"
        class="btn btn-primary composer-send"
        disabled={disabled || sending || !text.trim() || attachments.busy || attachments.failed}
        data-testid="composer-send"
      >
        {t("composer.send")}
      </button>
    </form>
  );
}
