/**
 * The team's repositories, one per aggregate: agents, channels (with members and chain), messages
 * (with search and read markers), runs, flows and a few settings. Each is implemented once over
 * store/sql-database.ts (team-repositories.ts), with the SQL the dialects differ on side by side;
 * PostgreSQL adds run leases and jobs (`./postgres`). One contract suite
 * (test/contracts/team-store.test.ts) holds both databases to the same behaviour.
 */
import type { SessionRef } from "../../store/types.js";
import type {
  AgentRecord,
  ApprovalGrant,
  ChannelMember,
  ChannelMessage,
  ChannelRecord,
  FlowRecord,
  FlowStatus,
  MessagePart,
  TeamRun,
} from "../types.js";

export interface AgentRepository {
  /** Every agent, oldest first. */
  list(): Promise<AgentRecord[]>;
  get(id: string): Promise<AgentRecord | undefined>;
  /** Inserts a new agent; a duplicate id is refused (the caller checks first). */
  insert(agent: AgentRecord): Promise<AgentRecord>;
  update(agent: AgentRecord): Promise<AgentRecord>;
  delete(id: string): Promise<boolean>;
}

export interface ChannelRepository {
  get(id: string): Promise<ChannelRecord | undefined>;
  /** `get(id)` and `AgentRepository.list()` in one read (what a run reads as it starts). */
  getWithAgents(id: string): Promise<{ channel: ChannelRecord | undefined; agents: AgentRecord[] }>;
  /** Every channel, oldest first. */
  list(): Promise<ChannelRecord[]>;
  /** Every (channel, person) membership, for the in-memory visibility index. */
  userMemberships(): Promise<Array<{ channelId: string; userId: string }>>;
  /** Inserts the channel and its members in one transaction. */
  insert(channel: ChannelRecord): Promise<ChannelRecord>;
  /** Saves name, leader, chain and queue mode. */
  update(channel: ChannelRecord): Promise<ChannelRecord>;
  /** Deletes the channel; members, messages, markers and flows go with it. */
  delete(id: string): Promise<boolean>;
  /** Adds a member (nothing when already one). */
  addMember(channelId: string, member: ChannelMember, at: number): Promise<void>;
  removeMember(channelId: string, member: ChannelMember): Promise<boolean>;
  /** One person's pinned and archived chats, by channel id (channels with neither are left out). */
  prefsOf(userId: string): Promise<Map<string, ChannelPrefs>>;
  /** Saves one person's pin and archive of a chat (both unset removes the row). */
  setPrefs(channelId: string, userId: string, prefs: ChannelPrefs): Promise<void>;
}

/** When a person pinned or archived a chat (epoch ms), if they did. */
export interface ChannelPrefs {
  pinnedAt?: number;
  archivedAt?: number;
}

/** A message to store; without `parts` its text is its one part. */
export type NewMessage = Omit<ChannelMessage, "id" | "parts"> & { parts?: MessagePart[] };

export interface SearchScope {
  channelId?: string;
  /** Only channels this person is a member of. */
  memberUserId?: string;
}

export interface ListOptions {
  before?: number;
  after?: number;
  limit: number;
}

export interface MessageRepository {
  /**
   * Stores a message and its search terms in one transaction; ids grow with every insert. With
   * `readBy`, that reader's marker moves to the new message in the same transaction (as `setMarker`
   * at the message's `createdAt`): a person's own post is read.
   */
  insert(message: NewMessage, options?: { readBy?: string }): Promise<ChannelMessage>;
  get(id: number): Promise<ChannelMessage | undefined>;
  /**
   * Replaces a message's text and parts (default: just that text) and its search terms; `at` is when
   * it was edited, or null for an update that is no edit (a run's answer going on).
   */
  edit(
    id: number,
    text: string,
    at: number | null,
    parts?: MessagePart[],
  ): Promise<ChannelMessage | undefined>;
  /** The (last) message a run posted. */
  byRun(runId: string): Promise<ChannelMessage | undefined>;
  /** The answers that reply to a message (every version), oldest first. */
  replies(id: number): Promise<ChannelMessage[]>;
  /** A page of a channel's messages, oldest first. */
  list(channelId: string, options: ListOptions): Promise<ChannelMessage[]>;
  /** Up to `limit` newest messages with `after < id <= upto`, oldest first. */
  range(channelId: string, after: number, upto: number, limit: number): Promise<ChannelMessage[]>;
  delete(id: number): Promise<boolean>;
  /**
   * Messages containing every term of `query` (words by prefix, CJK by bigram; see search-text.ts),
   * best first, within one channel and/or the channels a person belongs to (neither: every channel).
   */
  search(query: string, scope: SearchScope, limit: number): Promise<ChannelMessage[]>;
  /** The last message id a reader (a person, or `agent:<id>`) has seen in a channel; 0 if none. */
  marker(readerId: string, channelId: string): Promise<number>;
  /** Moves a reader's marker forward (never back). */
  setMarker(readerId: string, channelId: string, messageId: number, at: number): Promise<void>;
  /**
   * `setMarker(readerId, channelId, upto, at)` and `range(channelId, previous, upto, limit)` in one
   * step: what the reader had not seen up to `upto`, oldest first, and `previous`, its marker as it
   * was (0 if none).
   */
  unseen(
    readerId: string,
    channelId: string,
    upto: number,
    at: number,
    limit: number,
  ): Promise<{ previous: number; messages: ChannelMessage[] }>;
  /** Per channel, the messages after the person's marker, not counting their own. */
  unread(userId: string, channelIds: readonly string[]): Promise<Map<string, number>>;
}

/** A run with what the facade needs besides the public record. */
export interface StoredRun {
  run: TeamRun;
  /** The agent session the run's turn was stored in (for its trace). */
  ref: SessionRef;
  /** The person whose message or request started it. */
  requestedBy: string;
}

export interface RunRepository {
  insert(stored: StoredRun): Promise<void>;
  /** Saves status, error, usage and times. */
  update(run: TeamRun): Promise<void>;
  get(id: string): Promise<StoredRun | undefined>;
  /** Runs still queued or running: after a restart, those whose process died. */
  listOpen(): Promise<StoredRun[]>;
  /** Runs waiting for approvals, oldest first (optionally only those of one agent session). */
  listWaiting(ref?: SessionRef): Promise<StoredRun[]>;
  /**
   * Moves a waiting run to `running` for one resumer: true for the caller that moved it, false when
   * it was not waiting (another answer or instance resumed it first).
   */
  claimWaiting(runId: string, startedAt: number): Promise<boolean>;
  deleteByChannel(channelId: string): Promise<void>;
  /**
   * Ended runs that used tokens, started at or after `since`, oldest first: of one channel, or of the
   * runs one person started (`requestedBy`), or all.
   */
  listUsage(filter: RunUsageFilter): Promise<StoredRun[]>;
}

export interface RunUsageFilter {
  since: number;
  channelId?: string;
  requestedBy?: string;
}

/**
 * Which instance runs a run (several instances on one PostgreSQL database): a lease the owner renews,
 * and a fencing token that grows with every new owner, so writes of a superseded owner are refused.
 * SQLite has none: one process owns the file and every run in it.
 */
export interface RunLeaseRepository {
  /** Inserts a run already leased to `owner` until `until`, in one write; resolves to its fencing token. */
  insertLeased(stored: StoredRun, owner: string, until: number): Promise<number>;
  /** Takes the run for `owner` until `until` (epoch ms); resolves to the new fencing token. */
  acquire(runId: string, owner: string, until: number): Promise<number>;
  /** Extends the leases `owner` still holds among `runIds`; resolves to the ids it still holds. */
  renew(owner: string, runIds: readonly string[], until: number): Promise<string[]>;
  /** The instances holding leases on open runs of the channel. */
  ownersIn(channelId: string): Promise<string[]>;
  /** Whether `fence` is still the run's fencing token and the run still open (a read, no write). */
  isCurrent(runId: string, fence: number): Promise<boolean>;
  /**
   * Stores a message the run posts (as `MessageRepository.insert`) only while `isCurrent(runId,
   * fence)`, checked in the same statement; undefined, and nothing stored, when it is not.
   */
  insertMessageIfCurrent(
    runId: string,
    fence: number,
    message: NewMessage,
  ): Promise<ChannelMessage | undefined>;
  /** Saves status, error, usage and times only while `fence` is current; false when it is not. */
  updateFenced(run: TeamRun, fence: number): Promise<boolean>;
  /** Ends the open runs whose lease ran out before `now` as errors with `reason`; resolves to them. */
  expire(now: number, reason: string): Promise<StoredRun[]>;
  /**
   * Takes the open runs whose lease ran out before `now` (their instance died) for `owner` until
   * `until`, each with its new fencing token; of several instances asking at once, one gets each run.
   */
  takeOver(owner: string, now: number, until: number): Promise<Array<{ stored: StoredRun; fence: number }>>;
}

export interface FlowRepository {
  /** Inserts or replaces the flow's state. */
  save(flow: FlowRecord): Promise<void>;
  get(id: string): Promise<FlowRecord | undefined>;
  /** Flows in a status, oldest first. */
  listByStatus(status: FlowStatus): Promise<FlowRecord[]>;
}

export type { ApprovalGrant };

export interface ApprovalGrantRepository {
  /** The chat's grants, oldest first. */
  list(channelId: string): Promise<ApprovalGrant[]>;
  has(channelId: string, agentId: string, tool: string): Promise<boolean>;
  /** Adds the grant (nothing when it exists). */
  add(grant: ApprovalGrant): Promise<void>;
  /** Revokes it; false when there was none. */
  delete(channelId: string, agentId: string, tool: string): Promise<boolean>;
}

/** An MCP App's tool call waiting for the person's approval (the app asks; any instance may be told). */
export interface PendingAppCall {
  /** The person whose app asked: only they may answer. */
  actor: string;
  channelId: string;
  runId: string;
  callId: string;
  /** The agent's name for the tool, and the MCP server's. */
  tool: string;
  name: string;
  args: Record<string, unknown>;
  expiresAt: number;
}

/** Whose call it is: the person and the app (the answer's tool call in its run and chat). */
export type AppCallOwner = Pick<PendingAppCall, "actor" | "channelId" | "runId" | "callId">;

/** App tool calls waiting for approval, shared by every instance. */
export interface PendingAppCallRepository {
  /** Keeps the call under `id`; calls expired by `now` are dropped on the way. */
  put(id: string, call: PendingAppCall, now: number): Promise<void>;
  /**
   * Takes the call out when it is this person's, from this app (once: a second take finds nothing);
   * undefined when missing, someone else's, or expired by `now`.
   */
  take(id: string, owner: AppCallOwner, now: number): Promise<PendingAppCall | undefined>;
}

/** Small key-value facts about the team (e.g. whether the starter agents were created). */
export interface MetaRepository {
  get(key: string): Promise<string | undefined>;
  set(key: string, value: string): Promise<void>;
  /** Sets the key only when it has no value yet; true for the one caller that set it. */
  claim(key: string, value: string): Promise<boolean>;
}

/** A file attached in a chat, without its bytes. */
export interface AttachmentMeta {
  /** The sha256 of the bytes, in hex: the same file is stored once. */
  id: string;
  name: string;
  mimeType: string;
  kind: "image" | "pdf" | "text";
  size: number;
}

/**
 * Attachments: bytes stored once by content, and links that say which chats may read them (a file
 * uploaded in one chat is not readable from another, whoever knows its hash).
 */
export interface AttachmentRepository {
  /** Stores the bytes (once) and links them to the chat under the name; returns the link. */
  put(
    file: { id: string; mimeType: string; kind: AttachmentMeta["kind"]; data: Buffer },
    link: { channelId: string; name: string; by: string; at: number },
  ): Promise<AttachmentMeta>;
  /** The file as linked to the chat, or undefined when it is not. */
  meta(channelId: string, id: string): Promise<AttachmentMeta | undefined>;
  /** The file and its bytes as linked to the chat, or undefined when it is not. */
  read(channelId: string, id: string): Promise<{ meta: AttachmentMeta; data: Buffer } | undefined>;
}

export interface TeamStore {
  attachments: AttachmentRepository;
  agents: AgentRepository;
  channels: ChannelRepository;
  messages: MessageRepository;
  runs: RunRepository;
  flows: FlowRepository;
  meta: MetaRepository;
  grants: ApprovalGrantRepository;
  /** MCP App tool calls waiting for approval. */
  appCalls: PendingAppCallRepository;
  /** Run leases, where several instances share the database (PostgreSQL). */
  leases?: RunLeaseRepository;
  /** Runs as jobs any instance claims (PostgreSQL). */
  jobs?: RunJobRepository;
}

/** What a run that is a job runs, beside its own record: a chat answer, and how it was asked for. */
export interface RunJob {
  kind: "answer";
  versionOf?: number;
  note?: string;
  present?: boolean;
}

/**
 * Runs as jobs (several instances on PostgreSQL): the instance that receives a message enqueues the
 * run; any instance with room claims it. A claim is exactly-once and fenced (it takes the run's
 * lease), and keeps the order rule: of one agent session, only its oldest queued run, and only while
 * none of its runs is running or waiting.
 */
export interface RunJobRepository {
  /** Inserts the run as queued and unclaimed, with its job. */
  enqueue(stored: StoredRun, job: RunJob): Promise<void>;
  /** Claims the next runnable job for `owner` until `until`; undefined when there is none. */
  claim(owner: string, until: number): Promise<{ stored: StoredRun; job: RunJob; fence: number } | undefined>;
  /**
   * Puts a claimed job that never started (still `queued`) back in the queue, unclaimed, if `fence` is
   * still its lease's: its instance died between the claim and the start. False otherwise.
   */
  release(runId: string, fence: number): Promise<boolean>;
}
