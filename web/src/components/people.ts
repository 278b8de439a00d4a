/**
 * People's names for lines like "Approved by …": "you" for the reader, the username where the
 * reader may list users (owners and admins); otherwise unknown (the caller words it without a name
 * rather than show a bare user id).
 */
import { useEffect, useState } from "preact/hooks";
import type { ApiClient } from "../api.js";
import { useSelector, useServices } from "../hooks.js";
import { t } from "../i18n/index.js";
import type { ChannelRecord, SessionUser } from "../types.js";

/** One listing per API client (a session), shared by every component that names people. */
const listed = new WeakMap<ApiClient, Promise<Map<string, string>>>();

function usernames(api: ApiClient): Promise<Map<string, string>> {
  let names = listed.get(api);
  if (!names) {
    names = api
      .listUsers()
      .then((users) => new Map(users.map((u) => [u.id, u.username])))
      .catch(() => new Map<string, string>());
    listed.set(api, names);
  }
  return names;
}

/** The signed-in person, if any. */
export function useMe(): SessionUser | undefined {
  return useSelector((s) => (s.auth.phase === "ready" ? s.auth.user : undefined));
}

/** Names a person by id: "you", or their username when known; undefined when not known. */
export function usePersonName(): (id: string | undefined) => string | undefined {
  const { api } = useServices();
  const me = useMe();
  const mayList = me?.role === "owner" || me?.role === "admin";
  const [names, setNames] = useState<Map<string, string> | undefined>(undefined);
  useEffect(() => {
    if (!mayList) return;
    let live = true;
    void usernames(api).then((found) => live && setNames(found));
    return () => {
      live = false;
    };
  }, [api, mayList]);
  return (id) => {
    if (id === undefined || id === "") return undefined;
    if (id === me?.id) return t("people.you");
    return names?.get(id);
  };
}

/**
 * The usernames of a chat's people by id, for anyone who may read the chat (members included, who
 * may not list accounts): fetched again when its people change.
 */
export function useChannelPeople(
  channel: Pick<ChannelRecord, "id" | "members"> | undefined,
): Map<string, string> {
  const { api } = useServices();
  const [names, setNames] = useState<Map<string, string>>(() => new Map());
  const id = channel?.id;
  const key = channel ? channel.members.flatMap((m) => (m.type === "user" ? [m.id] : [])).join(",") : "";
  useEffect(() => {
    if (id === undefined || key === "") return;
    let live = true;
    api
      .channelPeople(id)
      .then((people) => live && setNames(new Map(people.map((p) => [p.id, p.username]))))
      .catch(() => undefined);
    return () => {
      live = false;
    };
  }, [api, id, key]);
  return names;
}
