/** The shell tool's sandbox: whether agents' commands are confined, and whether agents get the tool. */
import { useEffect, useState } from "preact/hooks";
import { useReportError, useServices } from "../../hooks.js";
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
      <h3>Shell</h3>
      {shell.sandboxed ? (
        <p class="muted">
          Agents' commands run in a bubblewrap sandbox: only their workspace is writable, no network, limited
          processes, memory and time.
        </p>
      ) : (
        <p class="run-error" data-testid="shell-warning">
          {shell.offered
            ? "Warning: commands run without a sandbox. "
            : "The shell is not offered to agents. "}
          {shell.reason}
        </p>
      )}
    </section>
  );
}
