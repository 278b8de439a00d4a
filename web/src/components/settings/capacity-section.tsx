/**
 * Capacity (owners and admins): the chat answers live on this instance and waiting to start, their
 * wait, the event-loop delay and heap against their limits, and what holds new answers now.
 */

import { useEffect, useState } from "preact/hooks";
import { useReportError, useServices } from "../../hooks.js";
import { t } from "../../i18n/index.js";
import type { RunQueue } from "../../types.js";

/** What holds new answers, in words. */
const PRESSURE = {
  cpu: "settings.capacity.pressure.cpu",
  memory: "settings.capacity.pressure.memory",
  live: "settings.capacity.pressure.live",
} as const;

const ms = (x: number) => `${Math.round(x)} ms`;
const pct = (x: number) => `${(100 * x).toFixed(0)} %`;

export function CapacitySection() {
  const { api } = useServices();
  const report = useReportError();
  const [queue, setQueue] = useState<RunQueue | undefined>(undefined);
  const load = () => {
    api.getRunQueue().then(setQueue).catch(report);
  };
  useEffect(load, [api]);
  if (!queue) return null;
  const rows: Array<[string, string, string]> = [
    ["live", t("settings.capacity.live"), String(queue.live)],
    ["queued", t("settings.capacity.queued"), String(queue.queued)],
    ["oldest-wait", t("settings.capacity.oldestWait"), ms(queue.oldestWaitMs)],
    ["wait", t("settings.capacity.wait"), `${ms(queue.waitP50Ms)} / ${ms(queue.waitP99Ms)}`],
    ["started", t("settings.capacity.started"), `${queue.started} / ${queue.startedAfterWaiting}`],
    [
      "loop-delay",
      t("settings.capacity.loopDelay"),
      `${ms(queue.load.loopDelayMs)} (${ms(queue.limits.maxLoopDelayMs)})`,
    ],
    ["heap", t("settings.capacity.heap"), `${pct(queue.load.heapShare)} (${pct(queue.limits.maxHeapShare)})`],
    ["max-live", t("settings.capacity.maxLive"), String(queue.limits.maxLive)],
    [
      "pressure",
      t("settings.capacity.holding"),
      t(queue.pressure ? PRESSURE[queue.pressure] : "settings.capacity.pressure.none"),
    ],
  ];
  return (
    <section class="form" data-testid="settings-capacity" data-pressure={queue.pressure ?? "none"}>
      <h3>{t("settings.capacity.title")}</h3>
      <p class="muted">{t("settings.capacity.intro")}</p>
      <div class="table-scroll">
        <table class="table">
          <tbody>
            {rows.map(([id, label, value]) => (
              <tr key={id} data-testid={`capacity-${id}`}>
                <th scope="row">{label}</th>
                <td class="num">{value}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      <button type="button" class="btn btn-small" onClick={load}>
        {t("settings.capacity.refresh")}
      </button>
    </section>
  );
}
