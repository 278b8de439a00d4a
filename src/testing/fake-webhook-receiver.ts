/**
 * The other side of a generic webhook connector, on 127.0.0.1: it checks each POST's Dimsum
 * signature with the shared secret and records the JSON it got; it can be switched to fail with 502
 * or refuse connections. It also signs inbound requests the way a real sender must.
 */
import type { IncomingMessage } from "node:http";
import { checkSignature, signedHeaders } from "../connectors/signatures.js";
import { FakePlatform, startFake } from "./fake-platform.js";
import { type FakePlatformServer, type FakeReply, reply } from "./fake-platform-server.js";

export interface ReceivedPost {
  body: Record<string, unknown>;
  /** Whether the signature and timestamp checked out. */
  verified: boolean;
}

/** A fake webhook receiver with one shared secret. */
export class FakeWebhookReceiver extends FakePlatform {
  readonly secret: string;
  readonly received: ReceivedPost[] = [];

  private constructor(secret: string, server: FakePlatformServer) {
    super(server);
    this.secret = secret;
  }

  static async start(secret = "shared-webhook-secret-0123456789"): Promise<FakeWebhookReceiver> {
    return startFake((server) => new FakeWebhookReceiver(secret, server), {
      handle: (fake, req, raw) => fake.#take(req, raw),
    });
  }

  /** Records a POST and whether its signature checked out. */
  #take(req: IncomingMessage, raw: string): FakeReply {
    const headers: Record<string, string | undefined> = {};
    for (const [name, value] of Object.entries(req.headers))
      headers[name] = Array.isArray(value) ? value[0] : value;
    const verified = checkSignature(this.secret, headers, raw, Date.now()) === undefined;
    let body: Record<string, unknown> = {};
    try {
      body = JSON.parse(raw) as Record<string, unknown>;
    } catch {
      // Recorded as an empty body; the test sees it unverified or malformed.
    }
    this.received.push({ body, verified });
    return verified ? reply(200, { ok: true }) : reply(401, { error: "bad signature" });
  }

  /** The URL to configure as the connector's `outboundUrl`. */
  override get url(): string {
    return `${this.server.url}/hook`;
  }

  /** Headers and body of an inbound request signed with `secret` at `now`. */
  static signed(
    secret: string,
    payload: unknown,
    now = Date.now(),
  ): { headers: Record<string, string>; body: string } {
    const body = JSON.stringify(payload);
    return { headers: { "content-type": "application/json", ...signedHeaders(secret, body, now) }, body };
  }
}
