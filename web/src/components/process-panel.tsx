/**
 * The chat's long-running processes (started by its agents): a header button while there are any,
 * opening a dialog with each one's state, last output lines, a Stop button and its preview links.
 * Polled while the chat is open; the server lists them only to the chat's readers.
 */
import { useCallback, useEffect, useState } from "preact/hooks";
import { type ApiClient, errorText } from "../api.js";
import { useServices } from "../hooks.js";
import { t } from "../i18n/index.js";
import type { ChannelRecord } from "../types.js";
import { Modal } from "./modal.js";

const POLL_MS = 3000;
const enc = encodeURIComponent;

/** One process as `GET /api/channels/:id/processes` lists it. */
export interface ChatProcess {
  name: string;
  command: string;
  state: "running" | "exited" | "stopped";
  exitCode?: number | null;
  stopReason?: string;
  output: Array<{ seq: number; stream: "stdout" | "stderr"; text: string }>;
  previews: Array<{ port: number; path: string }>;
}

function processApi(api: ApiClient) {
  return {
    list: (channelId: string) =>
      api.request<ChatProcess[]>("GET", `/api/channels/${enc(channelId)}/processes`),
    stop: (channelId: string, name: string) =>
      api.request<unknown>("POST", `/api/channels/${enc(channelId)}/processes/${enc(name)}/stop`),
  };
}

function stateText(proc: ChatProcess): string {
  if (proc.state === "running") return t("processes.running");
  if (proc.state === "stopped") return t("processes.stopped", { reason: proc.stopReason ?? "" });
  return t("processes.exited", { code: String(proc.exitCode ?? "?") });
}

/** The header button and its dialog; nothing while the chat has no process. */
export function ProcessButton({ channel }: { channel: ChannelRecord }) {
  const { api } = useServices();
  const [procs, setProcs] = useState<ChatProcess[]>([]);
  const [open, setOpen] = useState(false);
  const [problem, setProblem] = useState<string | undefined>(undefined);
  const [stopping, setStopping] = useState<string | undefined>(undefined);
  const refresh = useCallback(
    () =>
      processApi(api)
        .list(channel.id)
        .then((list) => setProcs(list))
        .catch(() => setProcs([])),
    [api, channel.id],
  );
  useEffect(() => {
    void refresh();
    const timer = setInterval(() => void refresh(), POLL_MS);
    return () => clearInterval(timer);
  }, [refresh]);
  const close = useCallback(() => setOpen(false), []);
  if (procs.length === 0) return null;
  const running = procs.filter((p) => p.state === "running").length;
  const stop = async (name: string) => {
    setStopping(name);
    try {
      await processApi(api).stop(channel.id, name);
      setProblem(undefined);
      await refresh();
    } catch (err) {
      setProblem(errorText(err));
    } finally {
      setStopping(undefined);
    }
  };
  return (
    <>
      <button
        type="button"
        class="btn btn-small"
        onClick={() => setOpen(true)}
        data-testid="processes-button"
      >
        ⚙︎<span class="btn-label"> {t("processes.button", { count: String(running) })}</span>
      </button>
      {open && (
        <Modal title={t("processes.title", { name: channel.name })} onClose={close} testId="processes-dialog">
          {problem && (
            <p class="field-error" role="alert">
              {problem}
            </p>
          )}
          <ul class="process-list">
            {procs.map((proc) => (
              <li key={proc.name} class="process-item" data-testid="process-item" data-name={proc.name}>
                <div class="process-head">
                  <strong>{proc.name}</strong>
                  <span class={`muted process-state process-${proc.state}`}>{stateText(proc)}</span>
                  {proc.state === "running" && (
                    <button
                      type="button"
                      class="btn btn-small"
                      disabled={stopping === proc.name}
                      onClick={() => void stop(proc.name)}
                      data-testid="process-stop"
                    >
                      {stopping === proc.name ? t("processes.stopping") : t("processes.stop")}
                    </button>
                  )}
                </div>
                <code class="process-command">{proc.command}</code>
                {proc.previews.map((preview) => (
                  <a
                    key={preview.port}
                    href={preview.path}
                    target="_blank"
                    rel="noopener noreferrer"
                    class="process-preview"
                    data-testid="process-preview"
                  >
                    {t("processes.preview", { port: String(preview.port) })}
                  </a>
                ))}
                <pre class="process-output" data-testid="process-output">
                  {proc.output.length === 0
                    ? t("processes.noOutput")
                    : proc.output.map((line) => line.text).join("\n")}
                </pre>
              </li>
            ))}
          </ul>
        </Modal>
      )}
    </>
  );
}
