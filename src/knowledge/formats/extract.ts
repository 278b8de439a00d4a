/** Reads a document's bytes with the parser for its format. */

import type { ExtractedDocument } from "../../attachments/extracted-document.js";
import { parsePdf } from "../../attachments/pdf-text.js";
import { DimsumError } from "../../errors.js";
import { parseCode } from "./code.js";
import type { FormatKind } from "./detect.js";
import { parseMarkdown } from "./markdown.js";
import { parsePlainText } from "./plain-text.js";

const utf8 = new TextDecoder("utf-8");

/** Extracts blocks from a document. Throws DimsumError('tool_failed') when the bytes cannot be read. */
export async function extractDocument(
  data: Uint8Array,
  kind: FormatKind,
  name: string,
  signal?: AbortSignal,
): Promise<ExtractedDocument> {
  if (kind === "pdf") return parsePdf(data, name, signal);
  const text = utf8.decode(data);
  switch (kind) {
    case "markdown":
      return parseMarkdown(text);
    case "html":
      // html-to-text (and its HTML parser) loads only when an HTML file is ingested.
      return (await import("./html.js")).parseHtml(text);
    case "code":
      return parseCode(text);
    case "text":
      return parsePlainText(text);
    default:
      throw new DimsumError("internal", `no parser for format ${String(kind)}`);
  }
}
