/** Turns response body bytes into server-sent events (`\n\n` and `\r\n\r\n` both accepted). */
import { createParser } from "eventsource-parser";
import type { SseEvent } from "./adapter.js";

export interface SseDecoder {
  /** Feeds raw body bytes; multi-byte characters split across chunks are held until complete. */
  feed(chunk: Uint8Array): void;
  /** Flushes the decoder at end of body, delivering a last event that lacked its blank line. */
  end(): void;
}

const STREAM_OPTIONS = { stream: true } as const;

/** Creates a decoder that calls `onEvent` for each complete event, synchronously, in order. */
export function createSseDecoder(onEvent: (event: SseEvent) => void): SseDecoder {
  const decoder = new TextDecoder();
  const parser = createParser({ onEvent });
  return {
    feed(chunk) {
      const text = decoder.decode(chunk, STREAM_OPTIONS);
      if (text !== "") parser.feed(text);
    },
    end() {
      // Some servers close without the final blank line; a blank line here dispatches what is pending.
      parser.feed(`${decoder.decode()}\n\n`);
    },
  };
}
