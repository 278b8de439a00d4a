/**
 * The whole client state and its root reducer: who is logged in, agents, the channel list, the open
 * conversation, the live connection's status and transient notices. WebSocket frames are dispatched
 * as-is and fanned out here, so every effect of a frame is testable without a socket.
 */

import { budgetNoticeText } from "../budget-notice.js";
import { t } from "../i18n/index.js";
import type { AgentRecord, ModelStatus, ServerFrame, SessionUser } from "../types.js";
import type { WsStatus } from "../ws.js";
import {
  bumpUnread,
  type ChannelsAction,
  type ChannelsState,
  channelsReducer,
  emptyChannels,
  upsertChannel,
} from "./channels.js";
import { type ChatAction, type ChatState, chatReducer, emptyChat } from "./chat.js";

export type AuthState =
  | { phase: "loading" }
  | { phase: "login"; needsSetup: boolean; reason?: string }
  | { phase: "ready"; user: SessionUser };

export interface Notice {
  id: number;
  kind: "error" | "info";
  text: string;
}

export interface AppState {
  auth: AuthState;
  agents: AgentRecord[];
  agentsLoaded: boolean;
  channels: ChannelsState;
  chat: ChatState | undefined;
  connection: WsStatus;
  notices: Notice[];
  /** Id of the last notice, so notice ids come from the state and the reducer stays pure. */
  noticeSeq: number;
  /** Whether the default model can run (undefined until asked); the home page and composer warn when not. */
  modelStatus: ModelStatus | undefined;
}

export type AppAction =
  | { type: "auth"; auth: AuthState }
  | { type: "agents_loaded"; agents: AgentRecord[] }
  | { type: "agent_saved"; agent: AgentRecord }
  | { type: "agent_removed"; agentId: string }
  | ChannelsAction
  | { type: "open_channel"; channelId: string }
  | { type: "close_channel" }
  | ChatAction
  | { type: "frame"; frame: ServerFrame }
  | { type: "connection"; status: WsStatus }
  | { type: "notice"; kind: Notice["kind"]; text: string }
  | { type: "dismiss"; id: number }
  | { type: "model_status"; status: ModelStatus };

/** The state before anything is known. */
export function initialAppState(): AppState {
  return {
    auth: { phase: "loading" },
    agents: [],
    agentsLoaded: false,
    channels: emptyChannels,
    chat: undefined,
    connection: "idle",
    notices: [],
    noticeSeq: 0,
    modelStatus: undefined,
  };
}

const MAX_NOTICES = 4;

function userId(state: AppState): string | undefined {
  return state.auth.phase === "ready" ? state.auth.user.id : undefined;
}

function sortAgents(agents: AgentRecord[]): AgentRecord[] {
  return [...agents].sort((a, b) => a.name.localeCompare(b.name) || a.id.localeCompare(b.id));
}

function withChat(state: AppState, action: ChatAction): AppState {
  if (!state.chat) return state;
  const chat = chatReducer(state.chat, action);
  return chat === state.chat ? state : { ...state, chat };
}

/** What the notice says when the open chat is closed because its access was lost. */
export const ACCESS_LOST_TEXT = "state.accessLost";

function applyFrame(state: AppState, frame: ServerFrame): AppState {
  switch (frame.type) {
    case "pong":
      return state;
    case "reauthorized": {
      // The new role applies at once: navigation and pages follow `auth.user.role`.
      const auth = state.auth;
      if (auth.phase !== "ready" || auth.user.id !== frame.user.id || auth.user.role === frame.user.role)
        return state;
      return { ...state, auth: { ...auth, user: { ...auth.user, role: frame.user.role } } };
    }
    case "unsubscribed": {
      // The new rights do not cover this channel: it leaves the sidebar, and the chat if it is open.
      const next = {
        ...state,
        channels: channelsReducer(state.channels, { type: "channel_removed", channelId: frame.channelId }),
      };
      if (state.chat?.channelId !== frame.channelId) return next;
      return appReducer(
        { ...next, chat: undefined },
        { type: "notice", kind: "error", text: t(ACCESS_LOST_TEXT) },
      );
    }
    case "error":
      return appReducer(state, { type: "notice", kind: "error", text: frame.message });
    case "budget_notice":
      return appReducer(state, { type: "notice", kind: "info", text: budgetNoticeText(frame.notice, state) });
    case "backlog":
      return withChat(state, { type: "backlog", channelId: frame.channelId, messages: frame.messages });
    case "channel":
      return withChat(
        { ...state, channels: upsertChannel(state.channels, frame.channel) },
        { type: "event", event: frame },
      );
    case "message": {
      const open = state.chat?.channelId === frame.channelId;
      const own = frame.message.author.type === "user" && frame.message.author.id === userId(state);
      const next = open || own ? state : { ...state, channels: bumpUnread(state.channels, frame.channelId) };
      return withChat(next, { type: "event", event: frame });
    }
    case "run": {
      // A run that failed for want of a usable model: the notices (home page, composer) say so at once.
      const error = frame.run.status === "error" ? frame.run.error : undefined;
      const next =
        error?.includes("Settings → Providers") && state.modelStatus?.ready !== false
          ? { ...state, modelStatus: { ready: false, problem: null, message: error } }
          : state;
      return withChat(next, { type: "event", event: frame });
    }
    default:
      return withChat(state, { type: "event", event: frame });
  }
}

/** The root reducer. */
export function appReducer(state: AppState, action: AppAction): AppState {
  switch (action.type) {
    case "auth":
      // Logging out (or losing the session) forgets everything the previous user could see.
      return action.auth.phase === "ready"
        ? { ...state, auth: action.auth }
        : { ...initialAppState(), auth: action.auth, noticeSeq: state.noticeSeq };
    case "agents_loaded":
      return { ...state, agents: sortAgents(action.agents), agentsLoaded: true };
    case "agent_saved":
      return {
        ...state,
        agents: sortAgents([...state.agents.filter((a) => a.id !== action.agent.id), action.agent]),
      };
    case "agent_removed":
      return { ...state, agents: state.agents.filter((a) => a.id !== action.agentId) };
    case "channels_loaded":
    case "channel_saved":
    case "channel_removed":
    case "channel_read":
    case "channel_prefs":
      return { ...state, channels: channelsReducer(state.channels, action) };
    case "open_channel":
      if (state.chat?.channelId === action.channelId) return state;
      return {
        ...state,
        chat: emptyChat(action.channelId),
        channels: channelsReducer(state.channels, { type: "channel_read", channelId: action.channelId }),
      };
    case "close_channel":
      return state.chat ? { ...state, chat: undefined } : state;
    case "history":
    case "backlog":
    case "event":
    case "run":
    case "answer_runs":
    case "flow":
    case "posted":
      return withChat(state, action);
    case "frame":
      return applyFrame(state, action.frame);
    case "connection":
      return state.connection === action.status ? state : { ...state, connection: action.status };
    case "notice": {
      const notice: Notice = { id: state.noticeSeq + 1, kind: action.kind, text: action.text };
      return { ...state, noticeSeq: notice.id, notices: [...state.notices, notice].slice(-MAX_NOTICES) };
    }
    case "dismiss":
      return { ...state, notices: state.notices.filter((n) => n.id !== action.id) };
    case "model_status":
      return { ...state, modelStatus: action.status };
  }
}
