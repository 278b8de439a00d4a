/** Channels with their members and collaboration chain, one repository over SQLite and PostgreSQL. */
import { many, one, run, type SqlDatabase, sql } from "../../store/sql-database.js";
import type { AgentRecord, ChannelMember, ChannelRecord } from "../types.js";
import { AGENT_SQL } from "./agent-repo.js";
import type { ChannelPrefs, ChannelRepository } from "./repositories.js";
import {
  type AgentRow,
  type ChannelRow,
  type MemberRow,
  membersByChannel,
  type PrefsRow,
  prefsByChannel,
  toAgent,
  toChannel,
} from "./rows.js";

const MEMBER_ORDER = "ORDER BY added_at, member_type, member_id";

/** A channel row with its members as JSON: text from SQLite, parsed already by the pg driver. */
type ChannelWithMembers = ChannelRow & { members_json: string | MemberRow[] };

const SQL = {
  // One statement: the members come along as a JSON array.
  get: sql({
    sqlite: `SELECT c.*, (SELECT json_group_array(json_object('member_type', member_type, 'member_id', member_id))
        FROM (SELECT member_type, member_id FROM team_channel_members WHERE channel_id = c.id ${MEMBER_ORDER}))
        AS members_json
      FROM team_channels c WHERE c.id = ?`,
    postgres: `SELECT c.*, coalesce((SELECT json_agg(m ${MEMBER_ORDER}) FROM team_channel_members m
        WHERE m.channel_id = c.id), '[]') AS members_json
      FROM team_channels c WHERE c.id = ?`,
  }),
  /** PostgreSQL: the channel with its members and every agent, as JSON, in one round trip. */
  withAgents: sql(
    `SELECT (SELECT json_agg(a ORDER BY a.created_at, a.seq) FROM team_agents a) AS agents_json,
       (SELECT to_jsonb(c) || jsonb_build_object('members', coalesce((SELECT json_agg(m ${MEMBER_ORDER})
          FROM team_channel_members m WHERE m.channel_id = c.id), '[]'))
        FROM team_channels c WHERE c.id = ?) AS channel_json`,
  ),
  list: sql({
    sqlite: "SELECT * FROM team_channels ORDER BY created_at, rowid",
    postgres: "SELECT * FROM team_channels ORDER BY created_at, seq",
  }),
  allMembers: sql(`SELECT * FROM team_channel_members ${MEMBER_ORDER}`),
  userMembers: sql(`SELECT * FROM team_channel_members WHERE member_type = 'user' ${MEMBER_ORDER}`),
  insert: sql(
    `INSERT INTO team_channels (id, kind, name, leader_agent_id, chain_json, queue_mode, created_by, created_at,
       updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  ),
  update: sql(
    `UPDATE team_channels SET name = ?, leader_agent_id = ?, chain_json = ?, queue_mode = ?, updated_at = ?
     WHERE id = ?`,
  ),
  delete: sql("DELETE FROM team_channels WHERE id = ?"),
  addMember: sql(
    `INSERT INTO team_channel_members (channel_id, member_type, member_id, added_at) VALUES (?, ?, ?, ?)
     ON CONFLICT DO NOTHING`,
  ),
  removeMember: sql(
    "DELETE FROM team_channel_members WHERE channel_id = ? AND member_type = ? AND member_id = ?",
  ),
  prefsOf: sql("SELECT channel_id, pinned_at, archived_at FROM team_channel_prefs WHERE user_id = ?"),
  setPrefs: sql(
    `INSERT INTO team_channel_prefs (channel_id, user_id, pinned_at, archived_at) VALUES (?, ?, ?, ?)
     ON CONFLICT (channel_id, user_id) DO UPDATE SET pinned_at = excluded.pinned_at,
       archived_at = excluded.archived_at`,
  ),
  clearPrefs: sql("DELETE FROM team_channel_prefs WHERE channel_id = ? AND user_id = ?"),
} as const;

function channelOf(row: ChannelWithMembers | undefined): ChannelRecord | undefined {
  if (!row) return undefined;
  const { members_json: members, ...channel } = row;
  return toChannel(channel, typeof members === "string" ? (JSON.parse(members) as MemberRow[]) : members);
}

const READ = "read a channel from";

/** The channel tables. */
export class ChannelRepo implements ChannelRepository {
  constructor(private readonly db: SqlDatabase) {}

  async get(id: string): Promise<ChannelRecord | undefined> {
    return channelOf(await this.db.one<ChannelWithMembers>(READ, SQL.get, [id]));
  }

  /** The channel and every agent as of one moment: one statement on PostgreSQL, a transaction on SQLite. */
  async getWithAgents(id: string): Promise<{ channel: ChannelRecord | undefined; agents: AgentRecord[] }> {
    if (this.db.dialect === "postgres") {
      const row = await this.db.one<{
        agents_json: AgentRow[] | null;
        channel_json: (ChannelRow & { members: MemberRow[] }) | null;
      }>(READ, SQL.withAgents, [id]);
      const agents = (row?.agents_json ?? []).map(toAgent);
      if (!row?.channel_json) return { channel: undefined, agents };
      const { members, ...channel } = row.channel_json;
      return { channel: toChannel(channel, members), agents };
    }
    return this.db.transaction(READ, function* () {
      const channel = channelOf(yield* one<ChannelWithMembers>(SQL.get, [id]));
      return { channel, agents: (yield* many<AgentRow>(AGENT_SQL.list)).map(toAgent) };
    });
  }

  /** Every channel, oldest first. */
  async list(): Promise<ChannelRecord[]> {
    const [rows, members] = await Promise.all([
      this.db.many<ChannelRow>("read channels from", SQL.list),
      this.db.many<MemberRow>("read channels from", SQL.allMembers),
    ]);
    const byChannel = membersByChannel(members);
    return rows.map((row) => toChannel(row, byChannel.get(row.id) ?? []));
  }

  /** Every (channel, person) membership, for the in-memory visibility index. */
  async userMemberships(): Promise<Array<{ channelId: string; userId: string }>> {
    const rows = await this.db.many<MemberRow>("read channel members from", SQL.userMembers);
    return rows.map((m) => ({ channelId: m.channel_id, userId: m.member_id }));
  }

  /** Inserts the channel and its members in one transaction. */
  async insert(channel: ChannelRecord): Promise<ChannelRecord> {
    await this.db.transaction("save a channel in", function* () {
      yield* run(SQL.insert, [
        channel.id,
        channel.kind,
        channel.name,
        channel.leaderAgentId ?? null,
        JSON.stringify(channel.chain),
        channel.queueMode ?? null,
        channel.createdBy,
        channel.createdAt,
        channel.updatedAt,
      ]);
      for (const member of channel.members) {
        yield* run(SQL.addMember, [channel.id, member.type, member.id, channel.createdAt]);
      }
    });
    return channel;
  }

  /** Saves name, leader, chain and queue mode. */
  async update(channel: ChannelRecord): Promise<ChannelRecord> {
    await this.db.run("save a channel in", SQL.update, [
      channel.name,
      channel.leaderAgentId ?? null,
      JSON.stringify(channel.chain),
      channel.queueMode ?? null,
      channel.updatedAt,
      channel.id,
    ]);
    return channel;
  }

  async prefsOf(userId: string): Promise<Map<string, ChannelPrefs>> {
    return prefsByChannel(await this.db.many<PrefsRow>("read chat preferences from", SQL.prefsOf, [userId]));
  }

  async setPrefs(channelId: string, userId: string, prefs: ChannelPrefs): Promise<void> {
    const action = "save chat preferences in";
    if (prefs.pinnedAt === undefined && prefs.archivedAt === undefined) {
      await this.db.run(action, SQL.clearPrefs, [channelId, userId]);
    } else {
      await this.db.run(action, SQL.setPrefs, [
        channelId,
        userId,
        prefs.pinnedAt ?? null,
        prefs.archivedAt ?? null,
      ]);
    }
  }

  /** Deletes the channel; members, messages, markers and flows go with it (foreign keys). */
  async delete(id: string): Promise<boolean> {
    return (await this.db.run("delete a channel from", SQL.delete, [id])) > 0;
  }

  async addMember(channelId: string, member: ChannelMember, at: number): Promise<void> {
    await this.db.run("add a channel member in", SQL.addMember, [channelId, member.type, member.id, at]);
  }

  async removeMember(channelId: string, member: ChannelMember): Promise<boolean> {
    const changed = await this.db.run("remove a channel member in", SQL.removeMember, [
      channelId,
      member.type,
      member.id,
    ]);
    return changed > 0;
  }
}
