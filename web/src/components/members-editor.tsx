/** A channel's members (agents and people): list, remove, add. */
import { useEffect, useState } from "preact/hooks";
import { useAction, useServices } from "../hooks.js";
import { t } from "../i18n/index.js";
import type { AgentRecord, ChannelMember, ChannelRecord, SessionUser } from "../types.js";
import { useChannelPeople } from "./people.js";

export interface MembersEditorProps {
  channel: ChannelRecord;
  agents: AgentRecord[];
  me: SessionUser;
  canEdit: boolean;
}

/** The members section of the channel settings. */
export function MembersEditor({ channel, agents, me, canEdit }: MembersEditorProps) {
  const { api, store } = useServices();
  const [users, setUsers] = useState<SessionUser[] | undefined>(undefined);
  const [agentToAdd, setAgentToAdd] = useState("");
  const [userToAdd, setUserToAdd] = useState("");
  const isAdmin = me.role === "owner" || me.role === "admin";
  const people = useChannelPeople(channel);

  useEffect(() => {
    if (!isAdmin) return;
    api
      .listUsers()
      .then(setUsers)
      .catch(() => setUsers(undefined));
  }, [api, isAdmin]);

  const [change, busy] = useAction(async (member: ChannelMember, add: boolean) => {
    const updated = add
      ? await api.addMember(channel.id, member)
      : await api.removeMember(channel.id, member);
    store.dispatch({ type: "channel_saved", channel: updated });
  });

  const agentById = new Map(agents.map((a) => [a.id, a]));
  const userById = new Map((users ?? []).map((u) => [u.id, u]));
  const memberKey = (m: ChannelMember) => `${m.type}:${m.id}`;
  const present = new Set(channel.members.map(memberKey));
  const addableAgents = agents.filter((a) => !present.has(`agent:${a.id}`));
  const addableUsers = (users ?? []).filter((u) => !present.has(`user:${u.id}`));

  const label = (m: ChannelMember) => {
    if (m.type === "agent") {
      const agent = agentById.get(m.id);
      return `${agent?.emoji ?? "🤖"} ${agent?.name ?? m.id} (@${m.id})`;
    }
    if (m.id === me.id) return `🙂 ${me.username} ${t("memory.youMark")}`;
    return `🙂 ${userById.get(m.id)?.username ?? people.get(m.id) ?? m.id}`;
  };

  return (
    <section class="form" data-testid="members-editor">
      <h3>{t("members.title")}</h3>
      <ul class="member-list">
        {channel.members.map((member) => (
          <li
            key={memberKey(member)}
            class="member"
            data-testid="member"
            data-member-type={member.type}
            data-member-id={member.id}
          >
            <span>{label(member)}</span>
            {channel.leaderAgentId === member.id && member.type === "agent" && (
              <span class="badge">{t("members.leader")}</span>
            )}
            {canEdit && (
              <button
                type="button"
                class="btn btn-small"
                disabled={busy}
                onClick={() => void change(member, false)}
                data-testid="member-remove"
              >
                {t("members.remove")}
              </button>
            )}
          </li>
        ))}
      </ul>
      {canEdit && (
        <div class="member-add">
          <select
            value={agentToAdd}
            onChange={(e) => setAgentToAdd(e.currentTarget.value)}
            data-testid="member-add-agent"
          >
            <option value="">{t("members.addAgent")}</option>
            {addableAgents.map((a) => (
              <option key={a.id} value={a.id}>
                {a.emoji} {a.name}
              </option>
            ))}
          </select>
          <button
            type="button"
            class="btn btn-small"
            disabled={!agentToAdd || busy}
            onClick={() => void change({ type: "agent", id: agentToAdd }, true).then(() => setAgentToAdd(""))}
            data-testid="member-add-agent-submit"
          >
            {t("members.add")}
          </button>
          {users ? (
            <select
              value={userToAdd}
              onChange={(e) => setUserToAdd(e.currentTarget.value)}
              data-testid="member-add-user"
            >
              <option value="">{t("members.addPerson")}</option>
              {addableUsers.map((u) => (
                <option key={u.id} value={u.id}>
                  {u.username} ({u.role})
                </option>
              ))}
            </select>
          ) : (
            <input
              placeholder={t("members.userIdPlaceholder")}
              value={userToAdd}
              onInput={(e) => setUserToAdd(e.currentTarget.value.trim())}
              data-testid="member-add-user"
            />
          )}
          <button
            type="button"
            class="btn btn-small"
            disabled={!userToAdd || busy}
            onClick={() => void change({ type: "user", id: userToAdd }, true).then(() => setUserToAdd(""))}
            data-testid="member-add-user-submit"
          >
            {t("members.add")}
          </button>
        </div>
      )}
    </section>
  );
}
