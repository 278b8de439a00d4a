/** Channels with their members and collaboration chain. */
import type { Database, Statement } from "better-sqlite3";
import type { AgentRecord, ChannelMember, ChannelRecord } from "../../types.js";
import type { ChannelPrefs, ChannelRepository } from "../repositories.js";
import {
  type AgentRow,
  type ChannelRow,
  type MemberRow,
  membersByChannel,
  type PrefsRow,
  prefsByChannel,
  toAgent,
  toChannel,
} from "../rows.js";
import { guard } from "./sql-guard.js";

/** The channel tables. */
export class SqliteChannelRepo implements ChannelRepository {
  readonly #db: Database;
  readonly #sql: {
    get: Statement<[string], ChannelRow>;
    list: Statement<[], ChannelRow>;
    members: Statement<[string], MemberRow>;
    agents: Statement<[], AgentRow>;
    allMembers: Statement<[], MemberRow>;
    insert: Statement<unknown[]>;
    update: Statement<unknown[]>;
    delete: Statement<[string]>;
    addMember: Statement<[string, string, string, number]>;
    removeMember: Statement<[string, string, string]>;
    prefsOf: Statement<[string], PrefsRow>;
    setPrefs: Statement<[string, string, number | null, number | null]>;
    clearPrefs: Statement<[string, string]>;
  };
  readonly #insertTx: (channel: ChannelRecord) => void;

  constructor(db: Database) {
    this.#db = db;
    this.#sql = {
      get: db.prepare("SELECT * FROM team_channels WHERE id = ?"),
      list: db.prepare("SELECT * FROM team_channels ORDER BY created_at, rowid"),
      members: db.prepare(
        "SELECT * FROM team_channel_members WHERE channel_id = ? ORDER BY added_at, member_type, member_id",
      ),
      allMembers: db.prepare("SELECT * FROM team_channel_members ORDER BY added_at, member_type, member_id"),
      // As SqliteAgentRepo lists them.
      agents: db.prepare("SELECT * FROM team_agents ORDER BY created_at, rowid"),
      insert: db.prepare(
        `INSERT INTO team_channels (id, kind, name, leader_agent_id, chain_json, queue_mode, created_by, created_at,
           updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      ),
      update: db.prepare(
        `UPDATE team_channels SET name = ?, leader_agent_id = ?, chain_json = ?, queue_mode = ?, updated_at = ?
         WHERE id = ?`,
      ),
      delete: db.prepare("DELETE FROM team_channels WHERE id = ?"),
      addMember: db.prepare(
        `INSERT INTO team_channel_members (channel_id, member_type, member_id, added_at) VALUES (?, ?, ?, ?)
         ON CONFLICT DO NOTHING`,
      ),
      removeMember: db.prepare(
        "DELETE FROM team_channel_members WHERE channel_id = ? AND member_type = ? AND member_id = ?",
      ),
      prefsOf: db.prepare(
        "SELECT channel_id, pinned_at, archived_at FROM team_channel_prefs WHERE user_id = ?",
      ),
      setPrefs: db.prepare(
        `INSERT INTO team_channel_prefs (channel_id, user_id, pinned_at, archived_at) VALUES (?, ?, ?, ?)
         ON CONFLICT (channel_id, user_id) DO UPDATE SET pinned_at = excluded.pinned_at,
           archived_at = excluded.archived_at`,
      ),
      clearPrefs: db.prepare("DELETE FROM team_channel_prefs WHERE channel_id = ? AND user_id = ?"),
    };
    this.#insertTx = db.transaction((channel: ChannelRecord) => {
      this.#sql.insert.run(
        channel.id,
        channel.kind,
        channel.name,
        channel.leaderAgentId ?? null,
        JSON.stringify(channel.chain),
        channel.queueMode ?? null,
        channel.createdBy,
        channel.createdAt,
        channel.updatedAt,
      );
      for (const member of channel.members) {
        this.#sql.addMember.run(channel.id, member.type, member.id, channel.createdAt);
      }
    });
  }

  get(id: string): Promise<ChannelRecord | undefined> {
    return guard(this.#db, "read a channel from", () => {
      const row = this.#sql.get.get(id);
      return row ? toChannel(row, this.#sql.members.all(id)) : undefined;
    });
  }

  /** The channel and every agent, in one transaction. */
  getWithAgents(id: string): Promise<{ channel: ChannelRecord | undefined; agents: AgentRecord[] }> {
    return guard(this.#db, "read a channel from", () =>
      this.#db.transaction(() => {
        const row = this.#sql.get.get(id);
        const channel = row ? toChannel(row, this.#sql.members.all(id)) : undefined;
        return { channel, agents: this.#sql.agents.all().map(toAgent) };
      })(),
    );
  }

  /** Every channel, oldest first. */
  list(): Promise<ChannelRecord[]> {
    return guard(this.#db, "read channels from", () => {
      const byChannel = membersByChannel(this.#sql.allMembers.all());
      return this.#sql.list.all().map((row) => toChannel(row, byChannel.get(row.id) ?? []));
    });
  }

  /** Every (channel, person) membership, for the in-memory visibility index. */
  userMemberships(): Promise<Array<{ channelId: string; userId: string }>> {
    return guard(this.#db, "read channel members from", () =>
      this.#sql.allMembers
        .all()
        .filter((m) => m.member_type === "user")
        .map((m) => ({ channelId: m.channel_id, userId: m.member_id })),
    );
  }

  /** Inserts the channel and its members in one transaction. */
  insert(channel: ChannelRecord): Promise<ChannelRecord> {
    return guard(this.#db, "save a channel in", () => {
      this.#insertTx(channel);
      return channel;
    });
  }

  /** Saves name, leader, chain and queue mode. */
  update(channel: ChannelRecord): Promise<ChannelRecord> {
    return guard(this.#db, "save a channel in", () => {
      this.#sql.update.run(
        channel.name,
        channel.leaderAgentId ?? null,
        JSON.stringify(channel.chain),
        channel.queueMode ?? null,
        channel.updatedAt,
        channel.id,
      );
      return channel;
    });
  }

  prefsOf(userId: string): Promise<Map<string, ChannelPrefs>> {
    return guard(this.#db, "read chat preferences from", () => prefsByChannel(this.#sql.prefsOf.all(userId)));
  }

  setPrefs(channelId: string, userId: string, prefs: ChannelPrefs): Promise<void> {
    return guard(this.#db, "save chat preferences in", () => {
      if (prefs.pinnedAt === undefined && prefs.archivedAt === undefined)
        this.#sql.clearPrefs.run(channelId, userId);
      else this.#sql.setPrefs.run(channelId, userId, prefs.pinnedAt ?? null, prefs.archivedAt ?? null);
    });
  }

  /** Deletes the channel; members, messages, markers and flows go with it (foreign keys). */
  delete(id: string): Promise<boolean> {
    return guard(this.#db, "delete a channel from", () => this.#sql.delete.run(id).changes > 0);
  }

  addMember(channelId: string, member: ChannelMember, at: number): Promise<void> {
    return guard(this.#db, "add a channel member in", () => {
      this.#sql.addMember.run(channelId, member.type, member.id, at);
    });
  }

  removeMember(channelId: string, member: ChannelMember): Promise<boolean> {
    return guard(
      this.#db,
      "remove a channel member in",
      () => this.#sql.removeMember.run(channelId, member.type, member.id).changes > 0,
    );
  }
}
