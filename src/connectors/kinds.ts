/** The connector types Dimsum ships, by type. */
import { dingtalkKind } from "./dingtalk/dingtalk-kind.js";
import { feishuKind } from "./feishu/feishu-kind.js";
import { telegramKind } from "./telegram/telegram-kind.js";
import type { ConnectorKind, ConnectorType } from "./types.js";
import { webhookKind } from "./webhook/webhook-kind.js";
import { wecomKind } from "./wecom/wecom-kind.js";

/** Every built-in kind. */
export const BUILTIN_KINDS: ReadonlyMap<ConnectorType, ConnectorKind> = new Map(
  [telegramKind, webhookKind, feishuKind, dingtalkKind, wecomKind].map((kind) => [kind.type, kind]),
);
