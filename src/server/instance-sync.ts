/**
 * What each server instance keeps in memory that another instance can change, told through the relay
 * (`dimsum:server`, Redis): MCP servers added or removed in Settings (each instance runs its own
 * processes and connections), a member's MCP sign-out (their connection closes everywhere), connectors
 * changed, started, stopped or deleted, remote A2A agents changed in Settings (each instance keeps
 * the list its runs read; HTTP tools likewise), and the browser's OAuth callback of an MCP sign-in, which a load balancer
 * may send to another instance than the one waiting for it.
 */
import { randomUUID } from "node:crypto";
import type { ConnectorManager } from "../connectors/connector-manager.js";
import { DimsumError, type ErrorCode, toDimsumError } from "../errors.js";
import type { McpControl, McpServerPool, McpServerView } from "../mcp/server-pool.js";
import type { MessageRelay } from "../store/redis/redis-relay.js";
import type { HttpTools } from "./http-tools.js";
import type { McpSignIns } from "./mcp-signin.js";
import type { RemoteAgents } from "./remote-agents.js";
import type { McpServerSettingsRepository } from "./settings/mcp-server-settings.js";

type RelayError = { code: ErrorCode; message: string; hint?: string };

export type ServerRelayMessage =
  | { type: "mcp_servers" }
  | { type: "mcp_signout"; person: string; server: string }
  | { type: "connector"; id: string }
  | { type: "remote_agents" }
  | { type: "http_tools" }
  | { type: "signin_callback"; id: string; state: string; code?: string; error?: string; iss?: string }
  | { type: "signin_held"; id: string }
  | { type: "signin_done"; id: string; view?: McpServerView; error?: RelayError };

export type ServerRelay = MessageRelay<ServerRelayMessage>;

export interface InstanceSyncDeps {
  relay: ServerRelay;
  /** The MCP servers of this instance, and the saved ones they follow. */
  mcp?: { pool: McpServerPool; saved: McpServerSettingsRepository; signIns: McpSignIns };
  /** Created after the sync joins (the connector manager needs the team first). */
  connectors?: () => ConnectorManager | undefined;
  /** The remote A2A agents' list this instance's runs read. */
  remoteAgents?: RemoteAgents;
  /** The HTTP tools saved in Settings this instance's runs read. */
  httpTools?: HttpTools;
  onError: (err: unknown) => void;
}

export interface InstanceSync {
  /** The MCP servers as the routes use them: changes are told to the other instances. */
  mcp: McpControl | undefined;
  /** For `ConnectorManagerDeps.onChanged`. */
  connectorChanged(id: string): void;
  leave(): void;
}

/** How long a callback waits for the instance holding its sign-in to say so. */
const HELD_TIMEOUT_MS = 3000;
/** How long it then waits for the sign-in to finish (token exchange, first connection). */
const DONE_TIMEOUT_MS = 60_000;

/** Joins this instance to the others' changes; the returned `mcp` wraps the pool. */
export function joinInstanceSync(deps: InstanceSyncDeps): InstanceSync {
  const { relay, onError } = deps;
  const mcp = deps.mcp;
  // Changes apply one at a time, in the order they arrived, so an older reload never wins.
  let queue = Promise.resolve();
  const later = (work: () => Promise<unknown>) => {
    queue = queue.then(work).then(
      () => undefined,
      (err: unknown) => onError(err),
    );
  };
  const callbacks = new Map<
    string,
    { held: () => void; done: (view: McpServerView) => void; fail: (err: DimsumError) => void }
  >();

  const unsubscribe = relay.subscribe((message) => {
    switch (message.type) {
      case "mcp_servers":
        if (mcp) later(() => reconcileMcp(mcp.pool, mcp.saved));
        return;
      case "mcp_signout":
        // The record is gone from the database: looking at it closes this instance's connection.
        if (mcp?.pool.isPerPerson(message.server)) {
          later(() => mcp.pool.personalView(message.person, message.server));
        }
        return;
      case "remote_agents":
        deps.remoteAgents?.invalidate();
        return;
      case "http_tools":
        deps.httpTools?.invalidate();
        return;
      case "connector": {
        const connectors = deps.connectors?.();
        if (connectors) later(() => connectors.sync(message.id));
        return;
      }
      case "signin_callback": {
        if (!mcp?.signIns.holds(message.state)) return;
        relay.publish({ type: "signin_held", id: message.id });
        mcp.signIns.complete(message.state, message.code, message.error, message.iss).then(
          (view) => relay.publish({ type: "signin_done", id: message.id, view }),
          (err: unknown) => relay.publish({ type: "signin_done", id: message.id, error: relayError(err) }),
        );
        return;
      }
      case "signin_held":
        callbacks.get(message.id)?.held();
        return;
      case "signin_done": {
        const waiter = callbacks.get(message.id);
        if (!waiter) return;
        if (message.view) waiter.done(message.view);
        else {
          const {
            code,
            message: text,
            hint,
          } = message.error ?? { code: "internal", message: "sign-in failed" };
          waiter.fail(new DimsumError(code, text, hint ? { hint } : {}));
        }
        return;
      }
    }
  });

  const forward = (
    state: string,
    code: string | undefined,
    error: string | undefined,
    iss: string | undefined,
  ) =>
    new Promise<McpServerView>((resolve, reject) => {
      const id = randomUUID();
      const finish = () => {
        clearTimeout(timer);
        callbacks.delete(id);
      };
      const expire = (why: string) => () => {
        finish();
        reject(new DimsumError("invalid", why, { status: 400 }));
      };
      let timer = setTimeout(expire("unknown or expired sign-in"), HELD_TIMEOUT_MS);
      callbacks.set(id, {
        held: () => {
          clearTimeout(timer);
          timer = setTimeout(expire("the sign-in did not finish in time"), DONE_TIMEOUT_MS);
        },
        done: (view) => {
          finish();
          resolve(view);
        },
        fail: (err) => {
          finish();
          reject(err);
        },
      });
      relay.publish({
        type: "signin_callback",
        id,
        state,
        ...(code !== undefined ? { code } : {}),
        ...(error !== undefined ? { error } : {}),
        ...(iss !== undefined ? { iss } : {}),
      });
    });
  if (mcp) mcp.signIns.forward = forward;
  const remoteAgents = deps.remoteAgents;
  if (remoteAgents) remoteAgents.onChanged = () => relay.publish({ type: "remote_agents" });
  const httpTools = deps.httpTools;
  if (httpTools) httpTools.onChanged = () => relay.publish({ type: "http_tools" });

  return {
    mcp: mcp ? toldMcp(mcp.pool, relay) : undefined,
    connectorChanged: (id) => relay.publish({ type: "connector", id }),
    leave() {
      unsubscribe();
      if (mcp) mcp.signIns.forward = undefined;
      if (remoteAgents) remoteAgents.onChanged = undefined;
      if (httpTools) httpTools.onChanged = undefined;
      for (const waiter of callbacks.values())
        waiter.fail(new DimsumError("aborted", "The server is stopping."));
      callbacks.clear();
    },
  };
}

/**
 * Makes the pool's Settings servers the saved ones: starts those it lacks (an mcp.json server of the
 * same name wins, as at start) and stops those no longer saved.
 */
export async function reconcileMcp(pool: McpServerPool, saved: McpServerSettingsRepository): Promise<void> {
  const configs = await saved.configs();
  const names = new Set(configs.map((c) => c.name));
  for (const view of pool.list()) {
    if (view.removable && !names.has(view.name)) await pool.remove(view.name);
  }
  const running = new Map(pool.list().map((v) => [v.name, v]));
  for (const config of configs) {
    const view = running.get(config.name);
    if (!view) await pool.add(config);
    // Another instance changed who sees it.
    else if (view.removable) await pool.setAccess(config.name, config);
  }
}

/** The pool, telling the other instances after each change of its servers or sign-ins. */
function toldMcp(pool: McpServerPool, relay: ServerRelay): McpControl {
  const tell = (message: ServerRelayMessage) => relay.publish(message);
  return {
    list: () => pool.list(),
    connect: (name) => pool.connect(name),
    disconnect: (name) => pool.disconnect(name),
    isPerPerson: (name) => pool.isPerPerson(name),
    personalView: (person, name) => pool.personalView(person, name),
    signIn: (person, name, authorizer) => pool.signIn(person, name, authorizer),
    prompts: (person) => pool.prompts(person),
    getPrompt: (person, server, name, args) => pool.getPrompt(person, server, name, args),
    async add(config) {
      const view = await pool.add(config);
      tell({ type: "mcp_servers" });
      return view;
    },
    async remove(name) {
      await pool.remove(name);
      tell({ type: "mcp_servers" });
    },
    async setAccess(name, visible) {
      const view = await pool.setAccess(name, visible);
      tell({ type: "mcp_servers" });
      return view;
    },
    async signOut(person, name) {
      const view = await pool.signOut(person, name);
      tell({ type: "mcp_signout", person, server: name });
      return view;
    },
  };
}

function relayError(err: unknown): RelayError {
  const error = toDimsumError(err);
  return { code: error.code, message: error.message, ...(error.hint ? { hint: error.hint } : {}) };
}
