/**
 * Who sees a resource someone owns (an agent, a knowledge base, an MCP server): Everyone, Chosen
 * people (with a picker of accounts) or Only me, with the owner named. Read-only for a viewer who is
 * neither the owner nor an admin (the server answers 403 to them anyway). See src/shared/visibility.ts.
 */
import { useEffect, useState } from "preact/hooks";
import type { Visibility } from "../../../src/shared/visibility.js";
import { useServices } from "../hooks.js";
import { type MessageKey, t } from "../i18n/index.js";
import { mayChangeVisibility, type VisibilityValue, type VisibleResource } from "../state/visibility.js";
import type { SessionUser } from "../types.js";
import { useMe, usePersonName } from "./people.js";

export {
  mayChangeVisibility,
  type VisibilityValue,
  type VisibleResource,
  visibilityOf,
  visibilityPatch,
} from "../state/visibility.js";

/** The accounts the picker offers; undefined when the viewer may not list them (members). */
function useAccounts(enabled: boolean): SessionUser[] | undefined {
  const { api } = useServices();
  const [users, setUsers] = useState<SessionUser[] | undefined>(undefined);
  useEffect(() => {
    if (!enabled) return;
    let live = true;
    api
      .listUsers()
      .then((list) => live && setUsers(list.filter((u) => !u.disabled)))
      .catch(() => live && setUsers(undefined));
    return () => {
      live = false;
    };
  }, [api, enabled]);
  return users;
}

export interface VisibilityFieldProps {
  /** The resource as loaded; undefined while creating one (the creator will own it). */
  resource: VisibleResource | undefined;
  value: VisibilityValue;
  onChange: (value: VisibilityValue) => void;
  /** Read-only even for its owner (the surrounding form is read-only). */
  disabled?: boolean;
  /** Tells radio groups of several fields on one page apart. */
  name?: string;
  testId?: string;
}

const CHOICES: ReadonlyArray<{ value: Visibility; label: MessageKey; help: MessageKey }> = [
  { value: "everyone", label: "visibility.everyone", help: "visibility.everyoneHelp" },
  { value: "people", label: "visibility.people", help: "visibility.peopleHelp" },
  { value: "private", label: "visibility.private", help: "visibility.privateHelp" },
];

/** The Visibility control. */
export function VisibilityField({
  resource,
  value,
  onChange,
  disabled,
  name = "visibility",
  testId = "visibility",
}: VisibilityFieldProps) {
  const me = useMe();
  const personName = usePersonName();
  const canChange = mayChangeVisibility(me, resource) && !disabled;
  const mayList = me?.role === "owner" || me?.role === "admin";
  const accounts = useAccounts(canChange && mayList && value.visibility === "people");
  const ownerId = resource ? resource.ownerId : me?.id;

  const owner =
    resource === undefined
      ? t("visibility.newOwner")
      : ownerId === undefined
        ? t("visibility.noOwner")
        : t("visibility.owner", { name: personName(ownerId) ?? t("visibility.ownerUnknown") });

  const toggle = (id: string, on: boolean) => {
    const rest = value.allowedUsers.filter((u) => u !== id);
    onChange({ ...value, allowedUsers: on ? [...rest, id] : rest });
  };
  // Accounts to pick from: everyone but the owner (who always sees it), plus anyone already chosen
  // the list does not hold (a member who cannot list accounts still sees and keeps them).
  const listed = (accounts ?? []).filter((u) => u.id !== ownerId);
  const listedIds = new Set(listed.map((u) => u.id));
  const extra = value.allowedUsers.filter((id) => !listedIds.has(id));

  return (
    <fieldset class="field field-wide visibility-field" data-testid={testId} disabled={!canChange}>
      <legend>{t("visibility.legend")}</legend>
      <p class="muted field-help" data-testid={`${testId}-owner`}>
        {owner}
      </p>
      <div class="visibility-choices" role="radiogroup" aria-label={t("visibility.legend")}>
        {CHOICES.map((choice) => (
          <label key={choice.value} class="check visibility-choice">
            <input
              type="radio"
              name={name}
              value={choice.value}
              checked={value.visibility === choice.value}
              onChange={() => onChange({ ...value, visibility: choice.value })}
              data-testid={`${testId}-${choice.value}`}
            />
            <span>
              <strong>{t(choice.label)}</strong>
              <span class="muted"> — {t(choice.help)}</span>
            </span>
          </label>
        ))}
      </div>
      {value.visibility === "people" && (
        <div class="check-list visibility-people" data-testid={`${testId}-people`}>
          <span class="field-label">{t("visibility.pick")}</span>
          {canChange && mayList && accounts !== undefined && listed.length === 0 && extra.length === 0 && (
            <p class="muted">{t("visibility.noPeople")}</p>
          )}
          {canChange && !mayList && <p class="muted">{t("visibility.cannotList")}</p>}
          {listed.map((user) => (
            <label key={user.id} class="check">
              <input
                type="checkbox"
                checked={value.allowedUsers.includes(user.id)}
                onChange={(e) => toggle(user.id, e.currentTarget.checked)}
                data-testid={`${testId}-person-${user.username}`}
              />
              <span>{user.username}</span>
            </label>
          ))}
          {extra.map((id) => (
            <label key={id} class="check">
              <input
                type="checkbox"
                checked
                onChange={(e) => toggle(id, e.currentTarget.checked)}
                data-testid={`${testId}-person-${id}`}
              />
              <span>{personName(id) ?? id}</span>
            </label>
          ))}
        </div>
      )}
      {!canChange && !disabled && (
        <p class="muted field-help" data-testid={`${testId}-readonly`}>
          {t("visibility.readOnly")}
        </p>
      )}
    </fieldset>
  );
}

/** A small lock / people mark for a list row of a resource not shared with everyone; nothing otherwise. */
export function VisibilityBadge({ resource }: { resource: VisibleResource }) {
  const visibility = resource.ownerId === undefined ? "everyone" : (resource.visibility ?? "everyone");
  if (visibility === "everyone") return null;
  const label = visibility === "private" ? t("visibility.badgePrivate") : t("visibility.badgePeople");
  return (
    <span
      class={`visibility-badge visibility-badge-${visibility}`}
      title={label}
      role="img"
      aria-label={label}
      data-testid={`visibility-badge-${visibility}`}
    >
      {visibility === "private" ? "🔒" : "👥"}
    </span>
  );
}
