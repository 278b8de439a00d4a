/** Token accounting and compaction planning for the live context: pure functions the agent loop wires in. */
export {
  type CompactionPlan,
  type CompactionPlanOptions,
  type PruneOptions,
  type PruneResult,
  planCompaction,
  pruneToolResults,
  type ShouldCompactInput,
  shouldCompact,
} from "./compaction-plan.js";
export { legalCutPoints } from "./cut-points.js";
export {
  buildSummaryPrompt,
  renderTranscript,
  SUMMARY_SYSTEM_PROMPT,
  type SummaryPromptOptions,
} from "./summary-prompt.js";
export {
  defaultTokenCounter,
  estimateContextTokens,
  estimateMessageTokens,
  estimateTextTokens,
  estimateToolSchemaTokens,
  TOKEN_COSTS,
  type TokenCounter,
  UsageCalibrator,
  type UsageCalibratorOptions,
} from "./tokens.js";
export {
  type TruncatedText,
  type TruncationResult,
  truncateOldestFirst,
  truncateToolOutput,
} from "./truncate.js";
