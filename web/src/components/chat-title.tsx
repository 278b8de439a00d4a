/**
 * A chat's title in its header, renamable in place (click ✎ or the title: Enter saves, Escape
 * cancels), and the naming of a new direct chat after its first exchange.
 */
import { useEffect, useRef, useState } from "preact/hooks";
import { useAction, useServices } from "../hooks.js";
import { t } from "../i18n/index.js";
import type { ChatState } from "../state/chat.js";
import type { AgentRecord, ChannelSummary, SessionUser } from "../types.js";

/** Whether a direct chat still has the name it got by default: its agent's, maybe numbered ("Writer 2"). */
export function hasDefaultName(channel: ChannelSummary, agents: AgentRecord[]): boolean {
  if (channel.kind !== "direct") return false;
  const agent = agents.find((a) => a.id === channel.leaderAgentId);
  if (!agent) return false;
  if (channel.name === agent.name) return true;
  const rest = channel.name.startsWith(`${agent.name} `) ? channel.name.slice(agent.name.length + 1) : "";
  return /^\d+$/.test(rest);
}

/** Chats asked for a title in this page's life (once each). */
const titled = new Set<string>();

/**
 * Once the first answer of a direct chat with its default name is in, asks the server to name it
 * (the agent's model, or the question's first words).
 */
export function useAutoTitle(
  channel: ChannelSummary | undefined,
  chat: ChatState | undefined,
  agents: AgentRecord[],
  me: SessionUser,
): void {
  const { api, store } = useServices();
  const id = channel?.id ?? "";
  const ready =
    channel !== undefined &&
    canManageChannel(channel, me) &&
    chat?.loaded === true &&
    !chat.hasOlder &&
    hasDefaultName(channel, agents) &&
    chat.messages.some((m) => m.author.type === "agent" && m.text.trim() !== "") &&
    chat.messages.filter((m) => m.author.type === "user").length <= 2;
  useEffect(() => {
    if (!ready || titled.has(id)) return;
    titled.add(id);
    api
      .titleChannel(id)
      .then((renamed) => store.dispatch({ type: "channel_saved", channel: renamed }))
      .catch(() => {
        // The default name stays; renaming by hand still works.
      });
  }, [ready, id, api, store]);
}

/** Who may rename a chat: its creator, owners and admins (not guests). */
export function canManageChannel(channel: ChannelSummary, me: SessionUser): boolean {
  return me.role === "owner" || me.role === "admin" || (me.role !== "guest" && channel.createdBy === me.id);
}

/** The title, with rename in place for those who may. */
export function ChatTitle({ channel, canRename }: { channel: ChannelSummary; canRename: boolean }) {
  const { api, store } = useServices();
  const [draft, setDraft] = useState<string | undefined>(undefined);
  const input = useRef<HTMLInputElement>(null);
  useEffect(() => {
    if (draft !== undefined) input.current?.select();
  }, [draft !== undefined]);
  const [save, saving] = useAction(async () => {
    const name = draft?.trim() ?? "";
    if (name === "" || name === channel.name) {
      setDraft(undefined);
      return;
    }
    const renamed = await api.updateChannel(channel.id, { name });
    store.dispatch({ type: "channel_saved", channel: renamed });
    setDraft(undefined);
  });
  const prefix = channel.kind === "group" ? "# " : "";
  if (draft !== undefined) {
    return (
      <form
        class="chat-rename"
        onSubmit={(e) => {
          e.preventDefault();
          void save();
        }}
      >
        <input
          ref={input}
          class="chat-rename-input"
          value={draft}
          maxLength={100}
          aria-label={t("chatTitle.name")}
          disabled={saving}
          onInput={(e) => setDraft(e.currentTarget.value)}
          onKeyDown={(e) => {
            if (e.key === "Escape") {
              e.preventDefault();
              setDraft(undefined);
            }
          }}
          onBlur={() => void save()}
          data-testid="chat-rename-input"
        />
      </form>
    );
  }
  return (
    <h2 class="chat-title" data-testid="chat-title">
      {canRename ? (
        <button
          type="button"
          class="chat-title-button"
          title={t("chatTitle.rename")}
          onClick={() => setDraft(channel.name)}
          data-testid="chat-rename"
        >
          {prefix}
          {channel.name}
        </button>
      ) : (
        <>
          {prefix}
          {channel.name}
        </>
      )}
    </h2>
  );
}
