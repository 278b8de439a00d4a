/** The storage layer: SQLite database, migrations and the session repository. */
export { type Database, type OpenDatabaseOptions, openDatabase } from "./database.js";
export {
  type Migration,
  type MigrationReport,
  migrations,
  runMigrations,
  schemaVersion,
} from "./migrations.js";
export { storeError } from "./sqlite-errors.js";
export {
  INTERRUPTED_TOOL_RESULT,
  SqliteSessionStore,
  type SqliteSessionStoreOptions,
} from "./sqlite-session-store.js";
export { todoStoreFor } from "./todo-store.js";
export {
  describeToolPairIssues,
  findToolPairIssues,
  type ToolPairIssues,
  type UnansweredCalls,
} from "./tool-pairs.js";
export type {
  CompactInput,
  FinishRunInput,
  LoadMessagesOptions,
  RecoveryResult,
  RunEventInput,
  RunRecord,
  RunStatus,
  SessionRecord,
  SessionRef,
  SessionStore,
  StartRunInput,
  StoredMessage,
  StoredRunEvent,
  StoreLogger,
} from "./types.js";
