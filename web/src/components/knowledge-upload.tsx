/**
 * The drop zone of a knowledge base: drag and drop or pick files, then two progress bars, bytes
 * sent (XHR upload progress) and files ingested (the job, polled until it ends), with cancel. A
 * refused upload (unsupported type, too large) says why inline, next to where the files went.
 */

import { useEffect, useRef, useState } from "preact/hooks";
import { errorText } from "../api.js";
import { useServices } from "../hooks.js";
import { t } from "../i18n/index.js";
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

const OUTCOME_COUNT = {
  added: "kb.upload.countAdded",
  updated: "kb.upload.countUpdated",
  unchanged: "kb.upload.countUnchanged",
  failed: "kb.upload.countFailed",
  skipped: "kb.upload.countSkipped",
} as const;

const OUTCOME = {
  added: "kb.upload.outcomeAdded",
  updated: "kb.upload.outcomeUpdated",
  unchanged: "kb.upload.outcomeUnchanged",
  failed: "kb.upload.outcomeFailed",
  skipped: "kb.upload.outcomeSkipped",
} as const;

function summary(job: IngestJob): string {
  if (job.status === "failed")
    return t("kb.upload.failed", { error: job.error ?? t("kb.upload.unknownError") });
  const r = job.result;
  const counts = r
    ? COUNTED.filter((k) => r[k] > 0)
        .map((k) => t(OUTCOME_COUNT[k], { count: r[k] }))
        .join(", ")
    : "";
  if (job.status === "cancelled")
    return counts ? t("kb.upload.cancelledAfter", { counts }) : t("kb.upload.cancelled");
  return t("kb.upload.done", { counts: counts || t("kb.upload.nothing") });
}

/** The error's message as a sentence part: no trailing full stop, since the caller adds one. */
function reason(err: unknown): string {
  return errorText(err).replace(/\.+$/, "");
}

function fileLine(f: IngestFileResult): string {
  const chunks =
    f.chunks !== undefined && f.outcome !== "failed"
      ? ` (${t("kb.upload.chunks", { count: f.chunks })})`
      : "";
  const why = f.reason ?? f.warning;
  const outcome = f.outcome in OUTCOME ? t(OUTCOME[f.outcome as keyof typeof OUTCOME]) : f.outcome;
  return `${f.source}: ${outcome}${chunks}${why ? ` — ${why}` : ""}`;
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
            text: t("kb.upload.lostTrack", { reason: reason(err) }),
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
        text: t("kb.upload.refused", { reason: reason(err) }),
      });
    }
  };

  return (
    <div data-testid="kb-upload" data-phase={phase.step}>
      {/* The zone is not the button: a disabled button would let a drop through to the browser, which then opens the file in place of the app. */}
      <section
        aria-label={t("kb.upload.zoneLabel")}
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
          {busy ? t("kb.upload.wait") : t("kb.upload.dropOr")}
          {!busy && (
            <button
              type="button"
              class="btn btn-small"
              onClick={() => picker.current?.click()}
              data-testid="kb-pick"
            >
              {t("kb.upload.choose")}
            </button>
          )}
        </p>
        <p class="muted" data-testid="kb-upload-limits">
          {limits
            ? t("kb.upload.typesLimits", { count: limits.maxFiles, size: formatLimit(limits.maxFileBytes) })
            : t("kb.upload.types")}
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
          {t("kb.upload.uploading", { count: phase.count })} <progress max={1} value={phase.fraction} />{" "}
          {Math.round(phase.fraction * 100)}%
        </p>
      )}
      {phase.step === "ingesting" && (
        <p data-testid="kb-ingest-progress">
          {t("kb.upload.indexing", { done: phase.job.progress.done, total: phase.job.progress.total })}
          {phase.job.progress.current ? ` (${phase.job.progress.current})` : ""}{" "}
          <progress max={Math.max(phase.job.progress.total, 1)} value={phase.job.progress.done} />{" "}
          <button
            type="button"
            class="btn btn-small"
            onClick={() =>
              void client.cancel(phase.job.id).catch((err: unknown) => {
                setPhase({ step: "problem", text: t("kb.upload.cancelFailed", { reason: reason(err) }) });
                onIngested();
              })
            }
            data-testid="kb-ingest-cancel"
          >
            {t("common.cancel")}
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
            {t("common.dismiss")}
          </button>
        </p>
      )}
    </div>
  );
}
