/**
 * The drop zone of a knowledge base: drag and drop or pick files, then two progress bars, bytes
 * sent (XHR upload progress) and files ingested (the job, polled until it ends), with cancel. A
 * refused upload (unsupported type, too large) says why inline, next to where the files went.
 */

import { useEffect, useRef, useState } from "preact/hooks";
import { errorText } from "../api.js";
import { plural } from "../format.js";
import { useServices } from "../hooks.js";
import {
  type IngestFileResult,
  type IngestJob,
  knowledgeApi,
  type UploadLimits,
  uploadFiles,
} from "./knowledge-api.js";

const POLL_MS = 500;

const ACCEPT = [
  ".md,.markdown,.mdx,.txt,.text,.rst,.log,.csv,.html,.htm,.xhtml,.pdf",
  ".ts,.tsx,.js,.jsx,.mjs,.cjs,.py,.go,.rs,.java,.kt,.c,.h,.cpp,.hpp,.cs,.rb,.php,.swift,.sh,.sql",
  ".json,.yaml,.yml,.toml,.xml,.css",
].join(",");

type Phase =
  | { step: "idle" }
  | { step: "uploading"; fraction: number; count: number }
  | { step: "ingesting"; job: IngestJob }
  | { step: "finished"; job: IngestJob }
  | { step: "problem"; text: string };

const COUNTED = ["added", "updated", "unchanged", "failed", "skipped"] as const;

function summary(job: IngestJob): string {
  if (job.status === "failed") return `Indexing failed: ${job.error ?? "unknown error"}`;
  const r = job.result;
  const counts = r
    ? COUNTED.filter((k) => r[k] > 0)
        .map((k) => `${r[k]} ${k}`)
        .join(", ")
    : "";
  if (job.status === "cancelled") return `Cancelled${counts ? `; ${counts} before stopping` : ""}.`;
  return `Done: ${counts || "nothing to index"}.`;
}

/** The error's message as a sentence part: no trailing full stop, since the caller adds one. */
function reason(err: unknown): string {
  return errorText(err).replace(/\.+$/, "");
}

function fileLine(f: IngestFileResult): string {
  const chunks = f.chunks !== undefined && f.outcome !== "failed" ? ` (${plural(f.chunks, "chunk")})` : "";
  const why = f.reason ?? f.warning;
  return `${f.source}: ${f.outcome}${chunks}${why ? ` — ${why}` : ""}`;
}

/** Upload area for one base; calls `onIngested` when a job ends so the documents list can refresh. */
/** A byte count as the page shows limits: whole KB or MB. */
function formatLimit(bytes: number): string {
  return bytes >= 1024 * 1024 ? `${Math.round(bytes / (1024 * 1024))} MB` : `${Math.round(bytes / 1024)} KB`;
}

export function KnowledgeUpload({
  kb,
  limits,
  onIngested,
}: {
  kb: string;
  limits: UploadLimits | undefined;
  onIngested: () => void;
}) {
  const { api } = useServices();
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
        .catch((err: unknown) => {
          if (!live) return;
          setPhase({
            step: "problem",
            text: `Lost track of the indexing: ${reason(err)}. Reload the page to see which documents were added.`,
          });
          onIngested();
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
          startedAt: Date.now(),
        },
      });
    } catch (err) {
      setPhase({
        step: "problem",
        text: `Upload refused: ${reason(err)}. Nothing from these files was added.`,
      });
    }
  };

  return (
    <div data-testid="kb-upload" data-phase={phase.step}>
      {/* The zone is not the button: a disabled button would let a drop through to the browser, which then opens the file in place of the app. */}
      <section
        aria-label="Drop files here to add them"
        data-testid="kb-dropzone"
        data-over={over ? "true" : "false"}
        class={`kb-dropzone${over ? " is-over" : ""}${busy ? " is-busy" : ""}`}
        onDragEnter={(e) => {
          e.preventDefault();
          setOver(true);
        }}
        onDragOver={(e) => {
          e.preventDefault();
          if (e.dataTransfer) e.dataTransfer.dropEffect = busy ? "none" : "copy";
          setOver(true);
        }}
        onDragLeave={(e) => {
          // Leaving for a child of the zone is not leaving the zone.
          if (!e.currentTarget.contains(e.relatedTarget as Node | null)) setOver(false);
        }}
        onDrop={(e) => {
          e.preventDefault();
          setOver(false);
          void send(e.dataTransfer?.files);
        }}
      >
        <p>
          {busy ? "Wait for this upload to finish before adding more." : "Drop files here, or "}
          {!busy && (
            <button
              type="button"
              class="btn btn-small"
              onClick={() => picker.current?.click()}
              data-testid="kb-pick"
            >
              choose files
            </button>
          )}
        </p>
        <p class="muted" data-testid="kb-upload-limits">
          Markdown, plain text, HTML, PDF and source code
          {limits
            ? `; up to ${plural(limits.maxFiles, "file")} of ${formatLimit(limits.maxFileBytes)} each`
            : ""}
          .
        </p>
      </section>
      <input
        ref={picker}
        type="file"
        multiple
        hidden
        accept={ACCEPT}
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
          Uploading {plural(phase.count, "file")}… <progress max={1} value={phase.fraction} />{" "}
          {Math.round(phase.fraction * 100)}%
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
            onClick={() =>
              void client.cancel(phase.job.id).catch((err: unknown) => {
                setPhase({ step: "problem", text: `Could not cancel the indexing: ${reason(err)}.` });
                onIngested();
              })
            }
            data-testid="kb-ingest-cancel"
          >
            Cancel
          </button>
        </p>
      )}
      {phase.step === "finished" && (
        <div data-testid="kb-ingest-result" data-status={phase.job.status}>
          <p data-testid="kb-ingest-summary">{summary(phase.job)}</p>
          <ul>
            {(phase.job.result?.files ?? []).map((f) => (
              <li
                key={f.source}
                class={f.outcome === "failed" ? "form-error" : "muted"}
                data-testid="kb-ingest-file"
                data-outcome={f.outcome}
              >
                {fileLine(f)}
              </li>
            ))}
          </ul>
        </div>
      )}
      {phase.step === "problem" && (
        <p class="form-error" role="alert" data-testid="kb-upload-error">
          <span data-testid="kb-upload-error-text">{phase.text}</span>{" "}
          <button
            type="button"
            class="btn btn-small"
            onClick={() => setPhase({ step: "idle" })}
            data-testid="kb-upload-error-dismiss"
          >
            Dismiss
          </button>
        </p>
      )}
    </div>
  );
}
