/**
 * The scrolling conversation: stored messages in reading order, live run bubbles after their trigger. Stays pinned to the bottom
 * while the reader is there, and keeps the reading position when older messages are prepended.
 */
import { useEffect, useLayoutEffect, useMemo, useRef } from "preact/hooks";
import { useAction, useSelector, useServices } from "../hooks.js";
import { t } from "../i18n/index.js";
import { type ChatState, chatItems, firstMessageId, lastOwnMessageId } from "../state/chat.js";
import type { SessionUser } from "../types.js";
import { MessageItem, RunBubble } from "./message-item.js";
import { useChannelPeople } from "./people.js";

export const PAGE_SIZE = 50;
const NEAR_BOTTOM_PX = 80;

/** The message list of the open channel. */
export function MessageList({ chat, me }: { chat: ChatState; me: SessionUser }) {
  const { api, store } = useServices();
  const agentList = useSelector((s) => s.agents);
  const agents = useMemo(() => new Map(agentList.map((a) => [a.id, a])), [agentList]);
  const items = useMemo(() => chatItems(chat), [chat]);
  const asks = useMemo(() => Object.values(chat.elicitations ?? {}), [chat.elicitations]);
  const editableId = lastOwnMessageId(chat, me.id);
  const channel = useSelector((s) => s.channels.list.find((c) => c.id === chat.channelId));
  const people = useChannelPeople(channel);
  const scroller = useRef<HTMLDivElement>(null);
  const pinned = useRef(true);
  const anchor = useRef<{ height: number; top: number } | null>(null);

  const [loadOlder, loadingOlder] = useAction(async () => {
    const before = firstMessageId(chat);
    const el = scroller.current;
    const page = await api.listMessages(chat.channelId, { ...(before ? { before } : {}), limit: PAGE_SIZE });
    if (el) anchor.current = { height: el.scrollHeight, top: el.scrollTop };
    store.dispatch({
      type: "history",
      channelId: chat.channelId,
      messages: page,
      hasOlder: page.length >= PAGE_SIZE,
    });
  });

  // Sending a message brings the view down to it (and to what follows it), wherever the reader was.
  const ownLast = useRef(editableId);
  if (editableId !== undefined && editableId > (ownLast.current ?? 0)) pinned.current = true;
  ownLast.current = editableId;

  // What grows after it rendered (a diagram, an image, an app) keeps a pinned view at the bottom.
  const resizes = useRef<ResizeObserver | null>(null);
  useEffect(() => {
    const el = scroller.current;
    if (!el || typeof ResizeObserver !== "function") return;
    const observer = new ResizeObserver(() => {
      if (pinned.current && !anchor.current) el.scrollTop = el.scrollHeight;
    });
    resizes.current = observer;
    return () => {
      observer.disconnect();
      resizes.current = null;
    };
  }, []);

  useLayoutEffect(() => {
    const el = scroller.current;
    if (!el) return;
    for (const child of el.children) resizes.current?.observe(child);
    if (anchor.current) {
      el.scrollTop = el.scrollHeight - anchor.current.height + anchor.current.top;
      anchor.current = null;
    } else if (pinned.current) {
      el.scrollTop = el.scrollHeight;
    }
  });

  const onScroll = () => {
    const el = scroller.current;
    if (el) pinned.current = el.scrollHeight - el.scrollTop - el.clientHeight < NEAR_BOTTOM_PX;
  };

  return (
    <div class="message-scroller" ref={scroller} onScroll={onScroll} data-testid="message-list">
      {chat.hasOlder && (
        <button
          type="button"
          class="btn btn-small load-older"
          onClick={() => void loadOlder()}
          disabled={loadingOlder}
          data-testid="load-older"
        >
          {loadingOlder ? t("common.loading") : t("messages.loadEarlier")}
        </button>
      )}
      {chat.loaded && items.length === 0 && (
        <p class="empty-chat muted" data-testid="empty-chat">
          {t("messages.emptyBefore")} <kbd>@</kbd> {t("messages.emptyAfter")}
        </p>
      )}
      {!chat.loaded && <p class="muted empty-chat">{t("messages.loading")}</p>}
      {items.map((item) =>
        item.kind === "message" ? (
          <MessageItem
            key={item.key}
            versions={item.versions}
            runs={chat.runs}
            agents={agents}
            me={me}
            people={people}
            editable={item.versions.some((m) => m.id === editableId)}
            queued={chat.queued}
            answerRuns={chat.answerRuns}
          />
        ) : (
          <RunBubble
            key={item.key}
            view={item.view}
            runs={chat.runs}
            agents={agents}
            asks={asks.filter((e) => (e.shownIn ?? e.runId) === item.view.id)}
          />
        ),
      )}
    </div>
  );
}
