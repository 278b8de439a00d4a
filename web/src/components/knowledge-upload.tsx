/**
 * The drop zone of a knowledge base: drag and drop or pick files, then two progress bars, bytes
 * sent (XHR upload progress) and files ingested (the job, polled until it ends), with cancel.
 */
import { useEffect, useRef, useState } from "preact/hooks";
import { useReportError, useServices } from "../hooks.js";
import { type IngestJob, knowledgeApi, uploadFiles } from "./knowledge-api.js";

const POLL_MS = 500;

type Phase =
  | { step: "idle" }
  | { step: "uploading"; fraction: number; count: number }
  | { step: "ingesting"; job: IngestJob }
  | { step: "finished"; job: IngestJob };

function summary(job: IngestJob): string {
  if (job.status === "failed") return `Failed: ${job.error ?? "unknown error"}`;
  const r = job.result;
  const counts = r
    ? `${r.added} added, ${r.updated} updated, ${r.unchanged} unchanged, ${r.failed} failed, ${r.skipped} skipped`
    : "";
  return job.status === "cancelled" ? `Cancelled. ${counts}` : `Done: ${counts}.`;
}

/** Upload area for one base; calls `onIngested` when a job ends so the documents list can refresh. */
export function KnowledgeUpload({ kb, onIngested }: { kb: string; onIngested: () => void }) {
  const { api } = useServices();
  const report = useReportError();
  const [phase, setPhase] = useState<Phase>({ step: "idle" });
  const [over, setOver] = useState(false);
  const picker = useRef<HTMLInputElement>(null);
  const client = knowledgeApi(api);
  const jobId = phase.step === "ingesting" ? phase.job.id : undefined;

  useEffect(() => {
    if (!jobId) return;
    let live = true;
    const timer = setInterval(() => {
      client
        .job(jobId)
        .then((job) => {
          if (!live) return;
          if (job.status === "running") setPhase({ step: "ingesting", job });
          else {
            setPhase({ step: "finished", job });
            onIngested();
          }
        })
        .catch((err) => {
          if (live) setPhase({ step: "idle" });
          report(err);
        });
    }, POLL_MS);
    return () => {
      live = false;
      clearInterval(timer);
    };
  }, [jobId]);

  const busy = phase.step === "uploading" || phase.step === "ingesting";
  const send = async (list: FileList | null | undefined) => {
    const files = list ? [...list] : [];
    if (files.length === 0 || busy) return;
    setPhase({ step: "uploading", fraction: 0, count: files.length });
    try {
      const id = await uploadFiles(api, kb, files, (fraction) =>
        setPhase({ step: "uploading", fraction, count: files.length }),
      );
      setPhase({
        step: "ingesting",
        job: {
          id,
          kb,
          status: "running",
          progress: { done: 0, total: files.length, bytesDone: 0, bytesTotal: 0 },
        },
      });
    } catch (err) {
      setPhase({ step: "idle" });
      report(err);
    }
  };

  return (
    <div data-testid="kb-upload">
      <button
        type="button"
        class="form"
        disabled={busy}
        aria-label="Drop files here or press to pick files"
        data-testid="kb-dropzone"
        data-over={over ? "true" : "false"}
        style={{
          display: "block",
          width: "100%",
          border: `2px dashed ${over ? "var(--accent, #4a7)" : "var(--border, #999)"}`,
          padding: "1.5rem",
          textAlign: "center",
          cursor: busy ? "progress" : "pointer",
        }}
        onClick={() => picker.current?.click()}
        onDragOver={(e) => {
          e.preventDefault();
          setOver(true);
        }}
        onDragLeave={() => setOver(false)}
        onDrop={(e) => {
          e.preventDefault();
          setOver(false);
          void send(e.dataTransfer?.files);
        }}
      >
        Drop Markdown, text, HTML, PDF or code files here, or click to choose.
      </button>
      <input
        ref={picker}
        type="file"
        multiple
        hidden
        accept=".md,.markdown,.txt,.html,.htm,.pdf,.ts,.tsx,.js,.jsx,.py,.go,.rs,.java,.c,.h,.cpp,.cs,.rb,.php,.sh,.sql,.json,.yaml,.yml,.toml"
        data-testid="kb-file-input"
        onChange={(e) => {
          const input = e.currentTarget;
          void send(input.files).finally(() => {
            input.value = "";
          });
        }}
      />
      {phase.step === "uploading" && (
        <p data-testid="kb-upload-progress">
          Uploading {phase.count} file{phase.count === 1 ? "" : "s"}…{" "}
          <progress max={1} value={phase.fraction} /> {Math.round(phase.fraction * 100)}%
        </p>
      )}
      {phase.step === "ingesting" && (
        <p data-testid="kb-ingest-progress">
          Indexing {phase.job.progress.done}/{phase.job.progress.total}
          {phase.job.progress.current ? ` (${phase.job.progress.current})` : ""}{" "}
          <progress max={Math.max(phase.job.progress.total, 1)} value={phase.job.progress.done} />{" "}
          <button
            type="button"
            class="btn btn-small"
            onClick={() => void client.cancel(phase.job.id).catch(report)}
            data-testid="kb-ingest-cancel"
          >
            Cancel
          </button>
        </p>
      )}
      {phase.step === "finished" && (
        <div data-testid="kb-ingest-result" data-status={phase.job.status}>
          <p>{summary(phase.job)}</p>
          <ul>
            {(phase.job.result?.files ?? [])
              .filter((f) => f.reason)
              .map((f) => (
                <li key={f.source} class="muted">
                  {f.source}: {f.reason}
                </li>
              ))}
          </ul>
        </div>
      )}
    </div>
  );
}
