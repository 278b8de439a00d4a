/**
 * The chats and people a connector has seen (Connectors → Chats): bind a chat to an existing group,
 * to a new group made from a team template, or keep it a direct chat with the connector's agent;
 * switch posting web messages to it; link a person to a web account.
 */
import { useEffect, useState } from "preact/hooks";
import { formatTime } from "../format.js";
import { useAction, useReportError, useServices } from "../hooks.js";
import { t } from "../i18n/index.js";
import type { ChannelSummary, SessionUser } from "../types.js";
import { type ChatView, type ConnectorView, connectorApi, type PersonView } from "./connector-api.js";

const DIRECT = "direct";
const TEMPLATE = "template:";

interface TeamTemplate {
  id: string;
  name: string;
  template: unknown;
}

function ChatRow(props: {
  connector: ConnectorView;
  chat: ChatView;
  groups: ChannelSummary[];
  templates: TeamTemplate[];
  onChanged: () => void;
}) {
  const { api } = useServices();
  const client = connectorApi(api);
  const { connector, chat } = props;
  const current = chat.mode === "group" && chat.channelId ? chat.channelId : DIRECT;
  const [choice, setChoice] = useState(current);
  const [bind, binding] = useAction(async () => {
    if (choice === DIRECT) await client.bindChat(connector.id, chat.chatId, { mode: "direct" });
    else if (choice.startsWith(TEMPLATE)) {
      const entry = props.templates.find((t) => t.id === choice.slice(TEMPLATE.length));
      const made = entry ? await api.importTemplate(entry.template) : undefined;
      if (!made?.channel) throw new Error(t("connector.chat.noGroup"));
      await client.bindChat(connector.id, chat.chatId, { mode: "group", channelId: made.channel.id });
    } else await client.bindChat(connector.id, chat.chatId, { mode: "group", channelId: choice });
    props.onChanged();
  }, t("connector.chat.bound"));
  const [mirror, mirroring] = useAction(async (on: boolean) => {
    await client.bindChat(connector.id, chat.chatId, { mirror: on });
    props.onChanged();
  });
  return (
    <li class="connector-chat" data-testid="connector-chat" data-chat-id={chat.chatId}>
      <div class="inline-form">
        <strong>{chat.name ?? chat.chatId}</strong>
        <span class="muted">
          {chat.group ? t("connector.chat.group") : t("connector.chat.private")} ·{" "}
          {t("connector.lastMessage", { time: formatTime(chat.lastAt) })}
        </span>
        <span class={chat.mode === "group" ? "badge badge-ok" : "badge"} data-testid="connector-chat-mode">
          {chat.mode === "group"
            ? t("connector.chat.modeGroup", { name: chat.channelName ?? "" })
            : t("connector.chat.modeDirect", { agent: connector.agentId })}
        </span>
      </div>
      <div class="inline-form">
        <select
          value={choice}
          onChange={(e) => setChoice(e.currentTarget.value)}
          aria-label={t("connector.chat.answerAs")}
          data-testid="connector-chat-choice"
        >
          <option value={DIRECT}>{t("connector.chat.keepDirect", { agent: connector.agentId })}</option>
          {props.groups.map((g) => (
            <option key={g.id} value={g.id}>
              {t("connector.chat.groupOption", { name: g.name })}
            </option>
          ))}
          {props.templates.map((tpl) => (
            <option key={tpl.id} value={`${TEMPLATE}${tpl.id}`}>
              {t("connector.chat.fromTemplate", { name: tpl.name })}
            </option>
          ))}
        </select>
        <button
          type="button"
          class="btn btn-small btn-primary"
          disabled={binding || choice === current}
          onClick={() => void bind()}
          data-testid="connector-chat-bind"
        >
          {t("connector.chat.bind")}
        </button>
        {chat.mode === "group" && (
          <label class="check">
            <input
              type="checkbox"
              checked={chat.mirror}
              disabled={mirroring}
              onChange={(e) => void mirror(e.currentTarget.checked)}
              data-testid="connector-chat-mirror"
            />
            {t("connector.chat.mirror")}
          </label>
        )}
      </div>
    </li>
  );
}

function PersonRow(props: {
  connector: ConnectorView;
  person: PersonView;
  users: SessionUser[];
  onChanged: () => void;
}) {
  const { api } = useServices();
  const { person } = props;
  const [userId, setUserId] = useState(person.linkedTo?.userId ?? "");
  const [save, saving] = useAction(async () => {
    await connectorApi(api).linkPerson(
      props.connector.id,
      person.externalUserId,
      userId === "" ? null : userId,
    );
    props.onChanged();
  }, t("connector.person.saved"));
  return (
    <li class="inline-form" data-testid="connector-person">
      <strong>{person.name ?? person.externalUserId}</strong>
      <span class="muted">
        {person.linkedTo
          ? t("connector.person.linked", { name: person.linkedTo.username })
          : t("connector.person.guest")}
      </span>
      <select
        value={userId}
        onChange={(e) => setUserId(e.currentTarget.value)}
        aria-label={t("connector.person.account", { name: person.name ?? person.externalUserId })}
      >
        <option value="">{t("connector.person.notLinked")}</option>
        {props.users
          .filter((u) => u.role !== "guest")
          .map((u) => (
            <option key={u.id} value={u.id}>
              {u.username}
            </option>
          ))}
      </select>
      <button
        type="button"
        class="btn btn-small"
        disabled={saving || userId === (person.linkedTo?.userId ?? "")}
        onClick={() => void save()}
      >
        {t("connector.save")}
      </button>
    </li>
  );
}

/** The chats and people of one connector. */
export function ConnectorChats({ connector }: { connector: ConnectorView }) {
  const { api } = useServices();
  const report = useReportError();
  const [chats, setChats] = useState<ChatView[] | undefined>(undefined);
  const [people, setPeople] = useState<PersonView[]>([]);
  const [groups, setGroups] = useState<ChannelSummary[]>([]);
  const [templates, setTemplates] = useState<TeamTemplate[]>([]);
  const [users, setUsers] = useState<SessionUser[]>([]);
  const client = connectorApi(api);
  const reload = () =>
    Promise.all([client.chats(connector.id), client.people(connector.id)])
      .then(([c, p]) => {
        setChats(c);
        setPeople(p);
      })
      .catch(report);
  useEffect(() => {
    void reload();
    api
      .listChannels()
      .then((all) => setGroups(all.filter((c) => c.kind === "group")))
      .catch(report);
    api
      .listTemplates()
      .then((all) =>
        setTemplates(
          all
            .filter((e) => e.template.kind === "team")
            .map((e) => ({ id: e.id, name: e.template.name, template: e.template })),
        ),
      )
      .catch(report);
    api.listUsers().then(setUsers).catch(report);
  }, [api, connector.id]);

  if (chats === undefined) return <p class="muted">{t("connector.chat.loading")}</p>;
  return (
    <div class="connector-chats" data-testid="connector-chats">
      <h4>{t("connector.chats")}</h4>
      {chats.length === 0 ? (
        <p class="muted">{t("connector.chat.empty")}</p>
      ) : (
        <ul class="mcp-list">
          {chats.map((chat) => (
            <ChatRow
              key={`${chat.chatId}:${chat.mode}:${chat.channelId ?? ""}`}
              connector={connector}
              chat={chat}
              groups={groups}
              templates={templates}
              onChanged={() => void reload()}
            />
          ))}
        </ul>
      )}
      <h4>{t("connector.people")}</h4>
      {people.length === 0 ? (
        <p class="muted">{t("connector.person.empty")}</p>
      ) : (
        <ul class="mcp-list">
          {people.map((person) => (
            <PersonRow
              key={`${person.externalUserId}:${person.linkedTo?.userId ?? ""}`}
              connector={connector}
              person={person}
              users={users}
              onChanged={() => void reload()}
            />
          ))}
        </ul>
      )}
    </div>
  );
}
