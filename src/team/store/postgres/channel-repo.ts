/** Channels with their members and collaboration chain, in PostgreSQL. */
import type { PgDatabase } from "../../../store/postgres/pg-database.js";
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

const MEMBER_ORDER = "ORDER BY added_at, member_type, member_id";
const ADD_MEMBER = `INSERT INTO team_channel_members (channel_id, member_type, member_id, added_at)
  VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING`;

export class PgChannelRepo implements ChannelRepository {
  constructor(private readonly db: PgDatabase) {}

  /** One round trip: the members come along as a JSON array of their rows. */
  async get(id: string): Promise<ChannelRecord | undefined> {
    const row = await this.db.one<ChannelRow & { members_json: MemberRow[] }>(
      `SELECT c.*, coalesce((SELECT json_agg(m ${MEMBER_ORDER}) FROM team_channel_members m
         WHERE m.channel_id = c.id), '[]') AS members_json
       FROM team_channels c WHERE c.id = $1`,
      [id],
    );
    if (!row) return undefined;
    const { members_json: members, ...channel } = row;
    return toChannel(channel, members);
  }

  /** One round trip: every agent, and the channel with its members, as JSON. */
  async getWithAgents(id: string): Promise<{ channel: ChannelRecord | undefined; agents: AgentRecord[] }> {
    const row = await this.db.one<{
      agents_json: AgentRow[] | null;
      channel_json: (ChannelRow & { members: MemberRow[] }) | null;
    }>(
      `SELECT (SELECT json_agg(a ORDER BY a.created_at, a.seq) FROM team_agents a) AS agents_json,
         (SELECT to_jsonb(c) || jsonb_build_object('members', coalesce((SELECT json_agg(m ${MEMBER_ORDER})
            FROM team_channel_members m WHERE m.channel_id = c.id), '[]'))
          FROM team_channels c WHERE c.id = $1) AS channel_json`,
      [id],
    );
    const agents = (row?.agents_json ?? []).map(toAgent);
    if (!row?.channel_json) return { channel: undefined, agents };
    const { members, ...channel } = row.channel_json;
    return { channel: toChannel(channel, members), agents };
  }

  async list(): Promise<ChannelRecord[]> {
    const [rows, members] = await Promise.all([
      this.db.many<ChannelRow>("SELECT * FROM team_channels ORDER BY created_at, seq"),
      this.db.many<MemberRow>(`SELECT * FROM team_channel_members ${MEMBER_ORDER}`),
    ]);
    const byChannel = membersByChannel(members);
    return rows.map((row) => toChannel(row, byChannel.get(row.id) ?? []));
  }

  async userMemberships(): Promise<Array<{ channelId: string; userId: string }>> {
    const rows = await this.db.many<MemberRow>(
      `SELECT * FROM team_channel_members WHERE member_type = 'user' ${MEMBER_ORDER}`,
    );
    return rows.map((m) => ({ channelId: m.channel_id, userId: m.member_id }));
  }

  async insert(channel: ChannelRecord): Promise<ChannelRecord> {
    await this.db.transaction(async (tx) => {
      await tx.run(
        `INSERT INTO team_channels (id, kind, name, leader_agent_id, chain_json, queue_mode, created_by, created_at,
           updated_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
        [
          channel.id,
          channel.kind,
          channel.name,
          channel.leaderAgentId ?? null,
          JSON.stringify(channel.chain),
          channel.queueMode ?? null,
          channel.createdBy,
          channel.createdAt,
          channel.updatedAt,
        ],
      );
      for (const member of channel.members) {
        await tx.run(ADD_MEMBER, [channel.id, member.type, member.id, channel.createdAt]);
      }
    });
    return channel;
  }

  async update(channel: ChannelRecord): Promise<ChannelRecord> {
    await this.db.run(
      `UPDATE team_channels SET name = $1, leader_agent_id = $2, chain_json = $3, queue_mode = $4, updated_at = $5
       WHERE id = $6`,
      [
        channel.name,
        channel.leaderAgentId ?? null,
        JSON.stringify(channel.chain),
        channel.queueMode ?? null,
        channel.updatedAt,
        channel.id,
      ],
    );
    return channel;
  }

  async prefsOf(userId: string): Promise<Map<string, ChannelPrefs>> {
    return prefsByChannel(
      await this.db.many<PrefsRow>(
        "SELECT channel_id, pinned_at, archived_at FROM team_channel_prefs WHERE user_id = $1",
        [userId],
      ),
    );
  }

  async setPrefs(channelId: string, userId: string, prefs: ChannelPrefs): Promise<void> {
    if (prefs.pinnedAt === undefined && prefs.archivedAt === undefined) {
      await this.db.run("DELETE FROM team_channel_prefs WHERE channel_id = $1 AND user_id = $2", [
        channelId,
        userId,
      ]);
      return;
    }
    await this.db.run(
      `INSERT INTO team_channel_prefs (channel_id, user_id, pinned_at, archived_at) VALUES ($1, $2, $3, $4)
       ON CONFLICT (channel_id, user_id) DO UPDATE SET pinned_at = excluded.pinned_at,
         archived_at = excluded.archived_at`,
      [channelId, userId, prefs.pinnedAt ?? null, prefs.archivedAt ?? null],
    );
  }

  async delete(id: string): Promise<boolean> {
    return (await this.db.run("DELETE FROM team_channels WHERE id = $1", [id])) > 0;
  }

  async addMember(channelId: string, member: ChannelMember, at: number): Promise<void> {
    await this.db.run(ADD_MEMBER, [channelId, member.type, member.id, at]);
  }

  async removeMember(channelId: string, member: ChannelMember): Promise<boolean> {
    const changed = await this.db.run(
      "DELETE FROM team_channel_members WHERE channel_id = $1 AND member_type = $2 AND member_id = $3",
      [channelId, member.type, member.id],
    );
    return changed > 0;
  }
}
