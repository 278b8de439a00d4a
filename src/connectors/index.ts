/** Connectors to external chat platforms: Telegram, a generic signed webhook, Feishu/Lark. */
export { ConnectorManager, type ConnectorManagerDeps, type InboundResponse } from "./connector-manager.js";
export { decryptLarkEvent, encryptLarkEvent, larkSignature } from "./feishu/feishu-crypto.js";
export { BUILTIN_KINDS } from "./kinds.js";
export { createManageChannelTool, MANAGE_CHANNEL_TOOL, manageChannelGrant } from "./manage-channel-tool.js";
export { type BackoffPolicy, backoffDelayMs, DEFAULT_BACKOFF } from "./outbox-worker.js";
export { checkSignature, SIGNATURE_HEADER, signBody, signedHeaders, TIMESTAMP_HEADER } from "./signatures.js";
export { splitText } from "./split-text.js";
export type { Sealer } from "./store/connector-repo.js";
export { TELEGRAM_SECRET_HEADER } from "./telegram/telegram-kind.js";
export {
  type ApprovalChoice,
  type ApprovalPress,
  type ApprovalPressResult,
  type ApprovalPrompt,
  CONNECTOR_TYPES,
  type ConnectorDriver,
  type ConnectorInput,
  type ConnectorKind,
  type ConnectorLog,
  type ConnectorPatch,
  type ConnectorRecord,
  type ConnectorSecrets,
  type ConnectorSettings,
  type ConnectorState,
  type ConnectorStatus,
  type ConnectorType,
  type ConnectorUsers,
  type ConnectorView,
  DeliveryError,
  type DriverContext,
  type DriverState,
  type InboundMessage,
  type InboundOutcome,
  type InboundRequest,
  type MessageLimit,
  type OutboundMessage,
  type SecretSpec,
} from "./types.js";
