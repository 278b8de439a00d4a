/** What the team is built from: its stores, configuration and the services its runs draw on. */

import type { Database } from "better-sqlite3";
import type { RemoteAgentConfig } from "../a2a/remote-config.js";
import type { ObserveRun } from "../agent/run-observer.js";
import type { CapabilityServices } from "../capabilities/index.js";
import type { DimsumConfig } from "../config/load-config.js";
import type { FallbackSettings } from "../llm/fallback-chain.js";
import type { ModelSpec, StreamFunction, StreamOptions } from "../llm/types.js";
import type { BudgetStore } from "../store/budgets/budget-store.js";
import type { SessionStore } from "../store/types.js";
import type { Tool } from "../tools/types.js";
import type { PersonaStore } from "./personas.js";
import type { MeetingRepository } from "./store/meeting-repo.js";
import type { TeamRelay } from "./team-relay.js";
import type { TeamStore } from "./team-store.js";
import type { Actor, AgentRecord } from "./types.js";

export interface TeamDeps {
  /**
   * A migrated Dimsum SQLite database (`openDatabase`), when `stores` is not given; the caller closes
   * it after `team.close()`.
   */
  db?: Database;
  /** The team's repositories (default: SQLite over `db`); PostgreSQL for several instances. */
  teamStore?: TeamStore;
  /** The groups' meetings (default: SQLite over `db`). */
  meetings?: MeetingRepository;
  /** Agents' personas (default: SOUL.md files under `<home>/agents`). */
  personas?: PersonaStore;
  /**
   * A database other instances may share (PostgreSQL): runs are leased to this instance (see
   * run-manager.ts), so a run whose instance dies is closed by another one; with a relay, live events
   * go out to and come in from the others.
   */
  cluster?: {
    /** This instance's id (the relay's when there is one). */
    instanceId: string;
    relay?: TeamRelay;
    /** How long a run's lease lasts unrenewed (default 30 s) and how often it is renewed (10 s). */
    leaseTtlMs?: number;
    leaseCheckMs?: number;
  };
  /** DIMSUM_HOME: personas live in `<home>/agents`, workspaces in `<home>/workspaces`. */
  home: string;
  config: DimsumConfig;
  /** Where agent turns are stored (default: the SQLite session store on `db`). */
  store?: SessionStore;
  /** The provider function (default: by each model's wire protocol). */
  stream?: StreamFunction;
  streamOptions?: Omit<StreamOptions, "signal" | "toolChoice">;
  /** Text deltas of one answer merged into at most one event per this many ms (default 50). */
  deltaFrameMs?: number;
  /** Provider cooldowns of model chains (default: this team's own, in memory, at the configured lengths). */
  fallback?: FallbackSettings;
  /** The budgets runs are held to (Settings → Spend); none: unlimited. */
  budgets?: BudgetStore;
  /** The model of an agent (default: its `model`, else the configured default). */
  resolveAgentModel?: (agent: AgentRecord) => ModelSpec | Promise<ModelSpec>;
  /** The tools' workspace for a channel (default `<home>/workspaces/<channelId>`, created). */
  workspaceFor?: (channelId: string) => string;
  now?: () => number;
  /** A person's display name in agents' input (default: the user id). */
  userName?: (userId: string) => string | Promise<string>;
  /**
   * The long-lived services runs draw their tools and layers from (memory, knowledge bases, MCP
   * servers, HTTP tools, plugins, skills); default: the built-in tools alone.
   */
  capabilities?: Omit<CapabilityServices, "config" | "team">;
  /**
   * Tools an agent gets only when its allow list names them (e.g. `manage_schedule`): their names
   * (accepted in allow lists), a factory acting for the person who started the run, and instances
   * describing them for the tool catalogue.
   */
  grantableTools?: GrantableTools;
  /** A person's role (guests read no knowledge base); default: everyone may. */
  roleOf?: (userId: string) => Actor["role"] | undefined | Promise<Actor["role"] | undefined>;
  /** Create the starter agents on first start (default true). */
  starterAgents?: boolean;
  /** Failures of background bookkeeping (default: a process warning). */
  onError?: (err: unknown) => void;
  /** How long a person has to answer an MCP server's request for input (default five minutes). */
  elicitationTimeoutMs?: number;
  /** How often runs that waited too long for approvals are looked for (default a minute). */
  approvalSweepMs?: number;
  /** Another reader of every run's events (OpenTelemetry export, see src/telemetry). */
  observe?: ObserveRun;
  /**
   * Remote A2A agents every agent may call, one tool each (`a2a_<name>`): a fixed list, or a getter
   * read at the start of each run (the server's: a2a.json and those added in Settings).
   */
  remoteAgents?: readonly RemoteAgentConfig[] | (() => Promise<readonly RemoteAgentConfig[]>);
  /** Tools every agent is offered besides its catalogue, read at the start of each run (the server's HTTP tools saved in Settings). */
  httpTools?: () => Promise<readonly Tool[]>;
}

export interface GrantableTools {
  names: string[];
  create: (agent: AgentRecord, requestedBy: string) => Tool[] | Promise<Tool[]>;
  describe: () => Tool[];
}
