/**
 * Feishu/Lark's long connection ("使用长连接接收事件") through the official `@larksuiteoapi/node-sdk`
 * `WSClient`, loaded only when a long-connection connector starts: no public address is needed. The
 * client asks `<baseUrl>/callback/ws/endpoint` for its WebSocket, keeps it alive and reconnects by
 * itself; each event goes through the SDK's `EventDispatcher` to `onEvent`, and the SDK acknowledges
 * it only after `onEvent` resolved (stored), so Feishu redelivers what could not be taken.
 */
import { importExternal } from "../../import-external.js";
import { messageOf } from "../kind-helpers.js";
import type { ConnectorLog } from "../types.js";

/** An event as the dispatcher hands it over: header and event fields flattened into one object. */
type FlatEvent = Record<string, unknown>;

/** The v2 shape (`{header, event}`) the webhook path reads, rebuilt from the dispatcher's flat one. */
export function eventOfFlat(
  type: string,
  flat: FlatEvent,
): {
  schema: string;
  header: { event_id?: string; event_type: string };
  event: Record<string, unknown>;
} {
  const eventId = typeof flat.event_id === "string" ? flat.event_id : undefined;
  return {
    schema: "2.0",
    header: { ...(eventId ? { event_id: eventId } : {}), event_type: type },
    event: flat,
  };
}

export interface FeishuLongConnectionOptions {
  baseUrl: string;
  appId: string;
  appSecret: string;
  /** Set when the app's events are encrypted (an Encrypt Key configured in the console). */
  encryptKey?: string;
  /** Takes one message event; resolves once it is stored. */
  onMessage(event: ReturnType<typeof eventOfFlat>): Promise<void>;
  /** Decides a card button press; resolves with the callback's answer. */
  onCardAction(event: ReturnType<typeof eventOfFlat>): Promise<unknown>;
  report(error: string | undefined): void;
  log: ConnectorLog;
}

/** Starts the client (it connects in the background) and returns a handle to close it. */
export async function openFeishuLongConnection(
  options: FeishuLongConnectionOptions,
): Promise<{ close(): void }> {
  const lark = (await importExternal("@larksuiteoapi/node-sdk")) as typeof import("@larksuiteoapi/node-sdk");
  // The SDK's own lines go to the server log at warning level and above (they carry no secrets).
  const text = (parts: unknown[]) => parts.map((p) => (typeof p === "string" ? p : messageOf(p))).join(" ");
  const logger = {
    error: (...parts: unknown[]) => options.log.warn(`Feishu SDK: ${text(parts)}`),
    warn: (...parts: unknown[]) => options.log.warn(`Feishu SDK: ${text(parts)}`),
    info: () => undefined,
    debug: () => undefined,
    trace: () => undefined,
  };
  const dispatcher = new lark.EventDispatcher({
    ...(options.encryptKey ? { encryptKey: options.encryptKey } : {}),
    logger,
    loggerLevel: lark.LoggerLevel.warn,
  }).register({
    "im.message.receive_v1": async (data: unknown) => {
      await options.onMessage(eventOfFlat("im.message.receive_v1", data as FlatEvent));
    },
    "card.action.trigger": async (data: unknown) =>
      options.onCardAction(eventOfFlat("card.action.trigger", data as FlatEvent)),
  } as Record<string, (data: unknown) => Promise<unknown>>);
  const client = new lark.WSClient({
    appId: options.appId,
    appSecret: options.appSecret,
    domain: options.baseUrl,
    logger,
    loggerLevel: lark.LoggerLevel.warn,
    autoReconnect: true,
    handshakeTimeoutMs: 15_000,
    onReady: () => options.report(undefined),
    onReconnected: () => options.report(undefined),
    onReconnecting: () => options.report("the long connection to Feishu dropped; reconnecting"),
    onError: (err: Error) => options.report(`the long connection to Feishu failed: ${err.message}`),
  });
  await client.start({ eventDispatcher: dispatcher });
  return { close: () => client.close({ force: true }) };
}
