/**
 * An agent's sandbox network, as the API takes it and the store keeps it: `off`, `allow` a list of
 * hosts (through the allow-list proxy), or `on` (every public host). Absent: the server's setting.
 */
import * as z from "zod";
import { forbidden } from "../errors.js";
import { isNetworkHost, NETWORK_HOST_HINT, normalizePolicy } from "../tools/builtin/sandbox/network-hosts.js";
import type { NetworkPolicy } from "../tools/builtin/sandbox/types.js";
import { isAdmin } from "./access.js";
import type { Actor } from "./types.js";

/** Most hosts one agent may list. */
export const MAX_NETWORK_HOSTS = 100;

/** `{ mode, hosts }`; `hosts` is read only for `allow`, which needs at least one. */
export const agentNetworkSchema = z
  .object({
    mode: z.enum(["off", "allow", "on"]),
    hosts: z
      .array(z.string().trim().refine(isNetworkHost, `not a host name: ${NETWORK_HOST_HINT}`))
      .max(MAX_NETWORK_HOSTS, `at most ${MAX_NETWORK_HOSTS} hosts`)
      .optional(),
  })
  .strict()
  .refine((n) => n.mode !== "allow" || (n.hosts?.length ?? 0) > 0, {
    message: "mode allow needs at least one host (or use mode off)",
    path: ["hosts"],
  })
  .transform((n): NetworkPolicy => toPolicy(n.mode, n.hosts ?? []));

export type AgentNetworkInput = z.input<typeof agentNetworkSchema>;

function toPolicy(mode: "off" | "allow" | "on", hosts: string[]): NetworkPolicy {
  if (mode === "allow") return normalizePolicy({ mode, hosts });
  return { mode };
}

/** The stored column's text (NULL: the server's setting). */
export function networkToJson(policy: NetworkPolicy | undefined): string | null {
  return policy === undefined ? null : JSON.stringify(policy);
}

/** The stored column read back; anything unreadable is the server's setting. */
export function networkFromJson(text: string | null | undefined): NetworkPolicy | undefined {
  if (text === null || text === undefined) return undefined;
  try {
    const parsed = agentNetworkSchema.safeParse(JSON.parse(text));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}

/** Only owners and admins give an agent the network (`allow` or `on`); anyone who edits may turn it off. */
export function assertMaySetNetwork(actor: Actor, policy: NetworkPolicy | undefined): void {
  if (policy === undefined || policy.mode === "off" || isAdmin(actor)) return;
  throw forbidden(
    `Only owners and admins can give an agent network access (mode ${policy.mode}).`,
    "ask an admin, or set the network to off",
  );
}
