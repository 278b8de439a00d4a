/**
 * What templates need of the schedules (a layer above the team): list the caller's schedules of a
 * group to export them, create them on import, and remove them again when an import fails.
 * `ScheduleService` fits it as it is.
 */
import type { ScheduleInput, ScheduleRecord } from "../../store/schedule-types.js";
import type { Actor } from "../types.js";

export interface TemplateSchedules {
  /** The schedules the actor may manage. */
  list(actor: Actor): Promise<ScheduleRecord[]>;
  create(actor: Actor, input: ScheduleInput): Promise<{ id: string }>;
  remove(actor: Actor, id: string): Promise<void>;
}
