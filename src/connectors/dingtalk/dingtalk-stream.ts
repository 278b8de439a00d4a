/**
 * DingTalk Stream mode through the official `dingtalk-stream` SDK (loaded only when a Stream-mode
 * connector starts): the SDK's `DWClient` keeps the WebSocket, answers the gateway's pings and
 * reconnects by itself; robot messages arrive as callbacks on `/v1.0/im/bot/messages/get` and are
 * acknowledged only once stored, so DingTalk redelivers what could not be taken. Presses of card
 * buttons arrive on `/v1.0/card/instances/callback` and are answered with the card's update.
 *
 * The one part replaced is how the client gets its endpoint: the SDK posts to a fixed
 * `https://api.dingtalk.com/v1.0/gateway/connections/open`; this subclass posts the same request to
 * the connector's `baseUrl` (so a local server speaking the protocol can stand in for DingTalk in
 * tests), reports the gateway's refusal text as the connector's error, and backs off between failed
 * attempts instead of the SDK's fixed second.
 */
import { importExternal } from "../../import-external.js";
import { abortableSleep } from "../../shared/abortable-sleep.js";
import { bodyExcerpt, requestJson } from "../http-json.js";
import { messageOf } from "../kind-helpers.js";
import type { DingTalkRobotMessage } from "./dingtalk-message.js";

export interface DingTalkStreamOptions {
  baseUrl: string;
  clientId: string;
  clientSecret: string;
  /** Takes one robot message; resolves once it is stored (then it is acknowledged). */
  onMessage(message: DingTalkRobotMessage): Promise<void>;
  /**
   * Takes a card callback (its raw JSON data, see `dingtalk-card.ts`); resolves with the response
   * DingTalk applies to the card. Absent: card callbacks are not subscribed.
   */
  onCardAction?(data: string): Promise<unknown>;
  /** Reports a failure (`undefined`: recovered). */
  report(error: string | undefined): void;
  backoff(attempt: number): number;
}

export interface DingTalkStream {
  close(): void;
}

/** Connects (in the background: the SDK retries by itself) and returns a handle to close it. */
export async function openDingTalkStream(options: DingTalkStreamOptions): Promise<DingTalkStream> {
  const { DWClient, TOPIC_CARD, TOPIC_ROBOT } = (await importExternal(
    "dingtalk-stream",
  )) as typeof import("dingtalk-stream");
  const closing = new AbortController();
  let failures = 0;

  class Client extends DWClient {
    override async getEndpoint(): Promise<this> {
      if (closing.signal.aborted) throw new Error("closed");
      try {
        const response = await requestJson(`${options.baseUrl}/v1.0/gateway/connections/open`, {
          body: {
            clientId: options.clientId,
            clientSecret: options.clientSecret,
            ua: "dimsum",
            subscriptions: this.config.subscriptions,
          },
          signal: closing.signal,
        });
        const reply = (response.body ?? {}) as {
          endpoint?: string;
          ticket?: string;
          code?: string;
          message?: string;
        };
        if (response.status !== 200 || !reply.endpoint || !reply.ticket) {
          const detail = reply.code ? `${reply.code}: ${reply.message ?? ""}` : bodyExcerpt(response.body);
          throw new Error(
            `the DingTalk Stream gateway refused to connect (HTTP ${response.status}, ${detail})`,
          );
        }
        (this as unknown as { dw_url: string }).dw_url =
          `${reply.endpoint}?ticket=${encodeURIComponent(reply.ticket)}`;
        failures = 0;
        options.report(undefined);
        return this;
      } catch (err) {
        if (closing.signal.aborted) throw err;
        failures++;
        options.report(messageOf(err));
        // The SDK retries a second after this; wait the connector's backoff first.
        await abortableSleep(options.backoff(failures), closing.signal);
        throw err;
      }
    }
  }

  const client = new Client({
    clientId: options.clientId,
    clientSecret: options.clientSecret,
    keepAlive: true,
  });
  client.on("error", () => undefined);
  client.registerCallbackListener(TOPIC_ROBOT, (downstream) => {
    const messageId = downstream.headers.messageId;
    let message: DingTalkRobotMessage;
    try {
      message = JSON.parse(downstream.data) as DingTalkRobotMessage;
    } catch {
      client.socketCallBackResponse(messageId, {});
      return;
    }
    options.onMessage(message).then(
      () => {
        options.report(undefined);
        client.socketCallBackResponse(messageId, {});
      },
      // Not acknowledged: DingTalk delivers it again.
      (err: unknown) => options.report(`a DingTalk message could not be stored: ${messageOf(err)}`),
    );
  });
  const onCardAction = options.onCardAction;
  if (onCardAction) {
    client.registerCallbackListener(TOPIC_CARD, (downstream) => {
      const messageId = downstream.headers.messageId;
      onCardAction(downstream.data).then(
        (response) => client.socketCallBackResponse(messageId, response),
        (err: unknown) => {
          options.report(`a DingTalk card press could not be taken: ${messageOf(err)}`);
          client.socketCallBackResponse(messageId, {});
        },
      );
    });
  }
  void client.connect();
  return {
    close() {
      closing.abort();
      client.disconnect();
    },
  };
}
