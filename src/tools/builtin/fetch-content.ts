/** Turns a downloaded body into text a model can read, chosen by its content type. */
import { formatSize } from "./files.js";
import { htmlToReadableText } from "./html-text.js";

export type ContentKind = "html" | "json" | "text" | "binary";

export interface RenderedBody {
  kind: ContentKind;
  text: string;
  title?: string;
  /** Set when the body could not be shown as its type claims, e.g. JSON cut at the size limit. */
  note?: string;
}

const TEXT_TYPES = new Set([
  "application/xml",
  "application/javascript",
  "application/x-javascript",
  "application/ecmascript",
  "application/x-ndjson",
  "application/yaml",
  "application/x-yaml",
  "application/toml",
  "application/sql",
  "application/graphql",
  "application/x-sh",
  "application/x-www-form-urlencoded",
  "application/csv",
]);

/** The bare media type and charset of a Content-Type header. */
export function parseContentType(header: string | undefined): { mime: string; charset: string | undefined } {
  if (!header) return { mime: "", charset: undefined };
  const [type, ...params] = header.split(";");
  const charsetParam = params.map((p) => p.trim()).find((p) => p.toLowerCase().startsWith("charset="));
  const charset = charsetParam?.slice("charset=".length).replace(/^"|"$/g, "");
  return { mime: (type ?? "").trim().toLowerCase(), charset };
}

function kindOf(mime: string, body: Buffer): ContentKind {
  if (mime === "text/html" || mime === "application/xhtml+xml") return "html";
  if (mime === "application/json" || mime === "text/json" || mime.endsWith("+json")) return "json";
  if (mime.startsWith("text/") || mime.endsWith("+xml") || TEXT_TYPES.has(mime)) return "text";
  if (mime !== "" && mime !== "application/octet-stream") return "binary";
  // No useful type: look at the bytes.
  const head = body.subarray(0, 1024);
  if (head.includes(0)) return "binary";
  const start = head.toString("utf8").trimStart().slice(0, 15).toLowerCase();
  if (start.startsWith("<!doctype html") || start.startsWith("<html")) return "html";
  return mime === "" ? "text" : "binary";
}

function decode(body: Buffer, charset: string | undefined): string {
  try {
    return new TextDecoder(charset ?? "utf-8").decode(body);
  } catch {
    // Unknown charset label: UTF-8 is the best guess on today's web.
    return new TextDecoder("utf-8").decode(body);
  }
}

/** Renders a body: HTML as readable text, JSON pretty-printed, text as is, anything else described. */
export async function renderBody(
  contentType: string | undefined,
  body: Buffer,
  url: string,
  truncated: boolean,
): Promise<RenderedBody> {
  const { mime, charset } = parseContentType(contentType);
  const kind = kindOf(mime, body);
  if (kind === "binary") {
    const size = truncated ? `more than ${formatSize(body.length)}` : formatSize(body.length);
    return { kind, text: `[binary content: ${mime || "unknown type"}, ${size}; not shown as text]` };
  }
  const text = decode(body, charset);
  if (kind === "html") {
    const page = await htmlToReadableText(text, url);
    return page.title === undefined
      ? { kind, text: page.text }
      : { kind, text: page.text, title: page.title };
  }
  if (kind === "json") {
    try {
      return { kind, text: JSON.stringify(JSON.parse(text), null, 2) };
    } catch {
      const why = truncated ? "it was cut at the size limit" : "it is not valid JSON";
      return { kind: "text", text, note: `[shown as plain text because ${why}]` };
    }
  }
  return { kind, text };
}
