/** A channel's conversation: header, live flow panel, messages and the composer. */

import { useEffect, useRef } from "preact/hooks";
import { TotalsLine } from "../components/answer-usage.js";
import { ChatTitle, canManageChannel, useAutoTitle } from "../components/chat-title.js";
import { Composer } from "../components/composer.js";
import { FlowPanel } from "../components/flow-panel.js";
import { Link } from "../components/link.js";
import { MeetingBar, MeetingButtons } from "../components/meeting-bar.js";
import { MessageList } from "../components/message-list.js";
import { ProcessButton } from "../components/process-panel.js";
import { useSelector, useServices } from "../hooks.js";
import { t } from "../i18n/index.js";
import { currentFlow, lastMessageId } from "../state/chat.js";
import type { SessionUser } from "../types.js";
import { useStopOnEscape } from "../use-chat-keys.js";
import { useOpenChannel, usePageVisible } from "../use-open-channel.js";

const MARK_READ_DELAY_MS = 500;

/** Marks the channel read up to the newest message while the page is visible. */
function useMarkRead(channelId: string, lastId: number | undefined): void {
  const { api, store } = useServices();
  const visible = usePageVisible();
  const marked = useRef(0);
  useEffect(() => {
    if (!visible || lastId === undefined || lastId <= marked.current) return;
    const timer = setTimeout(() => {
      marked.current = lastId;
      store.dispatch({ type: "channel_read", channelId });
      api.markRead(channelId, lastId).catch(() => {
        marked.current = 0;
      });
    }, MARK_READ_DELAY_MS);
    return () => clearTimeout(timer);
  }, [api, store, channelId, lastId, visible]);
}

/** The chat page of one channel. */
export function ChatPage({ channelId, me }: { channelId: string; me: SessionUser }) {
  useOpenChannel(channelId);
  useStopOnEscape(channelId);
  const chat = useSelector((s) => s.chat);
  const channels = useSelector((s) => s.channels);
  const agents = useSelector((s) => s.agents);
  const channel = channels.list.find((c) => c.id === channelId);
  const open = chat?.channelId === channelId ? chat : undefined;
  useMarkRead(channelId, open ? lastMessageId(open) : undefined);
  useAutoTitle(channel, open, agents, me);

  if (!channel) {
    return (
      <section class="page" data-testid="chat-page">
        <p class="muted" data-testid="channel-missing">
          {channels.loaded ? t("chat.missing") : t("common.loading")}
        </p>
      </section>
    );
  }
  const flow = open ? currentFlow(open) : undefined;
  // A finished flow folds into a bar over the messages instead of keeping a column of its own.
  const flowEnded = flow?.status === "done" || flow?.status === "stopped";
  const agentCount = channel.members.filter((m) => m.type === "agent").length;
  const peopleCount = channel.members.filter((m) => m.type === "user").length;
  return (
    <section class="chat" data-testid="chat-page" data-channel-id={channel.id}>
      <header class="page-head chat-head">
        <div class="chat-title-wrap">
          <ChatTitle channel={channel} canRename={canManageChannel(channel, me)} />
          <span class="muted chat-sub">
            {channel.kind === "group"
              ? `${t("chat.agents", { count: agentCount })} · ${t("chat.people", { count: peopleCount })}`
              : t("chat.direct")}
            {channel.chain.length > 0 && ` · ${t("chat.chainOf", { count: channel.chain.length })}`}
          </span>
          {open?.answerRuns && <TotalsLine runs={Object.values(open.answerRuns)} testId="chat-totals" />}
        </div>
        <MeetingButtons channel={channel} agents={agents} />
        <ProcessButton channel={channel} />
        <Link
          to={{ name: "channel_settings", channelId: channel.id }}
          class="btn btn-small"
          testId="channel-settings-link"
        >
          ⚙ {t("channelSettings.heading")}
        </Link>
      </header>
      {channel.kind === "group" && <MeetingBar channelId={channel.id} live={open?.meeting} agents={agents} />}
      <div class="chat-body">
        <div class={`chat-main${flow ? (flowEnded ? " has-flow-bar" : " has-flow") : ""}`}>
          {open ? <MessageList chat={open} me={me} /> : <div class="message-scroller" />}
          {/* Beside the messages on wide screens; a sheet docked above the composer on phones. */}
          {/* Once finished, a bar above the messages. */}
          {flow && (
            <aside class="chat-flow" aria-label={t("chat.flow")} data-testid="chat-flow">
              <FlowPanel flow={flow} agents={agents} />
            </aside>
          )}
          <Composer channel={channel} agents={agents} />
        </div>
      </div>
    </section>
  );
}
