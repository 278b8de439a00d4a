/** The team repositories both databases share, over one database interface. */
import type { SqlDatabase } from "../../store/sql-database.js";
import { AgentRepo } from "./agent-repo.js";
import { AppCallRepo } from "./app-call-repo.js";
import { AttachmentRepo } from "./attachment-repo.js";
import { ChannelRepo } from "./channel-repo.js";
import { FlowRepo } from "./flow-repo.js";
import { GrantRepo } from "./grant-repo.js";
import { MessageRepo } from "./message-repo.js";
import { MetaRepo } from "./meta-repo.js";
import type { TeamStore } from "./repositories.js";
import { RunRepo } from "./run-repo.js";

export function teamRepositories(db: SqlDatabase): Omit<TeamStore, "leases" | "jobs"> {
  return {
    attachments: new AttachmentRepo(db),
    agents: new AgentRepo(db),
    channels: new ChannelRepo(db),
    messages: new MessageRepo(db),
    runs: new RunRepo(db),
    flows: new FlowRepo(db),
    meta: new MetaRepo(db),
    grants: new GrantRepo(db),
    appCalls: new AppCallRepo(db),
  };
}
