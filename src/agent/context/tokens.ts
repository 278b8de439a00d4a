/**
 * Token accounting before a model call: a fast estimate (CJK ~1 token per character, other text ~4
 * characters per token), a pluggable counter for real tokenizers, and a calibrator that corrects the
 * estimate with the input tokens providers report.
 */
import { imageSize, imageTokens } from "../../attachments/image-size.js";
import type { Context, FilePart, ImagePart, Message, ToolSchema, UserContentPart } from "../../llm/types.js";

/** Anything that turns text into a token count; a real tokenizer can stand in for the estimator. */
export interface TokenCounter {
  count(text: string): number;
}

/** Fixed costs the estimator adds on top of text. */
export const TOKEN_COSTS = {
  /** Role markers and separators around every message. */
  message: 4,
  /** Providers bill images by size; a mid-sized image is about this much. */
  image: 1000,
  /** A PDF page sent as a document (its text and an image of it). */
  pdfPage: 2000,
  /** Framing around each tool call (id, type, wrapper). */
  toolCall: 4,
  /** Framing around each tool schema. */
  toolSchema: 8,
} as const;

const CHARS_PER_TOKEN = 4;

// Unicode property escapes are the source of truth; each code point is tested once, then cached,
// so the hot loop only reads a typed array.
const CJK_CHAR =
  /^[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}\p{Script=Bopomofo}\u3000-\u303f\uff00-\uffef]$/u;
const UNKNOWN = 0;
const IS_CJK = 1;
const NOT_CJK = 2;
const bmpClass = new Uint8Array(0x10000);
const astralClass = new Map<number, boolean>();

function isCjkBmp(code: number): boolean {
  let cls = bmpClass[code];
  if (cls === UNKNOWN) {
    cls = CJK_CHAR.test(String.fromCharCode(code)) ? IS_CJK : NOT_CJK;
    bmpClass[code] = cls;
  }
  return cls === IS_CJK;
}

function isCjkAstral(codePoint: number): boolean {
  // Han extensions B and later (planes 2 and 3) dominate astral CJK text.
  if (codePoint >= 0x20000 && codePoint <= 0x3ffff) return true;
  let known = astralClass.get(codePoint);
  if (known === undefined) {
    known = CJK_CHAR.test(String.fromCodePoint(codePoint));
    astralClass.set(codePoint, known);
  }
  return known;
}

/** Estimates the tokens of a text in one pass: CJK characters one each, other text four characters a token. */
export function estimateTextTokens(text: string): number {
  let cjk = 0;
  let other = 0;
  const length = text.length;
  for (let i = 0; i < length; i++) {
    const code = text.charCodeAt(i);
    if (code < 0x80) {
      other++;
    } else if (code >= 0xd800 && code <= 0xdbff && i + 1 < length) {
      const low = text.charCodeAt(i + 1);
      if (low >= 0xdc00 && low <= 0xdfff) {
        i++;
        const codePoint = (code - 0xd800) * 0x400 + (low - 0xdc00) + 0x10000;
        if (isCjkAstral(codePoint)) cjk++;
        else other += 2;
      } else {
        other++;
      }
    } else if (isCjkBmp(code)) {
      cjk++;
    } else {
      other++;
    }
  }
  return cjk + Math.ceil(other / CHARS_PER_TOKEN);
}

/** The estimator as a TokenCounter; the default wherever a counter is optional. */
export const defaultTokenCounter: TokenCounter = { count: estimateTextTokens };

/** Estimates one message: its text, tool calls, reasoning and images, plus per-message framing. */
export function estimateMessageTokens(message: Message, counter: TokenCounter = defaultTokenCounter): number {
  let tokens = TOKEN_COSTS.message;
  switch (message.role) {
    case "system":
      return tokens + counter.count(message.content);
    case "user":
      return tokens + contentTokens(message.content, counter);
    case "tool":
      return tokens + counter.count(message.toolName) + contentTokens(message.content, counter);
    case "assistant":
      for (const part of message.content) {
        if (part.type === "text") tokens += counter.count(part.text);
        else if (part.type === "reasoning") {
          tokens += counter.count(part.text);
          // Redacted thinking is sent back verbatim; its size still occupies the request.
          if (part.redactedData) tokens += counter.count(part.redactedData);
        } else tokens += TOKEN_COSTS.toolCall + counter.count(part.name) + counter.count(part.arguments);
      }
      return tokens;
  }
}

function contentTokens(content: string | UserContentPart[], counter: TokenCounter): number {
  if (typeof content === "string") return counter.count(content);
  let tokens = 0;
  for (const part of content) {
    if (part.type === "text") tokens += counter.count(part.text);
    else if (part.type === "image") tokens += imagePartTokens(part);
    else tokens += filePartTokens(part, counter);
  }
  return tokens;
}

/** An image by its pixel size (read from its header), or the flat cost when the header is unknown. */
function imagePartTokens(part: ImagePart): number {
  // Only the header is needed: 64 KB of base64 covers every JPEG segment before the frame.
  const head = Buffer.from(part.data.slice(0, 65_536), "base64");
  return imageTokens(imageSize(head));
}

/**
 * A text file by its text; a PDF by its size (providers bill a page as its text plus an image of it,
 * roughly 1,500-3,000 tokens a page; a page of a typical PDF takes about 50 KB).
 */
function filePartTokens(part: FilePart, counter: TokenCounter): number {
  const bytes = Math.floor((part.data.length * 3) / 4);
  if (part.mimeType !== "application/pdf")
    return counter.count(Buffer.from(part.data, "base64").toString("utf8"));
  return Math.max(TOKEN_COSTS.pdfPage, Math.ceil(bytes / 50_000) * TOKEN_COSTS.pdfPage);
}

interface SchemaEstimate {
  counter: TokenCounter;
  name: string;
  description: string;
  tokens: number;
}

// Registries hand out the same parameters object for a tool every time: estimate it once.
const schemaEstimates = new WeakMap<object, SchemaEstimate>();

/** Estimates one tool schema as the provider receives it (name, description, JSON parameters). */
export function estimateToolSchemaTokens(
  tool: ToolSchema,
  counter: TokenCounter = defaultTokenCounter,
): number {
  const cached = schemaEstimates.get(tool.parameters);
  if (
    cached &&
    cached.counter === counter &&
    cached.name === tool.name &&
    cached.description === tool.description
  )
    return cached.tokens;
  const tokens =
    TOKEN_COSTS.toolSchema +
    counter.count(tool.name) +
    counter.count(tool.description) +
    counter.count(JSON.stringify(tool.parameters));
  schemaEstimates.set(tool.parameters, { counter, name: tool.name, description: tool.description, tokens });
  return tokens;
}

/** Estimates a whole request: system prompt, every message and the tool schemas. */
export function estimateContextTokens(context: Context, counter: TokenCounter = defaultTokenCounter): number {
  let tokens = context.system ? TOKEN_COSTS.message + counter.count(context.system) : 0;
  for (const message of context.messages) tokens += estimateMessageTokens(message, counter);
  for (const tool of context.tools ?? []) tokens += estimateToolSchemaTokens(tool, counter);
  return tokens;
}

export interface UsageCalibratorOptions {
  /** Weight of the newest observation in the running ratio (0–1). */
  smoothing?: number;
  minRatio?: number;
  maxRatio?: number;
}

/**
 * Learns how far estimates sit from the provider's real input count and scales later estimates.
 * The ratio is smoothed so one odd call (cache effects, a huge image) cannot swing it, and clamped
 * so a broken usage report cannot make the estimate absurd.
 */
export class UsageCalibrator {
  private current = 1;
  private observations = 0;
  private readonly smoothing: number;
  private readonly minRatio: number;
  private readonly maxRatio: number;

  constructor(options: UsageCalibratorOptions = {}) {
    this.smoothing = Math.min(1, Math.max(0, options.smoothing ?? 0.3));
    this.minRatio = options.minRatio ?? 0.5;
    this.maxRatio = options.maxRatio ?? 2;
  }

  /** The correction factor currently applied (actual / estimated). */
  get ratio(): number {
    return this.current;
  }

  /** How many usable observations have been folded in. */
  get observed(): number {
    return this.observations;
  }

  /** Scales an estimate by the learned ratio, rounding up so it errs towards compacting early. */
  calibrate(estimate: number): number {
    return Math.ceil(estimate * this.current);
  }

  /** Folds in one call: what we estimated for its input and the input tokens the provider reported. */
  observe(estimated: number, actualInput: number): void {
    if (
      !(estimated > 0) ||
      !(actualInput > 0) ||
      !Number.isFinite(estimated) ||
      !Number.isFinite(actualInput)
    ) {
      return;
    }
    const sample = this.clamp(actualInput / estimated);
    // The first observation replaces the neutral prior outright; later ones are smoothed.
    this.current =
      this.observations === 0 ? sample : this.clamp(this.current + this.smoothing * (sample - this.current));
    this.observations++;
  }

  private clamp(ratio: number): number {
    return Math.min(this.maxRatio, Math.max(this.minRatio, ratio));
  }
}
