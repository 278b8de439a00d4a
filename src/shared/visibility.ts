/**
 * Who may see and use a resource that belongs to someone: an agent, a knowledge base or an MCP
 * server. The one rule, for every route, socket frame, `/v1`, A2A and tool that reaches one:
 *
 * - owners and admins of the server see everything;
 * - `everyone`: every signed-in person;
 * - `people`: the resource's owner and the people listed in `allowedUsers`;
 * - `private`: the owner alone.
 *
 * A resource without an owner (made before owners existed) is seen by everyone whatever is stored.
 * A resource someone may not see is answered as if it did not exist (`resourceNotFound`).
 */
import { type DimsumError, invalid, notFound } from "../errors.js";

export const VISIBILITIES = ["everyone", "people", "private"] as const;
export type Visibility = (typeof VISIBILITIES)[number];

/** What a resource says about who sees it. */
export interface Visible {
  /** The person who made it; undefined: made before owners existed (seen by everyone). */
  ownerId?: string;
  visibility?: Visibility;
  /** The people who see it besides its owner (visibility `people`). */
  allowedUsers?: readonly string[];
}

/** The person asking: their account id and role (the team's `Actor`). */
export interface Viewer {
  userId: string;
  role: "owner" | "admin" | "member" | "guest";
}

/** Owners and admins of the server. */
function seesAll(viewer: Viewer): boolean {
  return viewer.role === "owner" || viewer.role === "admin";
}

/** True when the viewer may see and use the resource. */
export function canUseResource(viewer: Viewer, resource: Visible): boolean {
  if (seesAll(viewer) || resource.ownerId === undefined) return true;
  if (resource.ownerId === viewer.userId) return true;
  switch (resource.visibility ?? "everyone") {
    case "everyone":
      return true;
    case "people":
      return (resource.allowedUsers ?? []).includes(viewer.userId);
    case "private":
      return false;
  }
}

/** True when the viewer may change who sees the resource (its owner, or an admin). */
export function canChangeVisibility(viewer: Viewer, resource: Visible): boolean {
  return seesAll(viewer) || (resource.ownerId !== undefined && resource.ownerId === viewer.userId);
}

/**
 * The one answer for a resource the caller may not see, the same as for one that does not exist: a
 * 404 that names nothing, so an error reveals neither a private resource's name nor that it exists.
 */
export function resourceNotFound(kind: "agent" | "knowledge base" | "MCP server"): DimsumError {
  return notFound(
    `No such ${kind}, or it is not shared with you.`,
    `check the name, or ask its owner or an admin to share the ${kind} with you`,
  );
}

/** Checks a visibility setting from a caller: a known value and a list of person ids. */
export function checkVisibility(visibility: unknown, allowedUsers: unknown): void {
  if (visibility !== undefined && !VISIBILITIES.includes(visibility as Visibility)) {
    throw invalid(
      `Visibility "${String(visibility)}" is not known.`,
      "use everyone, people (the owner and the people listed) or private (the owner alone)",
    );
  }
  if (
    allowedUsers !== undefined &&
    (!Array.isArray(allowedUsers) || !allowedUsers.every((u) => typeof u === "string" && u !== ""))
  ) {
    throw invalid("The people who may see it must be a list of account ids.");
  }
}

/** The stored form of a resource's visibility: the columns `owner_id`, `visibility`, `allowed_json`. */
export interface VisibilityRow {
  owner_id?: string | null;
  visibility?: string | null;
  allowed_json?: string | null;
}

/**
 * Reads the visibility columns of a row; the defaults are left out (no owner, `everyone`, nobody
 * listed), so a resource stored before owners existed reads as it did. A damaged value reads as
 * `everyone` / nobody.
 */
export function visibleOf(row: VisibilityRow): StoredVisible {
  const out: StoredVisible = {};
  if (row.owner_id) out.ownerId = row.owner_id;
  if (VISIBILITIES.includes(row.visibility as Visibility) && row.visibility !== "everyone") {
    out.visibility = row.visibility as Visibility;
  }
  let allowed: unknown = [];
  try {
    allowed = JSON.parse(row.allowed_json ?? "[]");
  } catch {
    allowed = [];
  }
  const people = Array.isArray(allowed) ? allowed.filter((u): u is string => typeof u === "string") : [];
  if (people.length > 0) out.allowedUsers = people;
  return out;
}

/** `Visible` as records hold it (a list they own). */
export interface StoredVisible {
  ownerId?: string;
  visibility?: Visibility;
  allowedUsers?: string[];
}

/** The column values of a resource's visibility: owner_id, visibility, allowed_json. */
export function visibilityParams(resource: Visible): [string | null, Visibility, string] {
  return [
    resource.ownerId ?? null,
    resource.visibility ?? "everyone",
    JSON.stringify(resource.allowedUsers ?? []),
  ];
}
