/** Creates a direct chat with one agent or a group of agents (and, for admins, other people). */
import { useEffect, useState } from "preact/hooks";
import { useAction, useSelector, useServices } from "../hooks.js";
import { t } from "../i18n/index.js";
import type { ChannelKind, SessionUser } from "../types.js";

export interface NewChannelFormProps {
  onDone: () => void;
}

/**
 * A default chat name no other chat of the list has: the agent's name, then "Name 2", "Name 3"…
 * (the chat is renamed after its first exchange anyway; until then two chats stay apart).
 */
export function distinctName(base: string, taken: readonly string[]): string {
  const names = new Set(taken.map((n) => n.toLowerCase()));
  if (!names.has(base.toLowerCase())) return base;
  for (let n = 2; ; n += 1) if (!names.has(`${base} ${n}`.toLowerCase())) return `${base} ${n}`;
}

/** The form inside the "new chat" dialog. */
export function NewChannelForm({ onDone }: NewChannelFormProps) {
  const { api, store, navigate } = useServices();
  const agents = useSelector((s) => s.agents);
  const channels = useSelector((s) => s.channels.list);
  const auth = useSelector((s) => s.auth);
  const me = auth.phase === "ready" ? auth.user : undefined;
  const [kind, setKind] = useState<ChannelKind>("direct");
  const [name, setName] = useState("");
  const [agentIds, setAgentIds] = useState<string[]>([]);
  const [userIds, setUserIds] = useState<string[]>([]);
  const [leader, setLeader] = useState("");
  const [users, setUsers] = useState<SessionUser[]>([]);

  useEffect(() => {
    if (me?.role !== "owner" && me?.role !== "admin") return;
    api
      .listUsers()
      .then((list) => setUsers(list.filter((u) => u.id !== me.id)))
      .catch(() => setUsers([]));
  }, [api, me?.id, me?.role]);

  const toggle = (list: string[], id: string, on: boolean) =>
    on ? [...list, id] : list.filter((x) => x !== id);

  const [create, busy] = useAction(async () => {
    const chosen = kind === "direct" ? agentIds.slice(0, 1) : agentIds;
    const agent = agents.find((a) => a.id === chosen[0]);
    if (kind === "direct" && !agent) throw new Error(t("newChat.pickAgent"));
    const channelName =
      name.trim() ||
      (kind === "direct" && agent
        ? distinctName(
            agent.name,
            channels.map((c) => c.name),
          )
        : "");
    if (!channelName) throw new Error(t("newChat.nameGroup"));
    if (chosen.length === 0) throw new Error(t("newChat.pickAgents"));
    const leaderAgentId = kind === "direct" ? chosen[0] : leader || undefined;
    const channel = await api.createChannel({
      kind,
      name: channelName,
      agentIds: chosen,
      userIds: kind === "group" ? userIds : [],
      ...(leaderAgentId ? { leaderAgentId } : {}),
    });
    store.dispatch({ type: "channel_saved", channel });
    onDone();
    navigate({ name: "channel", channelId: channel.id });
  });

  return (
    <form
      class="form"
      data-testid="new-channel-form"
      onSubmit={(e) => {
        e.preventDefault();
        void create();
      }}
    >
      <div class="segmented" role="radiogroup" aria-label={t("newChat.kind")}>
        {(["direct", "group"] as const).map((k) => (
          <label key={k} class={kind === k ? "active" : ""} data-testid={`new-channel-kind-${k}`}>
            <input type="radio" name="kind" value={k} checked={kind === k} onChange={() => setKind(k)} />
            {k === "direct" ? t("newChat.direct") : t("newChat.group")}
          </label>
        ))}
      </div>
      <label class="field">
        <span>{kind === "direct" ? t("newChat.nameOptional") : t("newChat.name")}</span>
        <input
          value={name}
          maxLength={100}
          placeholder={
            kind === "direct" ? t("newChat.namePlaceholderDirect") : t("newChat.namePlaceholderGroup")
          }
          onInput={(e) => setName(e.currentTarget.value)}
          data-testid="new-channel-name"
        />
      </label>
      <fieldset class="field">
        <legend>{kind === "direct" ? t("newChat.agent") : t("newChat.agents")}</legend>
        {agents.length === 0 && <p class="muted">{t("newChat.noAgents")}</p>}
        <div class="check-list">
          {agents.map((agent) => (
            <label key={agent.id} class="check">
              <input
                type={kind === "direct" ? "radio" : "checkbox"}
                name="agent"
                checked={agentIds.includes(agent.id)}
                onChange={(e) =>
                  setAgentIds(
                    kind === "direct" ? [agent.id] : toggle(agentIds, agent.id, e.currentTarget.checked),
                  )
                }
                data-testid={`new-channel-agent-${agent.id}`}
              />
              <span class="check-text">
                <span aria-hidden="true">{agent.emoji}</span> {agent.name} <code>@{agent.id}</code>
              </span>
            </label>
          ))}
        </div>
      </fieldset>
      {kind === "group" && (
        <label class="field">
          <span>{t("newChat.leader")}</span>
          <select
            value={leader}
            onChange={(e) => setLeader(e.currentTarget.value)}
            data-testid="new-channel-leader"
          >
            <option value="">{t("newChat.noLeader")}</option>
            {agents
              .filter((a) => agentIds.includes(a.id))
              .map((a) => (
                <option key={a.id} value={a.id}>
                  {a.emoji} {a.name}
                </option>
              ))}
          </select>
        </label>
      )}
      {kind === "group" && users.length > 0 && (
        <fieldset class="field">
          <legend>{t("newChat.people")}</legend>
          <div class="check-list">
            {users.map((user) => (
              <label key={user.id} class="check">
                <input
                  type="checkbox"
                  checked={userIds.includes(user.id)}
                  onChange={(e) => setUserIds(toggle(userIds, user.id, e.currentTarget.checked))}
                  data-testid={`new-channel-user-${user.username}`}
                />
                {user.username} <span class="muted">({user.role})</span>
              </label>
            ))}
          </div>
        </fieldset>
      )}
      <div class="form-actions">
        <button type="button" class="btn" onClick={onDone}>
          {t("common.cancel")}
        </button>
        <button type="submit" class="btn btn-primary" disabled={busy} data-testid="new-channel-submit">
          {t("newChat.create")}
        </button>
      </div>
    </form>
  );
}
