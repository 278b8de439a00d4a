/** One search hit: where it was said, by whom and when, and an excerpt with the matches marked. */
import { formatTime } from "../format.js";
import { t } from "../i18n/index.js";
import { routePath } from "../state/route.js";
import type { AgentRecord, ChannelMessage, ChannelSummary, SessionUser } from "../types.js";
import { searchExcerpt } from "./search-highlight.js";
import { channelIcon } from "./sidebar.js";

export interface SearchResultItemProps {
  message: ChannelMessage;
  query: string;
  channel: ChannelSummary | undefined;
  agents: AgentRecord[];
  me: SessionUser;
  onOpen: (message: ChannelMessage) => void;
}

function authorOf(message: ChannelMessage, agents: AgentRecord[], me: SessionUser): [string, string] {
  const { author } = message;
  if (author.type === "agent") {
    const agent = agents.find((a) => a.id === author.id);
    return [agent?.emoji ?? "🤖", agent?.name ?? author.id];
  }
  if (author.type === "system") return ["ℹ️", t("search.system")];
  return ["🙂", author.id === me.id ? t("search.you") : author.id];
}

/** A result row; a plain click opens the channel at the message, other clicks act as a link. */
export function SearchResultItem({ message, query, channel, agents, me, onOpen }: SearchResultItemProps) {
  const [avatar, author] = authorOf(message, agents, me);
  const onClick = (event: MouseEvent) => {
    if (event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
    event.preventDefault();
    onOpen(message);
  };
  const channelName = channel?.name ?? message.channelId;
  return (
    <li>
      <a
        class="search-result"
        href={routePath({ name: "channel", channelId: message.channelId })}
        onClick={onClick}
        data-testid="search-result"
        data-message-id={message.id}
        data-channel-id={message.channelId}
      >
        <span class="search-result-head">
          <span class="search-result-channel" data-testid="search-result-channel">
            <span class="channel-icon" aria-hidden="true">
              {channel ? channelIcon(channel, agents) : "#"}
            </span>
            {channelName}
          </span>
          <span class="search-result-author">
            <span aria-hidden="true">{avatar}</span> <span data-testid="search-result-author">{author}</span>
          </span>
          <time class="muted search-result-time" dateTime={new Date(message.createdAt).toISOString()}>
            {formatTime(message.createdAt)}
          </time>
        </span>
        <span class="search-result-text" data-testid="search-result-text">
          {searchExcerpt(message.text, query).map((part, i) => {
            const inner = part.hit ? <mark data-testid="search-hit">{part.text}</mark> : part.text;
            if (part.style === "strong") return <strong key={i}>{inner}</strong>;
            if (part.style === "em") return <em key={i}>{inner}</em>;
            if (part.style === "code") return <code key={i}>{inner}</code>;
            return part.hit ? (
              <mark key={i} data-testid="search-hit">
                {part.text}
              </mark>
            ) : (
              part.text
            );
          })}
        </span>
      </a>
    </li>
  );
}
