/** The scheduler's types; the stored shape of schedules lives in store/schedule-types.ts. */
export type * from "../store/schedule-types.js";

/** The time source the scheduler runs on; tests pass a fake one. */
export interface Clock {
  now(): number;
  setTimer(fn: () => void, ms: number): unknown;
  clearTimer(handle: unknown): void;
}
