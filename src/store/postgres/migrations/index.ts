/**
 * Every PostgreSQL migration Dimsum knows, in ascending version order. Append only; each lives in its
 * own file named after its version.
 */
import type { PgMigration } from "../pg-migrations.js";
import { sessionsAndTeam } from "./001-sessions-team.js";
import { accounts } from "./002-accounts.js";
import { memory } from "./003-memory.js";
import { knowledge } from "./004-knowledge.js";
import { schedulesAndConnectors } from "./005-schedules-connectors.js";
import { appendCounters } from "./006-append-counters.js";
import { runState } from "./007-run-state.js";
import { answerFormat } from "./008-answer-format.js";
import { connectorTypes } from "./009-connector-types.js";
import { channelPrefs } from "./010-channel-prefs.js";
import { agentReasoning } from "./011-agent-reasoning.js";
import { attachments } from "./012-attachments.js";
import { a2aTasks } from "./013-a2a-tasks.js";
import { appCalls } from "./014-app-calls.js";
import { meetings } from "./015-meetings.js";
import { auditLog } from "./016-audit-log.js";
import { budgets } from "./017-budgets.js";
import { visibility } from "./018-visibility.js";
import { agentNetwork } from "./019-agent-network.js";

export const pgMigrations: readonly PgMigration[] = [
  sessionsAndTeam,
  accounts,
  memory,
  knowledge,
  schedulesAndConnectors,
  appendCounters,
  runState,
  answerFormat,
  connectorTypes,
  channelPrefs,
  agentReasoning,
  attachments,
  a2aTasks,
  appCalls,
  meetings,
  auditLog,
  budgets,
  visibility,
  agentNetwork,
];
