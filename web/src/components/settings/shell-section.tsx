/** The shell tool's sandbox: whether agents' commands are confined, and whether agents get the tool. */

import { useEffect, useState } from "preact/hooks";
import { useReportError, useServices } from "../../hooks.js";
import { t } from "../../i18n/index.js";
import type { Settings } from "../../types.js";

/** `shell` of `GET /api/settings`. */
interface ShellStatus {
  sandboxed: boolean;
  reason?: string;
  offered: boolean;
}

/** The shell section (owner/admin); shown when the server reports a status. */
export function ShellSection() {
  const { api } = useServices();
  const report = useReportError();
  const [shell, setShell] = useState<ShellStatus | null | undefined>(undefined);
  useEffect(() => {
    api
      .getSettings()
      .then((s: Settings & { shell?: ShellStatus | null }) => setShell(s.shell ?? null))
      .catch(report);
  }, [api]);
  if (!shell) return null;
  const state = shell.sandboxed ? "sandboxed" : shell.offered ? "unsandboxed" : "not-offered";
  return (
    <section class="form" data-testid="settings-shell" data-state={state}>
      <h3>{t("settings.shell.title")}</h3>
      {shell.sandboxed ? (
        <p class="muted">{t("settings.shell.sandboxed")}</p>
      ) : (
        <p class="run-error" data-testid="shell-warning">
          {shell.offered ? `${t("settings.shell.unsandboxed")} ` : `${t("settings.shell.notOffered")} `}
          {shell.reason}
        </p>
      )}
    </section>
  );
}
