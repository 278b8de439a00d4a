/** The channel list with unread counts: pure updates for loads, live channel events and new messages. */
import type { ChannelPrefs, ChannelRecord, ChannelSummary } from "../types.js";

export interface ChannelsState {
  list: ChannelSummary[];
  loaded: boolean;
}

export type ChannelsAction =
  | { type: "channels_loaded"; list: ChannelSummary[] }
  | { type: "channel_saved"; channel: ChannelRecord }
  | { type: "channel_removed"; channelId: string }
  | { type: "channel_read"; channelId: string }
  | { type: "channel_prefs"; channelId: string; prefs: ChannelPrefs };

/** Nothing loaded yet. */
export const emptyChannels: ChannelsState = { list: [], loaded: false };

function byName(a: ChannelSummary, b: ChannelSummary): number {
  return a.name.localeCompare(b.name) || a.id.localeCompare(b.id);
}

/** Inserts or replaces a channel, keeping its unread count. */
export function upsertChannel(state: ChannelsState, channel: ChannelRecord): ChannelsState {
  const current = state.list.find((c) => c.id === channel.id);
  // A channel event carries no person's pin or archive: they stay as this list knew them.
  const next: ChannelSummary = {
    ...channel,
    unread: current?.unread ?? 0,
    ...(current?.pinnedAt !== undefined ? { pinnedAt: current.pinnedAt } : {}),
    ...(current?.archivedAt !== undefined ? { archivedAt: current.archivedAt } : {}),
  };
  const list = current ? state.list.map((c) => (c.id === channel.id ? next : c)) : [...state.list, next];
  return { ...state, list: list.sort(byName) };
}

/** One more unread message in a channel the user is not looking at. */
export function bumpUnread(state: ChannelsState, channelId: string): ChannelsState {
  if (!state.list.some((c) => c.id === channelId)) return state;
  return { ...state, list: state.list.map((c) => (c.id === channelId ? { ...c, unread: c.unread + 1 } : c)) };
}

/** The channel list reducer. */
export function channelsReducer(state: ChannelsState, action: ChannelsAction): ChannelsState {
  switch (action.type) {
    case "channels_loaded":
      return { list: [...action.list].sort(byName), loaded: true };
    case "channel_saved":
      return upsertChannel(state, action.channel);
    case "channel_removed":
      return { ...state, list: state.list.filter((c) => c.id !== action.channelId) };
    case "channel_prefs":
      return {
        ...state,
        list: state.list.map((c) => {
          if (c.id !== action.channelId) return c;
          const { pinnedAt: _pinned, archivedAt: _archived, ...rest } = c;
          return { ...rest, ...action.prefs };
        }),
      };
    case "channel_read":
      return {
        ...state,
        list: state.list.map((c) => (c.id === action.channelId && c.unread !== 0 ? { ...c, unread: 0 } : c)),
      };
  }
}

/** Direct chats and groups, each sorted by name. */
export function splitChannels(list: ChannelSummary[]): {
  direct: ChannelSummary[];
  groups: ChannelSummary[];
} {
  return { direct: list.filter((c) => c.kind === "direct"), groups: list.filter((c) => c.kind === "group") };
}

/** Total unread across channels (shown on the drawer button on phones). */
export function totalUnread(list: ChannelSummary[]): number {
  return list.reduce((sum, c) => sum + c.unread, 0);
}

/** The sidebar's sections: pinned chats first, then direct chats and groups, and the archived ones apart. */
export function sidebarSections(list: ChannelSummary[]): {
  pinned: ChannelSummary[];
  direct: ChannelSummary[];
  groups: ChannelSummary[];
  archived: ChannelSummary[];
} {
  const live = list.filter((c) => c.archivedAt === undefined);
  return {
    pinned: live
      .filter((c) => c.pinnedAt !== undefined)
      .sort((a, b) => (a.pinnedAt ?? 0) - (b.pinnedAt ?? 0)),
    direct: live.filter((c) => c.pinnedAt === undefined && c.kind === "direct"),
    groups: live.filter((c) => c.pinnedAt === undefined && c.kind === "group"),
    archived: list.filter((c) => c.archivedAt !== undefined),
  };
}

/** The chats the home page lists: not archived, pinned first, then the most recently active. */
export function recentChats(list: ChannelSummary[], limit: number): ChannelSummary[] {
  return list
    .filter((c) => c.archivedAt === undefined)
    .sort(
      (a, b) =>
        Number(b.pinnedAt !== undefined) - Number(a.pinnedAt !== undefined) || b.updatedAt - a.updatedAt,
    )
    .slice(0, limit);
}
