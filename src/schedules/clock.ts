/** The real clock: `Date.now` and unref'd timers (a pending schedule never keeps the process alive). */
import type { Clock } from "./types.js";

// setTimeout fires at once for delays over 2^31-1 ms; longer waits are re-armed by the scheduler.
const MAX_TIMER_MS = 2 ** 31 - 1;

/** The wall clock with Node timers. */
export const systemClock: Clock = {
  now: () => Date.now(),
  setTimer(fn, ms) {
    const timer = setTimeout(fn, Math.min(Math.max(0, ms), MAX_TIMER_MS));
    timer.unref();
    return timer;
  },
  clearTimer(handle) {
    clearTimeout(handle as NodeJS.Timeout);
  },
};
