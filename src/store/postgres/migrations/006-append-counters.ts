/**
 * Counters that let an append take its sequence numbers in the same statement that writes the rows:
 * the last message `seq` of each session and the last trace event `seq` of each run. The row lock of
 * the counter's UPDATE orders concurrent appends, and the updated value is what the next one reads,
 * so one statement (no transaction, no `max(seq)` round trip) is safe for several instances.
 *
 * NULL means "not counted yet" (rows written before this migration, or copied by `dimsum migrate`):
 * an append then starts from the highest stored `seq`, and every append takes the greater of the two.
 */
import { sqlMigration } from "../pg-migrations.js";

export const appendCounters = sqlMigration(6, "append counters for messages and run events", [
  "ALTER TABLE sessions ADD COLUMN last_seq INTEGER",
  "ALTER TABLE runs ADD COLUMN last_event_seq INTEGER",
]);
