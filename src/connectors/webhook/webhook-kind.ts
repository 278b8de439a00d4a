/**
 * The generic webhook connector. Inbound: `POST /api/connectors/:id/inbound` with a JSON body
 * `{id?, chatId, chatName?, userId, userName?, text}` signed with the shared secret (see
 * signatures.ts). Outbound: each answer (or part of one) is POSTed as JSON
 * `{type: "message", connectorId, chatId, text, part, parts, runId?}` to `outboundUrl`, signed the
 * same way; any 2xx is delivery, 5xx/408/429/unreachable are retried, other statuses fail.
 */
import { createHash } from "node:crypto";
import * as z from "zod";
import { bodyExcerpt, requestJson, retryAfterMs, retryableStatus } from "../http-json.js";
import { httpUrl, parseWith } from "../kind-helpers.js";
import { checkSignature, SIGNATURE_HEADER, signedHeaders } from "../signatures.js";
import {
  type ConnectorDriver,
  type ConnectorKind,
  DeliveryError,
  type DriverContext,
  type InboundOutcome,
  type OutboundMessage,
} from "../types.js";

const settingsSchema = z
  .object({
    outboundUrl: httpUrl,
    /** Characters per outbound message; longer answers are split. */
    maxChars: z.number().int().min(100).max(1_000_000).default(20_000),
  })
  .strict();

const idValue = z.union([z.string().min(1).max(200), z.number().int()]).transform(String);

const inboundSchema = z.object({
  id: idValue.optional(),
  chatId: idValue,
  chatName: z.string().max(200).optional(),
  userId: idValue,
  userName: z.string().max(200).optional(),
  text: z.string().min(1),
});

class WebhookDriver implements ConnectorDriver {
  readonly #context: DriverContext;
  readonly #url: string;
  readonly #secret: string;

  constructor(context: DriverContext) {
    this.#context = context;
    this.#url = String(context.settings.outboundUrl);
    this.#secret = context.secrets.secret ?? "";
  }

  async start(): Promise<void> {}

  async stop(): Promise<void> {}

  async inbound(request: {
    headers: Record<string, string | undefined>;
    body: string;
  }): Promise<InboundOutcome> {
    const refusal = checkSignature(this.#secret, request.headers, request.body, this.#context.now());
    if (refusal) return { kind: "rejected", status: 401, reason: refusal };
    let parsed: z.infer<typeof inboundSchema>;
    try {
      parsed = inboundSchema.parse(JSON.parse(request.body));
    } catch {
      return {
        kind: "rejected",
        status: 400,
        reason: "the body is not JSON of the form {id?, chatId, userId, text, chatName?, userName?}",
      };
    }
    // Without an id, the signature (which covers the timestamp) identifies a replay of this request.
    const dedupeKey = parsed.id
      ? `id:${parsed.id}`
      : `sig:${createHash("sha256")
          .update(request.headers[SIGNATURE_HEADER] ?? "")
          .digest("hex")}`;
    return {
      kind: "messages",
      body: { ok: true },
      messages: [
        {
          dedupeKey,
          chat: { id: parsed.chatId, ...(parsed.chatName ? { name: parsed.chatName } : {}) },
          user: { id: parsed.userId, ...(parsed.userName ? { name: parsed.userName } : {}) },
          text: parsed.text,
        },
      ],
    };
  }

  async #post(payload: Record<string, unknown>, signal?: AbortSignal): Promise<void> {
    const body = JSON.stringify(payload);
    const response = await requestJson(this.#url, {
      headers: signedHeaders(this.#secret, body, this.#context.now()),
      body,
      ...(signal ? { signal } : {}),
    });
    if (response.status >= 200 && response.status < 300) return;
    const message = `the webhook receiver answered HTTP ${response.status}: ${bodyExcerpt(response.body)}`;
    const after = retryAfterMs(response.headers);
    throw new DeliveryError(message, {
      retryable: retryableStatus(response.status),
      ...(after !== undefined ? { retryAfterMs: after } : {}),
    });
  }

  async send(message: OutboundMessage, signal?: AbortSignal): Promise<string | undefined> {
    const payload: Record<string, unknown> = {
      type: "message",
      connectorId: this.#context.connector.id,
      chatId: message.chatId,
      text: message.text,
      part: message.part,
      parts: message.parts,
    };
    if (message.runId) payload.runId = message.runId;
    if (message.deliveryId) payload.deliveryId = message.deliveryId;
    await this.#post(payload, signal);
    return undefined;
  }

  async test(): Promise<string> {
    await this.#post({
      type: "test",
      connectorId: this.#context.connector.id,
      text: "Dimsum connector test",
    });
    return `the receiver at ${new URL(this.#url).host} accepted a signed test event`;
  }
}

/** The generic webhook kind. */
export const webhookKind: ConnectorKind = {
  type: "webhook",
  label: "webhook",
  secrets: [
    {
      name: "secret",
      label: "Shared secret",
      required: true,
      pattern: /^.{16,1024}$/s,
      rule: "16 to 1024 characters",
    },
  ],
  parseSettings: (settings) =>
    parseWith(settingsSchema, settings, "webhook", {
      outboundUrl: "Outbound URL",
      maxChars: "Characters per message",
    }),
  limit: (settings) => ({ max: Number(settings.maxChars ?? 20_000), unit: "utf16" }),
  streams: () => false,
  create: (context) => new WebhookDriver(context),
};
