/**
 * Reads an uploaded file's body as it streams in, checking it against the per-kind limits on the way:
 * the kind is known from the first bytes, so a 30 MB "image" is refused once it passes the image
 * limit (or at once, when its declared length is over it), never read whole into memory first.
 */
import { type AttachmentLimits, checkSized, limitOf, sniffFile } from "../../attachments/kinds.js";

/** Bytes enough to tell every kind apart (the longest signature is 12 bytes). */
const HEAD_BYTES = 64;

/**
 * The body's bytes, or the attachment refusal (413 `too_large`, 400 `invalid`) as soon as it is
 * certain; the rest of the body is then not read.
 */
export async function readUpload(
  body: ReadableStream<Uint8Array> | null,
  declaredSize: number | undefined,
  name: string,
  limits: AttachmentLimits,
): Promise<Buffer> {
  if (!body) return Buffer.alloc(0);
  const ceiling = Math.max(limits.imageBytes, limits.pdfBytes, limits.textBytes);
  const reader = body.getReader();
  const chunks: Buffer[] = [];
  let size = 0;
  let head: Buffer | undefined;
  let limit = ceiling;
  let finished = false;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      chunks.push(Buffer.from(value.buffer, value.byteOffset, value.byteLength));
      size += value.byteLength;
      if (head === undefined && size >= HEAD_BYTES) {
        head = Buffer.concat(chunks, size).subarray(0, HEAD_BYTES);
        const sniffed = sniffFile(head, name);
        if (sniffed) limit = limitOf(sniffed.kind, limits);
        // A length declared over the limit is refused now, not after its bytes arrived.
        if (declaredSize !== undefined && declaredSize > limit) checkSized(head, declaredSize, name, limits);
      }
      if (size > limit) checkSized(head ?? Buffer.concat(chunks, size), size, name, limits);
    }
    finished = true;
  } finally {
    if (!finished) await reader.cancel().catch(() => undefined);
  }
  return Buffer.concat(chunks, size);
}
