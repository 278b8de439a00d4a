/**
 * The connectors service: configs (CRUD, owners and admins only), running connectors (driver plus
 * outbox worker), inbound requests from platforms, and answers going back out. Create one per server
 * in the composition root, `startEnabled()` after the server listens, `close()` before the team.
 */
import { randomUUID } from "node:crypto";
import { type AttachmentLimits, DEFAULT_ATTACHMENT_LIMITS } from "../attachments/kinds.js";
import type { SpeechToTextConfig } from "../config/speech-to-text.js";
import { forbidden, invalid, notFound } from "../errors.js";
import type { Actor, Team } from "../team/types.js";
import { AnswerRouter } from "./answer-router.js";
import { ApprovalButtons, isFlowChoice } from "./approval-buttons.js";
import { BudgetMessages } from "./budget-messages.js";
import { ChatBinder, type ChatView } from "./chat-binder.js";
import { applyPatch, missingSecrets, recordFromInput, viewOf } from "./connector-config.js";
import { FlowCards } from "./flow-cards.js";
import { InboundPipeline, serviceActor } from "./inbound-pipeline.js";
import { messageOf } from "./kind-helpers.js";
import { BUILTIN_KINDS } from "./kinds.js";
import { MessageOrigins } from "./message-origins.js";
import { sendFile } from "./outbound-files.js";
import { type BackoffPolicy, backoffDelayMs, DEFAULT_BACKOFF, OutboxWorker } from "./outbox-worker.js";
import { type LinkCodeView, PersonLinks } from "./person-links.js";
import { PollLease } from "./poll-lease.js";
import type { AuditSink } from "./press-audit.js";
import { StatusBoard } from "./status-board.js";
import type { ConnectorRepo, StoredConnector } from "./store/connector-repo.js";
import type { ConnectorStore } from "./store/connector-store.js";
import type { MappingRepo } from "./store/mapping-repo.js";
import type { OutboxRepo } from "./store/outbox-repo.js";
import { PreviewStreams } from "./stream-preview.js";
import type {
  ApprovalPress,
  ApprovalPressResult,
  ConnectorDriver,
  ConnectorInput,
  ConnectorKind,
  ConnectorLog,
  ConnectorPatch,
  ConnectorRecord,
  ConnectorSecrets,
  ConnectorStatus,
  ConnectorType,
  ConnectorUsers,
  ConnectorView,
  InboundMessage,
  InboundRequest,
  OutboundMessage,
} from "./types.js";

export interface ConnectorManagerDeps {
  /** Where connectors live (`createSqliteConnectorStore(db, box)` or the PostgreSQL one); secrets sealed by its box. */
  store: ConnectorStore;
  team: Team;
  users: ConnectorUsers;
  log: ConnectorLog;
  kinds?: ReadonlyMap<ConnectorType, ConnectorKind>;
  /** Outbox and background retry timing (default 1 s doubling to 5 min). */
  backoff?: BackoffPolicy;
  /** Least time between two edits of a streamed preview (default 1000 ms). */
  editIntervalMs?: number;
  now?: () => number;
  random?: () => number;
  /**
   * This server instance's name in poll leases and outbox claims, unique among the instances
   * sharing the database (default: random per process). A name kept across restarts lets a restarted
   * instance take its own lease and claims back at once instead of after they run out.
   */
  instanceId?: string;
  /**
   * Told after this instance changed, started, stopped or deleted a connector, so the other instances
   * sharing the database can `sync` it.
   */
  onChanged?: (connectorId: string) => void;
  /** How long the buttons of an approval prompt in a chat work at most (default 7 days). */
  approvalTicketTtlMs?: number;
  /** What files people may send in chats (`attachments` in the config file; default the built-in limits). */
  attachments?: AttachmentLimits;
  /** Where voice messages without the platform's text are transcribed (`DIMSUM_STT_*`); unset: unread. */
  speechToText?: SpeechToTextConfig;
  /** Where approvals decided with a chat's buttons are audited (the server's audit log). */
  audit?: AuditSink;
}

/** What the inbound endpoint answers. */
export interface InboundResponse {
  status: 200 | 400 | 401 | 403 | 404 | 500 | 503;
  body: unknown;
}

interface Running {
  driver: ConnectorDriver;
  worker: OutboxWorker;
  record: ConnectorRecord;
}

function assertAdmin(actor: Actor): void {
  if (actor.role !== "owner" && actor.role !== "admin") {
    throw forbidden("Only owners and admins can manage connectors.", "ask an admin");
  }
}

/** The connectors of one server. */
export class ConnectorManager {
  readonly #deps: ConnectorManagerDeps;
  readonly #kinds: ReadonlyMap<ConnectorType, ConnectorKind>;
  readonly #repo: ConnectorRepo;
  readonly #mappings: MappingRepo;
  readonly #outbox: OutboxRepo;
  readonly #running = new Map<string, Running>();
  readonly #status = new StatusBoard();
  readonly #pipeline: InboundPipeline;
  readonly #router: AnswerRouter;
  readonly #buttons: ApprovalButtons;
  readonly #flowCards: FlowCards;
  readonly #previews: PreviewStreams;
  readonly #binder: ChatBinder;
  readonly #links: PersonLinks;
  readonly #origins: MessageOrigins;
  readonly #budgetMessages: BudgetMessages;
  readonly #now: () => number;
  readonly #random: () => number;
  readonly #backoff: BackoffPolicy;
  /** Names this instance in poll leases and outbox claims. */
  readonly #instance: string;

  constructor(deps: ConnectorManagerDeps) {
    this.#deps = deps;
    this.#instance = deps.instanceId ?? `instance-${randomUUID()}`;
    this.#kinds = deps.kinds ?? BUILTIN_KINDS;
    this.#repo = deps.store.connectors;
    this.#mappings = deps.store.mappings;
    this.#outbox = deps.store.outbox;
    this.#now = deps.now ?? Date.now;
    this.#random = deps.random ?? Math.random;
    this.#backoff = deps.backoff ?? DEFAULT_BACKOFF;
    this.#previews = new PreviewStreams({
      intervalMs: deps.editIntervalMs ?? 1000,
      now: this.#now,
      onError: (err) => deps.log.warn(`connector preview failed: ${messageOf(err)}`),
    });
    this.#origins = new MessageOrigins(this.#now);
    this.#binder = new ChatBinder({
      team: deps.team,
      mappings: this.#mappings,
      now: this.#now,
      onMapped: (channelId, connectorId, chatId) => this.#router.remember(channelId, { connectorId, chatId }),
      onUnmapped: (channelId) => this.#router.forget(channelId),
    });
    this.#links = new PersonLinks({
      mappings: this.#mappings,
      users: deps.users,
      now: this.#now,
      connectorIds: async () => (await this.#repo.list()).map((stored) => stored.record.id),
    });
    this.#pipeline = new InboundPipeline({
      binder: this.#binder,
      links: this.#links,
      origins: this.#origins,
      team: deps.team,
      mappings: this.#mappings,
      users: deps.users,
      now: this.#now,
      limits: deps.attachments ?? DEFAULT_ATTACHMENT_LIMITS,
      ...(deps.speechToText ? { speechToText: deps.speechToText } : {}),
      onMapped: (channelId, connectorId, chatId) => this.#router.remember(channelId, { connectorId, chatId }),
      notify: (connector, chatId, text) => this.#enqueue(connector.id, [{ chatId, text, part: 1, parts: 1 }]),
    });
    this.#buttons = new ApprovalButtons({
      team: deps.team,
      mappings: this.#mappings,
      users: deps.users,
      now: this.#now,
      ...(deps.approvalTicketTtlMs !== undefined ? { ttlMs: deps.approvalTicketTtlMs } : {}),
      asks: (connectorId) => this.#cards(connectorId),
      enqueue: (connectorId, messages) => this.#enqueue(connectorId, messages),
      updater: (connectorId) => this.#running.get(connectorId)?.driver.approvals,
      onError: (err) => deps.log.warn(`connector approval prompt: ${messageOf(err)}`),
      ...(deps.audit ? { audit: deps.audit } : {}),
    });
    this.#flowCards = new FlowCards({
      team: deps.team,
      mappings: this.#mappings,
      users: deps.users,
      shows: (connectorId) => this.#cards(connectorId),
      enqueue: (connectorId, messages) => this.#enqueue(connectorId, messages),
      updater: (connectorId) => this.#running.get(connectorId)?.driver.flowCards,
      onError: (err) => deps.log.warn(`connector flow card: ${messageOf(err)}`),
      ...(deps.audit ? { audit: deps.audit } : {}),
    });
    this.#router = new AnswerRouter({
      team: deps.team,
      mappings: this.#mappings,
      previews: this.#previews,
      previewTarget: (chat) => {
        const running = this.#running.get(chat.connectorId);
        const kind = running ? this.#kinds.get(running.record.type) : undefined;
        if (!running?.driver.preview || !kind?.streams(running.record.settings)) return undefined;
        return { driver: running.driver.preview, ...chat, limit: kind.limit(running.record.settings) };
      },
      limitOf: async (connectorId) => {
        const record = this.#running.get(connectorId)?.record ?? (await this.#repo.record(connectorId));
        return record ? this.#kind(record.type).limit(record.settings) : undefined;
      },
      enqueue: (connectorId, messages) => this.#enqueue(connectorId, messages),
      approvals: this.#buttons,
      flows: this.#flowCards,
      origins: this.#origins,
      mirrors: (chat) => this.#binder.mirrors(chat.connectorId, chat.chatId),
      nameOf: async (userId) => (await deps.users.get(userId))?.username,
      now: this.#now,
      onError: (err) => deps.log.error("connector answer routing failed", err),
    });
    this.#router.start();
    this.#budgetMessages = new BudgetMessages({
      team: deps.team,
      mappings: this.#mappings,
      users: deps.users,
      connectorIds: async () => (await this.#repo.list()).map((stored) => stored.record.id),
      enqueue: (connectorId, messages) => this.#enqueue(connectorId, messages),
      onError: (err) => deps.log.warn(`connector budget notice: ${messageOf(err)}`),
    });
    this.#budgetMessages.start();
  }

  /** Whether a connector's chats get cards with buttons (approval prompts, flow progress). */
  async #cards(connectorId: string): Promise<boolean> {
    const record = this.#running.get(connectorId)?.record ?? (await this.#repo.record(connectorId));
    if (!record) return false;
    const approvals = this.#kinds.get(record.type)?.approvals;
    if (typeof approvals !== "function") return approvals === true;
    try {
      return approvals(this.#kind(record.type).parseSettings(record.settings));
    } catch {
      return false;
    }
  }

  /** Decides a press of a card's button: an approval prompt's or a flow card's. */
  #press(record: ConnectorRecord, press: ApprovalPress): Promise<ApprovalPressResult> {
    return isFlowChoice(press.choice)
      ? this.#flowCards.press(record, press)
      : this.#buttons.press(record, press);
  }

  #kind(type: ConnectorType): ConnectorKind {
    const kind = this.#kinds.get(type);
    if (!kind)
      throw invalid(`Unknown connector type "${type}".`, `use one of ${[...this.#kinds.keys()].join(", ")}`);
    return kind;
  }

  async #require(id: string): Promise<StoredConnector> {
    const stored = await this.#repo.get(id);
    if (!stored) throw notFound(`No connector with id "${id}".`);
    return stored;
  }

  async #statusOf(id: string): Promise<ConnectorStatus> {
    const counts = await this.#outbox.counts(id);
    const live = this.#status.get(id);
    // Started but the platform's calls fail: not "running" (the error says what the platform said).
    const state = live.state === "running" && live.error !== undefined ? "failing" : live.state;
    return { ...live, state, ...counts };
  }

  async #view(stored: StoredConnector): Promise<ConnectorView> {
    return viewOf(this.#kind(stored.record.type), stored, await this.#statusOf(stored.record.id));
  }

  async #enqueue(connectorId: string, messages: OutboundMessage[]): Promise<void> {
    if (messages.length === 0) return;
    await this.#outbox.add(connectorId, messages, this.#now());
    this.#running.get(connectorId)?.worker.kick();
  }

  /** Every connector. */
  async list(actor: Actor): Promise<ConnectorView[]> {
    assertAdmin(actor);
    const all = await this.#repo.list();
    return Promise.all(all.map((stored) => this.#view(stored)));
  }

  /** One connector. */
  async get(actor: Actor, id: string): Promise<ConnectorView> {
    assertAdmin(actor);
    return this.#view(await this.#require(id));
  }

  /** Creates a connector (stopped). */
  async create(actor: Actor, input: ConnectorInput): Promise<ConnectorView> {
    assertAdmin(actor);
    const kind = this.#kind(input.type);
    await this.#requireAgent(input.agentId);
    const { record, secrets } = recordFromInput(kind, input, actor.userId, this.#now());
    await this.#checkUser(record);
    await this.#repo.save(record, secrets);
    return this.#view(await this.#require(record.id));
  }

  /** Changes a connector; a running one restarts with the new config. */
  async update(actor: Actor, id: string, patch: ConnectorPatch): Promise<ConnectorView> {
    assertAdmin(actor);
    const stored = await this.#require(id);
    const kind = this.#kind(stored.record.type);
    if (patch.agentId !== undefined) await this.#requireAgent(patch.agentId);
    const next = applyPatch(
      kind,
      { record: stored.record, secrets: this.#secretsOf(stored) },
      patch,
      this.#now(),
    );
    await this.#checkUser(next.record);
    const wasRunning = this.#running.has(id);
    if (wasRunning) await this.#halt(id, false);
    await this.#repo.save(next.record, next.secrets);
    if (wasRunning) await this.#launch(id);
    this.#deps.onChanged?.(id);
    return this.#view(await this.#require(id));
  }

  /** Stops and deletes a connector with its mappings and outbox; its channels and users stay. */
  async delete(actor: Actor, id: string): Promise<void> {
    assertAdmin(actor);
    await this.#require(id);
    await this.#halt(id, true);
    await this.#repo.delete(id);
    this.#status.delete(id);
    this.#deps.onChanged?.(id);
  }

  /** Starts a connector and marks it to start with the server. */
  async start(actor: Actor, id: string): Promise<ConnectorView> {
    assertAdmin(actor);
    await this.#launch(id);
    await this.#repo.setEnabled(id, true, this.#now());
    this.#deps.onChanged?.(id);
    return this.#view(await this.#require(id));
  }

  /** Stops a connector (answers keep queueing in its outbox). */
  async stop(actor: Actor, id: string): Promise<ConnectorView> {
    assertAdmin(actor);
    await this.#require(id);
    await this.#halt(id, true);
    await this.#repo.setEnabled(id, false, this.#now());
    this.#deps.onChanged?.(id);
    return this.#view(await this.#require(id));
  }

  /** Checks a connector's credentials against its platform without starting it. */
  async test(actor: Actor, id: string): Promise<{ ok: boolean; message: string }> {
    assertAdmin(actor);
    const stored = await this.#require(id);
    try {
      const driver = this.#driverFor(stored);
      return { ok: true, message: await driver.test() };
    } catch (err) {
      return { ok: false, message: messageOf(err) };
    }
  }

  /** The chats a connector has seen and how each is bound. */
  async chats(actor: Actor, id: string): Promise<ChatView[]> {
    assertAdmin(actor);
    return this.#binder.chats((await this.#require(id)).record);
  }

  /**
   * Binds a chat: to a group (`channelId`), back to a direct chat with the connector's agent, and/or
   * switches posting web messages to it.
   */
  async bindChat(
    actor: Actor,
    id: string,
    chatId: string,
    change: { mode?: "direct" | "group"; channelId?: string; mirror?: boolean },
  ): Promise<ChatView> {
    assertAdmin(actor);
    const { record } = await this.#require(id);
    const bindings = this.#binder.bindings(id);
    if (!(await bindings.chat(chatId)))
      throw notFound(`Connector "${record.name}" has seen no chat "${chatId}".`);
    let view: ChatView | undefined;
    if (change.mode === "group") {
      if (!change.channelId) throw invalid("Binding to a group needs its channelId.", "pick a group");
      view = await this.#binder.bindGroup(actor, record, chatId, change.channelId);
    } else if (change.mode === "direct") {
      view = await this.#binder.keepDirect(actor, record, chatId);
    }
    if (change.mirror !== undefined) view = await this.#binder.setMirror(record, chatId, change.mirror);
    if (!view) throw invalid("Nothing to change.", "send mode and/or mirror");
    return view;
  }

  /** The people a connector has seen, with the web account each is linked to. */
  async people(
    actor: Actor,
    id: string,
  ): Promise<
    Array<{
      externalUserId: string;
      name?: string;
      lastAt: number;
      linkedTo?: { userId: string; username: string };
    }>
  > {
    assertAdmin(actor);
    await this.#require(id);
    const bindings = this.#binder.bindings(id);
    const out = [];
    for (const person of await bindings.people()) {
      const link = await bindings.link(person.externalUserId);
      const user = link ? await this.#deps.users.get(link.userId) : undefined;
      out.push({ ...person, ...(user ? { linkedTo: { userId: user.id, username: user.username } } : {}) });
    }
    return out;
  }

  /** Links an external person to a web account (`userId`), or unlinks them (`null`). */
  async linkPerson(actor: Actor, id: string, externalUserId: string, userId: string | null): Promise<void> {
    assertAdmin(actor);
    const { record } = await this.#require(id);
    if (userId === null) {
      if (!(await this.#links.unlink(record, externalUserId))) throw notFound("That person is not linked.");
      return;
    }
    const user = await this.#deps.users.get(userId);
    if (!user) throw invalid(`No user with id "${userId}".`, "pick an existing account");
    if (user.role === "guest")
      throw invalid(`${user.username} is a guest account.`, "link to a member's account");
    await this.#links.link(record, externalUserId, user.id, "admin", actor.userId);
  }

  /** A one-time code the actor sends to a bot in a private chat to link their messenger account. */
  linkCode(actor: Actor): Promise<LinkCodeView> {
    return this.#links.issue(actor);
  }

  /** Starts every connector marked to run; failures are logged, not thrown. */
  async startEnabled(): Promise<void> {
    for (const stored of await this.#repo.list()) {
      if (!stored.record.enabled) continue;
      await this.#launch(stored.record.id).catch((err: unknown) =>
        this.#deps.log.error(`connector "${stored.record.name}" did not start`, err),
      );
    }
  }

  /**
   * Brings this instance in line with what another instance did to a connector: runs it when it is
   * marked to run (restarted when its config changed), stops it when it is not or is gone. The
   * platform-side cleanup of a stop was done by the instance that stopped it.
   */
  async sync(id: string): Promise<void> {
    const stored = await this.#repo.get(id);
    const running = this.#running.get(id);
    if (!stored?.record.enabled) {
      await this.#halt(id, false);
      if (!stored) this.#status.delete(id);
      return;
    }
    if (running && running.record.updatedAt === stored.record.updatedAt) return;
    await this.#halt(id, false);
    await this.#launch(id);
  }

  /** Stops everything (server shutdown); connectors stay marked to start next time. */
  async close(): Promise<void> {
    this.#router.stop();
    this.#budgetMessages.stop();
    await Promise.all([...this.#running.keys()].map((id) => this.#halt(id, false)));
  }

  /** The outbox rows of a connector (inspection and tests). */
  outbox(id: string): ReturnType<OutboxRepo["list"]> {
    return this.#outbox.list(id);
  }

  /** Handles a platform's call to `/api/connectors/:id/inbound`: verify, then take the messages. */
  async handleInbound(id: string, request: InboundRequest): Promise<InboundResponse> {
    const running = this.#running.get(id);
    if (!running?.driver.inbound) {
      const known = (await this.#repo.record(id)) !== undefined;
      const why = known ? "this connector is not running or takes no inbound calls" : "no such connector";
      return {
        status: known ? 503 : 404,
        body: { error: { code: known ? "unavailable" : "not_found", message: why } },
      };
    }
    const record = running.record;
    if (request.method === "GET" && this.#kinds.get(record.type)?.inboundGet !== true) {
      return {
        status: 400,
        body: { error: { code: "invalid", message: "this connector takes POST requests only" } },
      };
    }
    const outcome = await running.driver.inbound(request);
    if (outcome.kind === "rejected") {
      this.#status.rejected(id);
      this.#deps.log.warn(`connector "${record.name}" (${id}) refused an inbound request: ${outcome.reason}`);
      const code =
        outcome.status === 400 ? "invalid" : outcome.status === 401 ? "unauthenticated" : "forbidden";
      return { status: outcome.status, body: { error: { code, message: outcome.reason } } };
    }
    if (outcome.kind === "reply") return { status: 200, body: outcome.body };
    if (outcome.kind === "press") {
      this.#status.set(id, { lastInboundAt: this.#now() });
      const result = await this.#press(record, outcome.press);
      try {
        return { status: 200, body: (await outcome.reply(result)) ?? { ok: true } };
      } catch (err) {
        // The decision stands; only telling the presser failed.
        this.#deps.log.warn(
          `connector "${record.name}" could not acknowledge a button press: ${messageOf(err)}`,
        );
        return { status: 200, body: { ok: true } };
      }
    }
    try {
      await this.#receive(record, outcome.messages);
    } catch (err) {
      this.#deps.log.error(`connector "${record.name}" could not take an inbound message`, err);
      return {
        status: 500,
        body: { error: { code: "internal", message: "could not store the message; retry" } },
      };
    }
    return { status: 200, body: outcome.body ?? { ok: true } };
  }

  async #receive(record: ConnectorRecord, messages: readonly InboundMessage[]): Promise<void> {
    for (const message of messages) {
      if (await this.#pipeline.take(record, message))
        this.#status.set(record.id, { lastInboundAt: this.#now() });
    }
  }

  async #requireAgent(agentId: string): Promise<void> {
    await this.#deps.team.getAgent(serviceActor("manager"), agentId);
  }

  async #checkUser(record: ConnectorRecord): Promise<void> {
    if (record.userMode === "user" && !(await this.#deps.users.get(record.userId ?? ""))) {
      throw invalid(`No user with id "${record.userId}" to post as.`, "pick an existing user");
    }
  }

  #secretsOf(stored: StoredConnector): ConnectorSecrets {
    if (stored.secrets === undefined) {
      throw invalid(
        `The secrets of connector "${stored.record.name}" cannot be decrypted (secret.key changed).`,
        "enter its secrets again",
      );
    }
    return stored.secrets;
  }

  #driverFor(stored: StoredConnector, report?: (error: string | undefined) => void): ConnectorDriver {
    const { record } = stored;
    const kind = this.#kind(record.type);
    const secrets = this.#secretsOf(stored);
    const settings = kind.parseSettings(record.settings);
    const missing = missingSecrets(kind, secrets, settings);
    if (missing.length > 0) {
      throw invalid(
        `Connector "${record.name}" is missing secrets: ${missing.join(", ")}.`,
        "enter them in the connector's settings and start it again",
      );
    }
    return kind.create({
      connector: record,
      settings,
      secrets,
      state: this.#mappings.stateOf(record.id),
      lease: new PollLease({
        leases: this.#deps.store.leases,
        connectorId: record.id,
        holder: this.#instance,
        now: this.#now,
      }),
      log: this.#deps.log,
      receive: (messages) => this.#receive(record, messages),
      press: (press) => this.#press(record, press),
      report: report ?? (() => undefined),
      backoff: (attempt) => backoffDelayMs(attempt, this.#backoff, this.#random),
      now: this.#now,
    });
  }

  async #launch(id: string): Promise<void> {
    if (this.#running.has(id)) return;
    const stored = await this.#require(id);
    await this.#requireAgent(stored.record.agentId);
    const log = this.#deps.log;
    const name = stored.record.name;
    const report = (error: string | undefined) => {
      if (error !== undefined && error !== this.#status.get(id).error)
        log.warn(`connector "${name}": ${error}`);
      this.#status.set(id, { error });
    };
    const driver = this.#driverFor(stored, report);
    this.#status.set(id, { state: "starting", error: undefined });
    try {
      await driver.start();
    } catch (err) {
      this.#status.set(id, { state: "error", error: messageOf(err) });
      throw invalid(`Connector "${name}" could not start: ${messageOf(err)}`);
    }
    const worker = new OutboxWorker({
      connectorId: id,
      holder: `${this.#instance}:outbox`,
      outbox: this.#outbox,
      send: async (message, signal) => {
        const messageId = message.file
          ? await sendFile(driver, message, this.#deps.team, signal)
          : await driver.send(message, signal);
        // Sent: a failure to remember its id must not send it again.
        if (message.approval) {
          await this.#buttons
            .delivered(id, message.approval, messageId)
            .catch((err: unknown) => log.warn(`connector "${name}": approval prompt: ${messageOf(err)}`));
        }
        if (message.flow) {
          await this.#flowCards
            .delivered(id, message.flow, messageId)
            .catch((err: unknown) => log.warn(`connector "${name}": flow card: ${messageOf(err)}`));
        }
        return messageId;
      },
      policy: this.#backoff,
      now: this.#now,
      random: this.#random,
      onDelivered: () => this.#status.set(id, { lastDeliveryAt: this.#now(), error: undefined }),
      onFailure: (item, error, permanent) => {
        log.warn(
          `connector "${name}": ${permanent ? "gave up on" : "will retry"} reply ${item.id}: ${error}`,
        );
        this.#status.set(id, { error });
      },
      onCrash: (err) => {
        log.error(`connector "${name}": delivery stopped`, err);
        this.#status.set(id, { state: "error", error: messageOf(err) });
      },
    });
    this.#running.set(id, { driver, worker, record: stored.record });
    this.#status.set(id, { state: "running" });
    worker.start();
  }

  async #halt(id: string, final: boolean): Promise<void> {
    const running = this.#running.get(id);
    if (!running) return;
    this.#running.delete(id);
    this.#previews.discard(id);
    await running.worker.stop();
    await running.driver
      .stop(final)
      .catch((err: unknown) => this.#deps.log.warn(`connector stop: ${messageOf(err)}`));
    this.#status.set(id, { state: "stopped" });
  }
}
