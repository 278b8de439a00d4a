/**
 * Streamed answers on platforms that can edit messages: the first text of a run is sent at once as a
 * preview message, later text edits it at most once per interval, and the final answer (through the
 * outbox) replaces it. Previews are best effort: a failed preview only means the answer arrives whole.
 */
import { measure, truncateText } from "./split-text.js";
import type { ConnectorDriver, MessageLimit } from "./types.js";

const TYPING = " …";

interface Preview {
  driver: NonNullable<ConnectorDriver["preview"]>;
  connectorId: string;
  chatId: string;
  limit: MessageLimit;
  text: string;
  shown: string;
  messageId: string | undefined;
  /** The send or edit in flight; the next one waits for it. */
  busy: Promise<void>;
  lastAt: number;
  started: boolean;
  timer: NodeJS.Timeout | undefined;
  /** Stop updating (failed, or the text outgrew one message). */
  frozen: boolean;
  /** A send or edit failed. */
  failed: boolean;
}

export interface PreviewTarget {
  driver: NonNullable<ConnectorDriver["preview"]>;
  connectorId: string;
  chatId: string;
  limit: MessageLimit;
}

/** The previews of the runs being streamed, keyed by run id. */
export class PreviewStreams {
  readonly #previews = new Map<string, Preview>();
  readonly #intervalMs: number;
  readonly #now: () => number;
  readonly #onError: (err: unknown) => void;

  constructor(options: { intervalMs: number; now: () => number; onError: (err: unknown) => void }) {
    this.#intervalMs = options.intervalMs;
    this.#now = options.now;
    this.#onError = options.onError;
  }

  /** More text of a run: shows it now (first time) or schedules a throttled edit. */
  delta(runId: string, target: PreviewTarget, text: string): void {
    let preview = this.#previews.get(runId);
    if (!preview) {
      preview = {
        ...target,
        text: "",
        shown: "",
        messageId: undefined,
        busy: Promise.resolve(),
        lastAt: 0,
        started: false,
        timer: undefined,
        frozen: false,
        failed: false,
      };
      this.#previews.set(runId, preview);
    }
    preview.text += text;
    if (preview.frozen || preview.timer) return;
    const wait = preview.lastAt + this.#intervalMs - this.#now();
    if (!preview.started) this.#flush(preview);
    else preview.timer = setTimeout(() => this.#flush(preview), Math.max(0, wait));
  }

  #flush(preview: Preview): void {
    preview.timer = undefined;
    if (preview.frozen) return;
    const full = preview.text.trim();
    if (full === "" || full === preview.shown) return;
    if (measure(full, preview.limit.unit) > preview.limit.max) preview.frozen = true;
    const shown = truncateText(`${full}${TYPING}`, preview.limit);
    preview.started = true;
    preview.lastAt = this.#now();
    preview.busy = preview.busy.then(async () => {
      try {
        if (preview.messageId === undefined) {
          preview.messageId = await preview.driver.send(preview.chatId, shown);
        } else {
          await preview.driver.edit(preview.chatId, preview.messageId, shown);
        }
        preview.shown = full;
      } catch (err) {
        preview.frozen = true;
        preview.failed = true;
        this.#onError(err);
      }
    });
  }

  /**
   * The run ended (or paused): no more edits; resolves with the preview's message id once it is
   * settled. With `settle` the preview is left showing the text so far, without the typing mark
   * (best effort), as a message of its own: the run's later text starts a new preview.
   */
  async finish(runId: string, options: { settle?: boolean } = {}): Promise<string | undefined> {
    const preview = this.#previews.get(runId);
    if (!preview) return undefined;
    this.#previews.delete(runId);
    preview.frozen = true;
    clearTimeout(preview.timer);
    await preview.busy;
    const full = preview.text.trim();
    if (options.settle && !preview.failed && preview.messageId !== undefined && full !== "") {
      try {
        await preview.driver.edit(preview.chatId, preview.messageId, truncateText(full, preview.limit));
      } catch (err) {
        this.#onError(err);
      }
    }
    return preview.messageId;
  }

  /** Drops the previews of a connector (it stopped); their answers still go out in full. */
  discard(connectorId: string): void {
    for (const [runId, preview] of this.#previews) {
      if (preview.connectorId !== connectorId) continue;
      preview.frozen = true;
      clearTimeout(preview.timer);
      this.#previews.delete(runId);
    }
  }
}
