/**
 * Who sees a resource someone owns, as the web app edits it (src/shared/visibility.ts holds the
 * server's rule): the value a form holds, what a save sends, and who may change it.
 */
import type { Visibility } from "../../../src/shared/visibility.js";
import type { SessionUser } from "../types.js";

/** What a resource says about who sees it, as the API sends it (every field may be absent). */
export interface VisibleResource {
  ownerId?: string;
  visibility?: Visibility;
  allowedUsers?: string[];
}

/** The field's value: always a visibility and a list (empty unless `people`). */
export interface VisibilityValue {
  visibility: Visibility;
  allowedUsers: string[];
}

/** The value of a resource as loaded; a resource that says nothing is seen by everyone. */
export function visibilityOf(resource: VisibleResource | undefined): VisibilityValue {
  return {
    visibility: resource?.visibility ?? "everyone",
    allowedUsers: [...(resource?.allowedUsers ?? [])],
  };
}

/**
 * The fields to send when the value differs from the resource's; undefined when nothing changed, so
 * an edit by someone who may not change visibility does not touch it (and is not refused for it).
 */
export function visibilityPatch(
  value: VisibilityValue,
  resource: VisibleResource | undefined,
): VisibilityValue | undefined {
  const before = visibilityOf(resource);
  const people = value.visibility === "people" ? [...new Set(value.allowedUsers)] : [];
  const same =
    value.visibility === before.visibility &&
    people.length === before.allowedUsers.length &&
    people.every((id) => before.allowedUsers.includes(id));
  return same ? undefined : { visibility: value.visibility, allowedUsers: people };
}

/** True when the signed-in person may change who sees the resource: its owner or an admin. */
export function mayChangeVisibility(
  me: Pick<SessionUser, "id" | "role"> | undefined,
  resource: VisibleResource | undefined,
): boolean {
  if (!me) return false;
  if (me.role === "owner" || me.role === "admin") return true;
  // A new resource (undefined) will be the creator's.
  return resource === undefined || (resource.ownerId !== undefined && resource.ownerId === me.id);
}
