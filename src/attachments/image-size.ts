/** Pixel dimensions read from an image's header (PNG, JPEG, GIF, WebP), without decoding it. */

export interface ImageSize {
  width: number;
  height: number;
}

/** The image's width and height, or undefined when the header is not one we read. */
export function imageSize(bytes: Uint8Array): ImageSize | undefined {
  const b = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (b.length >= 24 && b.readUInt32BE(0) === 0x89504e47) {
    return { width: b.readUInt32BE(16), height: b.readUInt32BE(20) };
  }
  if (b.length >= 10 && b.toString("latin1", 0, 3) === "GIF") {
    return { width: b.readUInt16LE(6), height: b.readUInt16LE(8) };
  }
  if (b.length >= 30 && b.toString("latin1", 0, 4) === "RIFF" && b.toString("latin1", 8, 12) === "WEBP") {
    return webpSize(b);
  }
  if (b.length >= 4 && b[0] === 0xff && b[1] === 0xd8) return jpegSize(b);
  return undefined;
}

function webpSize(b: Buffer): ImageSize | undefined {
  const chunk = b.toString("latin1", 12, 16);
  if (chunk === "VP8X") return { width: b.readUIntLE(24, 3) + 1, height: b.readUIntLE(27, 3) + 1 };
  if (chunk === "VP8L") {
    const bits = b.readUInt32LE(21);
    return { width: (bits & 0x3fff) + 1, height: ((bits >> 14) & 0x3fff) + 1 };
  }
  if (chunk === "VP8 ") return { width: b.readUInt16LE(26) & 0x3fff, height: b.readUInt16LE(28) & 0x3fff };
  return undefined;
}

/** Walks the JPEG segments to the first start-of-frame marker, which holds the size. */
function jpegSize(b: Buffer): ImageSize | undefined {
  let at = 2;
  while (at + 9 < b.length) {
    if (b[at] !== 0xff) return undefined;
    const marker = b[at + 1] ?? 0;
    if (marker === 0xff) {
      at++;
      continue;
    }
    const length = b.readUInt16BE(at + 2);
    const isFrame = marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc;
    if (isFrame) return { height: b.readUInt16BE(at + 5), width: b.readUInt16BE(at + 7) };
    at += 2 + length;
  }
  return undefined;
}

/**
 * What an image costs in input tokens, roughly: providers scale images to about 1.15 megapixels and
 * bill about one token per 750 pixels (Anthropic's published rule; OpenAI's tiles come out close).
 */
export function imageTokens(size: ImageSize | undefined): number {
  if (!size || size.width <= 0 || size.height <= 0) return 1000;
  const pixels = size.width * size.height;
  const scaled = Math.min(pixels, 1_150_000);
  return Math.max(85, Math.ceil(scaled / 750));
}
