/** A role as people read it, in their language. */
import { t } from "./i18n/index.js";
import type { Role } from "./types.js";

const ROLE_KEY = {
  owner: "role.owner",
  admin: "role.admin",
  member: "role.member",
  guest: "role.guest",
} as const;

export function roleName(role: Role): string {
  return t(ROLE_KEY[role]);
}
