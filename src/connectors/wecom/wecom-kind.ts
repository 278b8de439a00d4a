/**
 * The WeCom (企业微信) connector for a self-built app. Its "receive messages" callback points at
 * `/api/connectors/<id>/inbound`: WeCom first verifies the URL with a signed `GET` whose `echostr`
 * is answered decrypted; messages then arrive as `POST`ed XML whose `Encrypt` field is verified
 * (`msg_signature`) and decrypted (see wecom-crypto.ts) before anything is stored. Text messages,
 * pictures (as attachments) and voice (WeCom's `Recognition`, or speech-to-text) reach the agent
 * (WeCom retries a callback it got no answer to within 5 s with the same MsgId: those are taken
 * once); answers go back to the person with `message/send` as markdown (or text), split at WeCom's
 * 2,048-byte limit.
 */
import * as z from "zod";
import { decisionLine, isFlowChoice } from "../approval-buttons.js";
import { httpUrl, parseWith, tokenAtStart } from "../kind-helpers.js";
import { speakerMarkdown, speakerTitle } from "../speaker-label.js";
import type {
  ApprovalPrompt,
  ConnectorDriver,
  ConnectorKind,
  DriverContext,
  FlowCard,
  InboundFile,
  InboundMessage,
  InboundOutcome,
  InboundRequest,
  OutboundFile,
  OutboundMessage,
} from "../types.js";
import { WECOM_API, WecomApi } from "./wecom-api.js";
import { pressOfWecomEvent, wecomApprovalCard, wecomFlowCard } from "./wecom-card.js";
import { openWecomCiphertext } from "./wecom-crypto.js";
import { parseWecomXml } from "./wecom-xml.js";

/** The `response_code` of a flow card's last press (`wecom.flow-code:<token>`), which can update it once. */
const FLOW_CODE_KEY = "wecom.flow-code:";

const settingsSchema = z
  .object({
    corpId: z.string().trim().min(1).max(64),
    /** The app's AgentId. */
    appAgentId: z.union([
      z.number().int().positive(),
      z
        .string()
        .regex(/^\d{1,12}$/)
        .transform(Number),
    ]),
    format: z.enum(["markdown", "text"]).default("markdown"),
    baseUrl: httpUrl.default(WECOM_API),
  })
  .strict();

/** What a callback's other message kinds are called when the chat is told Dimsum does not read them. */
const UNREAD: Record<string, string> = {
  video: "a video",
  shortvideo: "a video",
  location: "a location",
  link: "a link",
};

/** Downloads a media file of a callback by its `MediaId`. */
export type WecomDownload = (mediaId: string) => InboundFile["download"];

/**
 * The platform-neutral message of a decrypted callback; undefined for events and other kinds. A voice
 * message is taken as the text WeCom recognised in it (`Recognition`, when the app has speech
 * recognition on); without it, its audio (`MediaId`, with `download`) is left to the configured
 * speech-to-text endpoint, and the chat is told it was not read when there is none. A picture
 * (`MediaId`) is downloaded as an attachment; videos, locations and links are said unread.
 */
export function inboundOfWecomMessage(
  fields: Record<string, string>,
  download?: WecomDownload,
): InboundMessage | undefined {
  const userId = fields.FromUserName;
  if (!userId) return undefined;
  const base = {
    ...(fields.MsgId ? { dedupeKey: `msg:${fields.MsgId}` } : {}),
    // An app's messages are one-to-one: the chat is the person.
    chat: { id: userId },
    user: { id: userId },
  };
  if (fields.MsgType === "voice") {
    const heard = (fields.Recognition ?? "").trim();
    if (heard !== "") return { ...base, text: `🎤 ${heard}` };
    const mediaId = fields.MediaId;
    if (!mediaId || !download) return { ...base, text: "", unsupported: ["a voice message"] };
    const format = /^[a-z0-9]{1,8}$/i.test(fields.Format ?? "") ? fields.Format!.toLowerCase() : "amr";
    return {
      ...base,
      text: "",
      voice: { name: `voice-${fields.MsgId ?? "1"}.${format}`, download: download(mediaId) },
    };
  }
  if (fields.MsgType === "image") {
    const mediaId = fields.MediaId;
    if (!mediaId || !download) return { ...base, text: "", unsupported: ["a picture"] };
    return {
      ...base,
      text: "",
      files: [{ name: `picture-${fields.MsgId ?? "1"}.jpg`, download: download(mediaId) }],
    };
  }
  // An app's callback has no file messages; these kinds are said unread.
  const unread = UNREAD[fields.MsgType ?? ""];
  if (unread) return { ...base, text: "", unsupported: [unread] };
  if (fields.MsgType !== "text") return undefined;
  const text = (fields.Content ?? "").trim();
  if (text === "") return undefined;
  return { ...base, text };
}

class WecomDriver implements ConnectorDriver {
  readonly #context: DriverContext;
  readonly #api: WecomApi;

  constructor(context: DriverContext) {
    this.#context = context;
    this.#api = new WecomApi({
      baseUrl: String(context.settings.baseUrl),
      corpId: String(context.settings.corpId),
      corpSecret: context.secrets.corpSecret ?? "",
      agentId: Number(context.settings.appAgentId),
      now: context.now,
    });
  }

  async start(): Promise<void> {
    await tokenAtStart(this.#context, () => this.#api.accessToken());
  }

  async stop(): Promise<void> {}

  #open(query: Record<string, string>, ciphertext: string) {
    const { secrets, settings } = this.#context;
    return openWecomCiphertext({
      token: secrets.token ?? "",
      encodingAESKey: secrets.encodingAESKey ?? "",
      corpId: String(settings.corpId),
      signature: query.msg_signature,
      timestamp: query.timestamp,
      nonce: query.nonce,
      ciphertext,
    });
  }

  async inbound(request: InboundRequest): Promise<InboundOutcome> {
    const query = request.query ?? {};
    if (request.method === "GET") {
      // The URL verification when the callback is saved in the admin console.
      const echostr = query.echostr;
      if (!echostr)
        return { kind: "rejected", status: 400, reason: "a GET needs echostr (WeCom's URL verification)" };
      const opened = await this.#open(query, echostr);
      if ("refused" in opened) return { kind: "rejected", status: 401, reason: opened.refused };
      return { kind: "reply", body: opened.plain };
    }
    const outer = parseWecomXml(request.body);
    const ciphertext = outer?.Encrypt;
    if (!ciphertext)
      return { kind: "rejected", status: 400, reason: "the body is not WeCom XML with an Encrypt field" };
    const opened = await this.#open(query, ciphertext);
    if ("refused" in opened) return { kind: "rejected", status: 401, reason: opened.refused };
    const fields = parseWecomXml(opened.plain);
    if (!fields) return { kind: "rejected", status: 400, reason: "the decrypted message is not XML" };
    const press = pressOfWecomEvent(fields);
    if (press) {
      const responseCode = fields.ResponseCode;
      return {
        kind: "press",
        press,
        reply: async (result) => {
          if (isFlowChoice(press.choice)) {
            // The press's fresh code is the one that can update the card (when the flow ends).
            if (responseCode) await this.#context.state.set(`${FLOW_CODE_KEY}${press.token}`, responseCode);
            await this.#api.send(press.user.id, "text", `${result.ok ? "✅" : "⚠️"} ${result.notice}`);
          } else if (result.ok && result.prompt?.decision && responseCode) {
            await this.#settleCard(press.user.id, responseCode, result.prompt);
          } else {
            // WeCom shows no toast: the presser is told in the chat; the card keeps its buttons.
            await this.#api.send(press.user.id, "text", `⚠️ ${result.notice}`);
          }
          return "";
        },
      };
    }
    const message = inboundOfWecomMessage(
      fields,
      (mediaId) => (maxBytes, signal) => this.#api.downloadMedia(mediaId, maxBytes, signal),
    );
    // An empty answer tells WeCom the callback was taken (no passive reply).
    return { kind: "messages", messages: message ? [message] : [], body: "" };
  }

  readonly approvals = {
    update: (chatId: string, messageId: string, prompt: ApprovalPrompt, signal?: AbortSignal) =>
      this.#settleCard(chatId, messageId, prompt, signal),
  };

  readonly flowCards = {
    update: async (chatId: string, messageId: string, card: FlowCard, signal?: AbortSignal) => {
      // One update per code: the final state only.
      if (!card.ended) return;
      const key = `${FLOW_CODE_KEY}${card.token}`;
      const code = (await this.#context.state.get(key)) ?? messageId;
      await this.#context.state.delete(key);
      await this.#api.updateTemplateCard([chatId], code, card.title.slice(0, 60), signal);
    },
  };

  /** Replaces a card's buttons with its decision (`responseCode`: from the send or the press). */
  #settleCard(
    userId: string,
    responseCode: string,
    prompt: ApprovalPrompt,
    signal?: AbortSignal,
  ): Promise<void> {
    const line = prompt.decision ? decisionLine(prompt.decision, prompt.tool) : "Closed";
    return this.#api.updateTemplateCard([userId], responseCode, line.slice(0, 60), signal);
  }

  async send(message: OutboundMessage, signal?: AbortSignal): Promise<string | undefined> {
    if (message.flow && message.flow.buttons.length > 0) {
      return this.#api.sendTemplateCard(message.chatId, wecomFlowCard(message.flow), signal);
    }
    if (message.approval) {
      return this.#api.sendTemplateCard(message.chatId, wecomApprovalCard(message.approval), signal);
    }
    const format = this.#context.settings.format === "text" ? "text" : "markdown";
    const text =
      format === "markdown"
        ? speakerMarkdown(message.speaker, message.text)
        : message.speaker
          ? `【${speakerTitle(message.speaker)}】\n${message.text}`
          : message.text;
    return this.#api.send(message.chatId, format, text, signal);
  }

  async sendFile(
    message: OutboundMessage,
    file: OutboundFile,
    signal?: AbortSignal,
  ): Promise<string | undefined> {
    return this.#api.sendFile(message.chatId, file, signal);
  }

  async test(): Promise<string> {
    await this.#api.accessToken();
    return `got an access token for corp ${String(this.#context.settings.corpId)}`;
  }
}

/** The WeCom kind. */
export const wecomKind: ConnectorKind = {
  type: "wecom",
  label: "WeCom",
  secrets: [
    {
      name: "token",
      label: "Token",
      required: true,
      pattern: /^[A-Za-z0-9]{1,32}$/,
      rule: "up to 32 letters and digits, as the callback settings show it",
    },
    {
      name: "encodingAESKey",
      label: "EncodingAESKey",
      required: true,
      pattern: /^[A-Za-z0-9]{43}$/,
      rule: "43 letters and digits, as the callback settings show it",
    },
    { name: "corpSecret", label: "App Secret", required: true },
  ],
  parseSettings: (settings) =>
    parseWith(settingsSchema, settings, "WeCom", {
      corpId: "Corp ID",
      appAgentId: "AgentId",
      format: "Answer as",
      baseUrl: "API URL",
    }),
  // text and markdown content: at most 2048 bytes each.
  limit: () => ({ max: 2048, unit: "utf8" }),
  streams: () => false,
  approvals: true,
  inboundGet: true,
  create: (context) => new WecomDriver(context),
};
