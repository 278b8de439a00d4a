/**
 * Connectors bring external chat platforms (Telegram, a generic signed webhook, Feishu/Lark, DingTalk,
 * WeCom) into the
 * team: a message from an external chat becomes a message in a Dimsum direct channel with the
 * connector's agent, and the agent's answer goes back to that chat.
 *
 * Identity mapping (the decision, recorded here): by default every external user becomes
 * a Dimsum account with the `guest` role (a random, never-shown password, so it cannot sign in), one
 * per connector and external user; a connector may instead post everything as one configured user
 * (`userMode: "user"`). Every external chat gets one direct channel with the connector's agent, created
 * on its first message by the connector's service identity `connector:<id>` (which then leaves it);
 * people of a group chat join that channel as they speak.
 */
import type { Actor } from "../team/types.js";

export type ConnectorType = "telegram" | "webhook" | "feishu" | "dingtalk" | "wecom";

export const CONNECTOR_TYPES: readonly ConnectorType[] = [
  "telegram",
  "webhook",
  "feishu",
  "dingtalk",
  "wecom",
];

/** Plain settings of a connector (per type; validated by the type's kind). */
export type ConnectorSettings = Record<string, string | number | boolean>;

/** Secrets of a connector, by name; stored sealed and never returned. */
export type ConnectorSecrets = Record<string, string>;

export interface ConnectorRecord {
  id: string;
  type: ConnectorType;
  name: string;
  /** The agent answering every chat of this connector. */
  agentId: string;
  settings: ConnectorSettings;
  /** `guest`: one guest account per external user; `user`: everything is posted as `userId`. */
  userMode: "guest" | "user";
  userId?: string;
  /** Started with the server (set by start, cleared by stop). */
  enabled: boolean;
  createdBy: string;
  createdAt: number;
  updatedAt: number;
}

/**
 * `failing`: started, but the platform's calls fail (the error says how); `error`: it could not start
 * or its delivery stopped.
 */
export type ConnectorState = "stopped" | "starting" | "running" | "failing" | "error";

export interface ConnectorStatus {
  state: ConnectorState;
  /** The last failure (start, polling, delivery), cleared by a later success. */
  error?: string;
  lastInboundAt?: number;
  lastDeliveryAt?: number;
  /** Inbound requests refused for a bad signature or token since the server started. */
  rejected: number;
  /** Replies waiting in the outbox (also while stopped). */
  pending: number;
  /** Replies the platform refused for good (kept for inspection). */
  failed: number;
}

/** What the API and UI see: secrets only as "set" flags and short previews. */
export interface ConnectorView extends ConnectorRecord {
  secrets: Record<string, { set: boolean; preview?: string }>;
  status: ConnectorStatus;
  /** Path of the public inbound endpoint (webhook, Telegram webhook mode, Feishu callback). */
  inboundPath: string;
}

export interface ConnectorInput {
  type: ConnectorType;
  name: string;
  agentId: string;
  settings?: ConnectorSettings;
  secrets?: ConnectorSecrets;
  userMode?: "guest" | "user";
  userId?: string;
}

/** A change: settings are merged; a secret given replaces the stored one, `""` removes it. */
export interface ConnectorPatch {
  name?: string;
  agentId?: string;
  settings?: ConnectorSettings;
  secrets?: ConnectorSecrets;
  userMode?: "guest" | "user";
  userId?: string | null;
}

/**
 * A file an external chat message carries (a photo, a document), not yet downloaded: the inbound
 * pipeline checks it against the attachment limits, downloads it and stores it with the message.
 */
export interface InboundFile {
  /** The name it came with (made up for photos, which have none). */
  name: string;
  /** Its size in bytes when the platform says: a file over every limit is refused without downloading. */
  size?: number;
  /**
   * Downloads it, reading at most `maxBytes` (throws `FileTooLargeError` past that). Throws a
   * DeliveryError when the platform fails: a retryable one means the message should be taken again later.
   */
  download(maxBytes: number, signal: AbortSignal): Promise<Buffer>;
}

/** One message from an external chat, in platform-neutral terms. */
export interface InboundMessage {
  /** De-duplication key (Telegram update_id, Feishu event_id, the webhook's id); absent: no de-dup. */
  dedupeKey?: string;
  /** `group`: several people share the chat (a `/link` code is not taken there). */
  chat: { id: string; name?: string; group?: boolean };
  user: { id: string; name?: string };
  /** The text (a photo's caption); may be empty when the message carries files. */
  text: string;
  /** Files sent with the message, in order. */
  files?: InboundFile[];
  /**
   * A voice message the platform gave no text of: transcribed into the text when a speech-to-text
   * endpoint is configured (see voice-transcripts.ts), else said unread.
   */
  voice?: InboundFile;
  /** What the message carried that Dimsum does not read (e.g. "a voice message"): said in the chat. */
  unsupported?: string[];
}

/** A button of an approval prompt: approve once, approve from now on in this chat, or reject. */
export type ApprovalChoice = "approve" | "always" | "reject";

/**
 * A tool call waiting for a person's approval, as a chat shows it: with buttons while it waits, or,
 * with `decision`, settled (the buttons removed). `token` names its ticket (see `approval-buttons.ts`);
 * buttons carry only the token and the choice.
 */
export interface ApprovalPrompt {
  token: string;
  tool: string;
  /** What will happen (the command line for the shell). */
  summary: string;
  reason: string;
  decision?: {
    state: "approved" | "rejected" | "expired";
    /** Who decided, as the chat knows them. */
    by?: string;
    always?: boolean;
    note?: string;
  };
}

/** A button of a flow's progress card: pause, resume, skip or retry the step it is on. */
export type FlowChoice = "pause" | "resume" | "skip" | "retry";

/** What a card button does: decide an approval, or act on a flow. */
export type CardChoice = ApprovalChoice | FlowChoice;

/**
 * A collaboration flow's progress as one card updated in place (see `flow-cards.ts`): the title says
 * step k of n and who works on it, the lines list the steps, and `buttons` act on the flow while it
 * can take them (none once it ended). `token` names its ticket; buttons carry only it and the choice.
 */
export interface FlowCard {
  token: string;
  title: string;
  lines: string[];
  buttons: FlowChoice[];
  /** The flow ended (done or stopped): this is the card's last state. */
  ended: boolean;
}

/** A press of an approval prompt's or a flow card's button, in platform-neutral terms (not yet trusted). */
export interface ApprovalPress {
  token: string;
  choice: CardChoice;
  /** The external chat the pressed message is in, when the platform says. */
  chatId?: string;
  /** The external user who pressed. */
  user: { id: string; name?: string };
}

/** What came of a press: a short notice for the presser, and the prompt to show when it changed. */
export interface ApprovalPressResult {
  ok: boolean;
  notice: string;
  prompt?: ApprovalPrompt;
}

/** One reply to deliver; kept in the outbox until the platform accepted it. */
export interface OutboundMessage {
  chatId: string;
  /** The text (for an approval prompt: its plain-text form, for platforms that show no buttons). */
  text: string;
  /**
   * Who speaks, in a chat bound to a group of several agents (or the person a web message is from):
   * shown as a Feishu card header, a DingTalk/WeCom markdown title, a bold Telegram prefix.
   */
  speaker?: { name: string; emoji?: string };
  /** Send as an approval prompt with buttons (drivers of kinds with `approvals`). */
  approval?: ApprovalPrompt;
  /** Send as a flow's progress card (drivers with `flowCards`), later updated in place. */
  flow?: FlowCard;
  /** Replace this platform message (a streamed preview) instead of sending a new one. */
  editMessageId?: string;
  /** Part number and count when an answer was split. */
  part: number;
  parts: number;
  runId?: string;
  /** Stable per outbox row, for platforms that de-duplicate retried sends (Feishu's `uuid`). */
  deliveryId?: string;
  /** Send a file an agent shared in the chat (`text` is the line for platforms that take no files). */
  file?: OutboundFileRef;
}

/** A file of a chat's attachments to send out (its bytes are read when it is sent). */
export interface OutboundFileRef {
  channelId: string;
  id: string;
  name: string;
  mimeType: string;
  kind: "image" | "pdf" | "text";
}

/** A file to post, with its bytes. */
export interface OutboundFile {
  name: string;
  mimeType: string;
  kind: "image" | "pdf" | "text";
  data: Buffer;
}

/** The raw inbound HTTP request as the server received it (the body unparsed, for signatures). */
export interface InboundRequest {
  /** GET only for platforms that verify the URL that way (WeCom); absent means POST. */
  method?: "GET" | "POST";
  headers: Record<string, string | undefined>;
  /** The query string's parameters (WeCom signs with them). */
  query?: Record<string, string>;
  body: string;
}

/** What a driver made of an inbound request. Verification happens before anything is stored. */
export type InboundOutcome =
  | { kind: "rejected"; status: 400 | 401 | 403; reason: string }
  /** Answer directly (Feishu's url_verification challenge), nothing to process; a string is sent as text. */
  | { kind: "reply"; body: unknown }
  | { kind: "messages"; messages: InboundMessage[]; body?: unknown }
  /**
   * A button press on an approval prompt: the manager decides it, then `reply` acknowledges it on the
   * platform and returns the body to answer the request with.
   */
  | { kind: "press"; press: ApprovalPress; reply(result: ApprovalPressResult): Promise<unknown> };

/** A failed platform call: `retryable` ones (5xx, 429, network) are retried from the outbox. */
export class DeliveryError extends Error {
  readonly retryable: boolean;
  readonly retryAfterMs: number | undefined;

  constructor(message: string, options: { retryable: boolean; retryAfterMs?: number; cause?: unknown }) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = "DeliveryError";
    this.retryable = options.retryable;
    this.retryAfterMs = options.retryAfterMs;
  }
}

/** Where connectors write what operators should see (the server's log). */
export interface ConnectorLog {
  info(message: string): void;
  warn(message: string): void;
  error(message: string, err?: unknown): void;
}

/** Per-connector persistent key/value state (e.g. Telegram's update offset). */
export interface DriverState {
  get(key: string): Promise<string | undefined>;
  /**
   * Stores a value. With `fence` (a poll lease token) only while that token is the connector's
   * current lease: false when a newer holder took over, so a superseded poller cannot move state.
   */
  set(key: string, value: string, fence?: number): Promise<boolean>;
  /** Removes a key (nothing when it is absent). */
  delete(key: string): Promise<void>;
  /** Every entry whose key starts with `prefix`. */
  list(prefix: string): Promise<Array<{ key: string; value: string }>>;
}

/** Single-consumer work's lease across instances (see `PollLease`). */
export interface DriverLease {
  /** True once this instance may do the work (renewing its lease); false when `signal` aborted first. */
  hold(signal: AbortSignal): Promise<boolean>;
  /** Gives the work up so another instance takes over. */
  release(): Promise<void>;
  /** The fencing token while held. */
  readonly token: number | undefined;
}

/** What a running driver gets from the manager. */
export interface DriverContext {
  connector: ConnectorRecord;
  settings: ConnectorSettings;
  secrets: ConnectorSecrets;
  state: DriverState;
  /** Held while polling, so one instance of several sharing the database polls at a time. */
  lease?: DriverLease;
  log: ConnectorLog;
  /** Hands messages the driver pulled itself (polling) to the pipeline; resolves once stored. */
  receive(messages: InboundMessage[]): Promise<void>;
  /** Decides a button press the driver pulled itself (polling); never rejects. */
  press(press: ApprovalPress): Promise<ApprovalPressResult>;
  /** Reports a background failure (shown as the connector's error) or its recovery (`undefined`). */
  report(error: string | undefined): void;
  /** Delay before retry number `attempt` (1-based) of background work such as polling. */
  backoff(attempt: number): number;
  now(): number;
}

/** The size limit of one platform message. */
export interface MessageLimit {
  max: number;
  /** `utf16`: JavaScript string length (Telegram counts UTF-16 units); `utf8`: bytes. */
  unit: "utf16" | "utf8";
}

/** One platform's implementation. */
export interface ConnectorDriver {
  /** Starts polling / registers the webhook; rejects when the platform refuses (bad token). */
  start(): Promise<void>;
  /** Stops background work. `final` is true for a user's stop (unregister), false at shutdown. */
  stop(final: boolean): Promise<void>;
  /** Verifies and parses an inbound request; stores nothing. Absent for drivers without one. */
  inbound?(request: InboundRequest): Promise<InboundOutcome>;
  /** Delivers one reply; returns the platform's message id; throws DeliveryError. */
  send(message: OutboundMessage, signal?: AbortSignal): Promise<string | undefined>;
  /**
   * Posts the file of `message` (its bytes in `file`) as the platform's file message, with the
   * speaker's label where the platform shows one; returns its message id; throws DeliveryError.
   * Absent: the file is named in a text line instead.
   */
  sendFile?(message: OutboundMessage, file: OutboundFile, signal?: AbortSignal): Promise<string | undefined>;
  /** Streaming previews where the platform can edit messages. */
  preview?: {
    send(chatId: string, text: string): Promise<string>;
    edit(chatId: string, messageId: string, text: string): Promise<void>;
  };
  /** Approval prompts (kinds with `approvals`): shows a sent prompt settled, without its buttons. */
  approvals?: {
    update(chatId: string, messageId: string, prompt: ApprovalPrompt, signal?: AbortSignal): Promise<void>;
  };
  /**
   * Flow progress cards (kinds with `approvals`): updates a sent card in place. A platform that can
   * update a card only once (WeCom) updates it when the flow ended and skips the rest.
   */
  flowCards?: {
    update(chatId: string, messageId: string, card: FlowCard, signal?: AbortSignal): Promise<void>;
  };
  /** Checks the credentials against the platform; resolves with a short description. */
  test(): Promise<string>;
}

/** One secret of a connector type. */
export interface SecretSpec {
  name: string;
  /** How people know it (the platform console's name for it), used in messages. */
  label: string;
  required: boolean;
  /** Required only with these settings (e.g. Feishu's Encrypt Key in webhook mode). */
  requiredWhen?: (settings: ConnectorSettings) => boolean;
  /** What a valid value looks like, and the rule for it. */
  pattern?: RegExp;
  rule?: string;
}

/** A connector type: its settings and secrets, validated, and how to build its driver. */
export interface ConnectorKind {
  type: ConnectorType;
  label: string;
  /** Secrets this type uses; `required` ones must be set before it can start. */
  secrets: ReadonlyArray<SecretSpec>;
  /** Validates settings (throws `invalid` with the cause); returns them with defaults applied. */
  parseSettings(settings: ConnectorSettings): ConnectorSettings;
  /** Settings a new connector of this type starts with, under what it was given (not for stored ones). */
  createDefaults?: ConnectorSettings;
  /** The size of one platform message, for splitting answers. */
  limit(settings: ConnectorSettings): MessageLimit;
  /** Whether answers are streamed into an edited preview message (needs `driver.preview`). */
  streams(settings: ConnectorSettings): boolean;
  /**
   * Whether the chats get cards with buttons (per settings where that depends on them, as DingTalk's
   * card template): tool calls waiting for approval are asked with buttons (the driver sends
   * `approval` messages as prompts, reports presses and implements `driver.approvals`), and a flow's
   * progress is one card (`flow` messages, updated with `driver.flowCards`).
   */
  approvals?: boolean | ((settings: ConnectorSettings) => boolean);
  /** Whether its inbound endpoint also takes a signed GET (WeCom's URL verification). */
  inboundGet?: boolean;
  /** Fills secrets the connector can make itself (e.g. a webhook secret token), at creation. */
  generateSecrets?(): ConnectorSecrets;
  create(context: DriverContext): ConnectorDriver;
}

/** The accounts connectors map external users to (the server's user store, adapted). */
export interface ConnectorUsers {
  get(userId: string): Promise<{ id: string; username: string; role: Actor["role"] } | undefined>;
  /** Creates a guest account that cannot sign in; throws a `conflict` error when the name is taken. */
  createGuest(username: string): Promise<{ id: string; username: string }>;
}
