/**
 * Who may do what. Owners and admins may do everything. Members see and post in channels they belong
 * to, may create channels (joining them) and manage the ones they belong to. Guests only read and post
 * where they were added. Agents are managed by owners and admins; everyone may list them.
 */
import { type DimsumError, forbidden, notFound } from "../errors.js";
import type { Actor, ChannelRecord } from "./types.js";

/** Owners and admins. */
export function isAdmin(actor: Actor): boolean {
  return actor.role === "owner" || actor.role === "admin";
}

/** True when the person is a member of the channel. */
export function isMember(actor: Actor, channel: ChannelRecord): boolean {
  return channel.members.some((m) => m.type === "user" && m.id === actor.userId);
}

/** May read the channel, its messages, runs and flows, and post in it. */
export function canSeeChannel(actor: Actor, channel: ChannelRecord): boolean {
  return isAdmin(actor) || isMember(actor, channel);
}

/** May rename it, change members, leader and chain, and act on its flows. */
export function canManageChannel(actor: Actor, channel: ChannelRecord): boolean {
  return isAdmin(actor) || (actor.role === "member" && isMember(actor, channel));
}

/**
 * The one answer for a channel the caller may not see, the same as for one that does not exist:
 * a 404 that names nothing, so errors reveal neither a private channel's name nor that it exists.
 * Runs, flows and messages of such a channel get the same treatment (see team.ts).
 */
export function channelNotFound(): DimsumError {
  return notFound(
    "Channel not found, or you are not a member of it.",
    "check the id, or ask a member or an admin to add you",
  );
}

/** Throws `not_found` (see `channelNotFound`) unless the actor may see the channel. */
export function assertCanSee(actor: Actor, channel: ChannelRecord): void {
  if (!canSeeChannel(actor, channel)) throw channelNotFound();
}

/** Throws `forbidden` unless the actor may manage the channel (`not_found` when they cannot see it). */
export function assertCanManage(actor: Actor, channel: ChannelRecord): void {
  assertCanSee(actor, channel);
  if (!canManageChannel(actor, channel)) {
    throw forbidden("Guests cannot manage this channel or its flows.", "ask a member or an admin to do it");
  }
}

/** Throws `forbidden` for guests, who cannot create channels. */
export function assertCanCreateChannel(actor: Actor): void {
  if (actor.role === "guest") {
    throw forbidden("Guests cannot create channels.", "ask a member or an admin to invite you to one");
  }
}

/** Throws `forbidden` unless the actor is an owner or admin (agents, personas). */
export function assertCanManageAgents(actor: Actor): void {
  if (!isAdmin(actor)) {
    throw forbidden("Only owners and admins can create, change or delete agents.", "ask an admin");
  }
}

/** Throws `forbidden` for guests: personas and the direct API are for members and up. */
export function assertNotGuest(actor: Actor, what: string): void {
  if (actor.role === "guest") throw forbidden(`Guests cannot ${what}.`, "ask a member or an admin");
}

/** Throws `forbidden` unless the actor wrote the message or is an admin. */
export function assertCanDeleteMessage(
  actor: Actor,
  channel: ChannelRecord,
  authorUserId: string | undefined,
): void {
  assertCanSee(actor, channel);
  if (!isAdmin(actor) && authorUserId !== actor.userId) {
    throw forbidden("You can delete only your own messages.", "ask an admin to delete this one");
  }
}
