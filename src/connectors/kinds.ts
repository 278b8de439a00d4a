/** The connector types Dimsum ships, by type. */
import { feishuKind } from "./feishu/feishu-kind.js";
import { telegramKind } from "./telegram/telegram-kind.js";
import type { ConnectorKind, ConnectorType } from "./types.js";
import { webhookKind } from "./webhook/webhook-kind.js";

/** Every built-in kind. */
export const BUILTIN_KINDS: ReadonlyMap<ConnectorType, ConnectorKind> = new Map(
  [telegramKind, webhookKind, feishuKind].map((kind) => [kind.type, kind]),
);
