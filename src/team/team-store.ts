/**
 * The team's repositories, one per aggregate: agents, channels (with members and chain), messages
 * (with search and read markers), runs, flows and a few settings. Methods are async so another
 * database can implement them later; this one is SQLite in the Dimsum database file.
 */
import type { Database } from "better-sqlite3";
import { AgentRepo } from "./store/agent-repo.js";
import { ChannelRepo } from "./store/channel-repo.js";
import { FlowRepo } from "./store/flow-repo.js";
import { MessageRepo } from "./store/message-repo.js";
import { MetaRepo } from "./store/meta-repo.js";
import { RunRepo } from "./store/run-repo.js";

export type { AgentRepo } from "./store/agent-repo.js";
export type { ChannelRepo } from "./store/channel-repo.js";
export type { FlowRepo } from "./store/flow-repo.js";
export type { ListOptions, MessageRepo, NewMessage, SearchScope } from "./store/message-repo.js";
export type { MetaRepo } from "./store/meta-repo.js";
export type { RunRepo, StoredRun } from "./store/run-repo.js";

export interface TeamStore {
  agents: AgentRepo;
  channels: ChannelRepo;
  messages: MessageRepo;
  runs: RunRepo;
  flows: FlowRepo;
  meta: MetaRepo;
}

/** The team repositories over a migrated Dimsum database (see `openDatabase`). */
export function createSqliteTeamStore(db: Database): TeamStore {
  return {
    agents: new AgentRepo(db),
    channels: new ChannelRepo(db),
    messages: new MessageRepo(db),
    runs: new RunRepo(db),
    flows: new FlowRepo(db),
    meta: new MetaRepo(db),
  };
}
