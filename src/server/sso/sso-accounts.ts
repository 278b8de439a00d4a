/**
 * Which account a checked provider identity signs in as: the one it signed in as before, else the
 * account whose username is its verified email, else a new one (when the provider makes accounts),
 * with the role its role claim maps to. Refusals say why and what to do.
 */

import { DimsumError } from "../../errors.js";
import { randomPassword } from "../auth/secrets.js";
import type { Role, UserRecord, UserRepository } from "../auth/user-store.js";
import type { SignInClaims } from "./oidc-client.js";
import type { SsoProvider, SsoStore } from "./sso-store.js";

/** Roles from most to least rights: of several matching claim values, the highest wins. */
const ROLE_ORDER: ReadonlyArray<Exclude<Role, "owner">> = ["admin", "member", "guest"];

/** The role a provider's role claim gives; undefined when the provider maps no claim. */
export function mappedRole(provider: SsoProvider, claims: Record<string, unknown>): Role | undefined {
  if (provider.roleClaim === "") return undefined;
  const raw = claims[provider.roleClaim];
  const values = (Array.isArray(raw) ? raw : raw === undefined ? [] : [raw]).map(String);
  const roles = values.map((v) => provider.roleMap[v]).filter((r) => r !== undefined);
  return ROLE_ORDER.find((r) => roles.includes(r)) ?? "member";
}

function refuse(message: string, hint: string): DimsumError {
  return new DimsumError("forbidden", message, { hint });
}

/** The domain part of an email, lowercased. */
function domainOf(email: string): string {
  return email.slice(email.lastIndexOf("@") + 1).toLowerCase();
}

/** Finds, links or makes the account; a `forbidden` DimsumError when this identity may not sign in. */
export async function accountFor(
  provider: SsoProvider,
  claims: SignInClaims,
  users: UserRepository,
  store: SsoStore,
): Promise<UserRecord> {
  const { email } = claims;
  if (!email || !claims.emailVerified) {
    throw refuse(
      `"${provider.name}" did not send a verified email for this account`,
      "verify the email with the provider, or ask an admin to check the provider's email claim",
    );
  }
  const allowed = provider.allowedDomains.map((d) => d.toLowerCase().replace(/^@/, ""));
  if (allowed.length > 0 && !allowed.includes(domainOf(email))) {
    throw refuse(
      `${email} may not sign in here: only ${allowed.map((d) => `@${d}`).join(", ")} addresses may`,
      "sign in with your company account",
    );
  }
  const role = mappedRole(provider, claims.all);
  const existing = await linked(provider, claims.subject, email, users, store);
  if (existing && (await users.isDisabled(existing.id))) {
    throw refuse(`the account ${existing.username} is disabled`, "ask an admin to enable it");
  }
  if (existing) {
    // The provider's groups are the source of truth for roles it maps; the owner stays owner.
    if (role && existing.role !== "owner" && existing.role !== role) {
      return (await users.update(existing.id, { role })) ?? existing;
    }
    return existing;
  }
  if (provider.newAccounts !== "create") {
    throw refuse(
      `there is no account for ${email} on this server`,
      "ask an admin to create one with your email as its username, then sign in again",
    );
  }
  // The password is random and never shown: the account signs in through the provider.
  const created = await users.create({
    username: email,
    password: randomPassword(32),
    role: role ?? "member",
  });
  await store.link(provider.id, claims.subject, created.id);
  return created;
}

/** The account this identity signed in as before, or the one named by its verified email (then linked). */
async function linked(
  provider: SsoProvider,
  subject: string,
  email: string,
  users: UserRepository,
  store: SsoStore,
): Promise<UserRecord | undefined> {
  const id = await store.linkedAccount(provider.id, subject);
  if (id) {
    const user = await users.get(id);
    if (user) return user;
    await store.unlink(provider.id, subject);
  }
  const byEmail = (await users.list()).find((u) => u.username.toLowerCase() === email);
  if (byEmail) await store.link(provider.id, subject, byEmail.id);
  return byEmail;
}
