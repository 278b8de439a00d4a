/**
 * OpenAI chat content parts as the canonical parts an agent reads: `text`, `image_url` (a data URL,
 * or an http(s) URL fetched through the SSRF guard that fetch_url uses) and `file` (`file_data` as the
 * OpenAI SDK sends it). Every file is sniffed and held to the attachment limits.
 */

import type { AttachmentLimits } from "../../attachments/kinds.js";
import { type AttachedFile, attachBytes, toContentPart } from "../../attachments/to-parts.js";
import { DimsumError } from "../../errors.js";
import type { UserContentPart } from "../../llm/types.js";
import {
  checkUrl,
  defaultGuardDeps,
  type GuardDeps,
  parseFetchUrl,
} from "../../tools/builtin/network-guard.js";
import { decodedBody, readCappedBody, sendPinnedRequest } from "../../tools/net/http-body.js";

export interface ContentOptions {
  limits: AttachmentLimits;
  /** `tools.fetch.allowPrivateNetwork`: image URLs on private addresses are fetched too. */
  allowPrivateNetwork: boolean;
  signal: AbortSignal;
  guard?: GuardDeps;
}

type Part = { type: string; text?: string; [key: string]: unknown };

const MAX_REDIRECTS = 3;

/** The parts of one message, in order; `path` names the message in errors. */
export async function contentParts(
  parts: readonly Part[],
  path: string,
  options: ContentOptions,
): Promise<UserContentPart[]> {
  const out: UserContentPart[] = [];
  let files = 0;
  for (const [index, part] of parts.entries()) {
    const where = `${path}.${index}`;
    if (part.type === "text") {
      if (typeof part.text === "string" && part.text !== "") out.push({ type: "text", text: part.text });
      continue;
    }
    if (++files > options.limits.filesPerMessage) {
      throw new DimsumError(
        "too_large",
        `a message may carry at most ${options.limits.filesPerMessage} files`,
        {
          issues: [{ path: where, message: "send the rest in another request" }],
        },
      );
    }
    const file = await filePart(part, where, options);
    out.push(toContentPart(file));
  }
  return out;
}

async function filePart(part: Part, where: string, options: ContentOptions): Promise<AttachedFile> {
  if (part.type === "image_url") {
    const image = part.image_url as { url?: unknown } | undefined;
    const url = typeof image?.url === "string" ? image.url : undefined;
    if (!url) throw invalid(where, "image_url.url is missing");
    const file = url.startsWith("data:")
      ? fromDataUrl(url, "image", where, options.limits)
      : await fetched(url, where, options);
    if (file.kind !== "image") throw invalid(where, `image_url holds ${file.mimeType}, not an image`);
    return file;
  }
  if (part.type === "file") {
    const file = part.file as { file_data?: unknown; filename?: unknown; file_id?: unknown } | undefined;
    if (typeof file?.file_data !== "string") {
      throw invalid(
        where,
        file?.file_id ? "file_id is not supported; send the file as file_data" : "file.file_data is missing",
      );
    }
    const name = typeof file.filename === "string" && file.filename !== "" ? file.filename : "file";
    return file.file_data.startsWith("data:")
      ? fromDataUrl(file.file_data, name, where, options.limits)
      : attach(Buffer.from(file.file_data, "base64"), name, where, options.limits);
  }
  throw invalid(where, `"${part.type}" parts are not supported; send text, image_url or file parts`);
}

function fromDataUrl(url: string, name: string, where: string, limits: AttachmentLimits): AttachedFile {
  const match = /^data:([^;,]*)(;[^,]*)?,(.*)$/s.exec(url);
  if (!match) throw invalid(where, "not a valid data URL");
  const base64 = (match[2] ?? "").includes(";base64");
  const data = base64
    ? Buffer.from(match[3] ?? "", "base64")
    : Buffer.from(decodeURIComponent(match[3] ?? ""), "utf8");
  return attach(data, name, where, limits);
}

function attach(data: Buffer, name: string, where: string, limits: AttachmentLimits): AttachedFile {
  try {
    return attachBytes(data, name, limits);
  } catch (err) {
    if (err instanceof DimsumError) {
      throw new DimsumError(err.code, err.message, {
        issues: [{ path: where, message: err.hint ?? err.message }],
      });
    }
    throw err;
  }
}

/** Downloads an image URL, every hop checked by the SSRF guard, at most the image limit read. */
async function fetched(raw: string, where: string, options: ContentOptions): Promise<AttachedFile> {
  let url: URL;
  try {
    url = parseFetchUrl(raw);
  } catch (err) {
    throw invalid(where, `image URL ${raw} is not usable: ${(err as Error).message}`);
  }
  for (let redirects = 0; ; redirects++) {
    let addresses: Awaited<ReturnType<typeof checkUrl>>["addresses"] | undefined;
    try {
      addresses = options.allowPrivateNetwork
        ? undefined
        : (await checkUrl(url, options.guard ?? defaultGuardDeps)).addresses;
    } catch (err) {
      throw invalid(where, `image URL ${url.href} was not fetched: ${(err as Error).message}`);
    }
    const res = await sendPinnedRequest(
      { url, method: "GET", headers: { accept: "image/*" } },
      addresses,
      options.signal,
    ).catch((err: unknown) => {
      throw invalid(where, `image URL ${url.href} could not be fetched: ${(err as Error).message}`);
    });
    const status = res.statusCode ?? 0;
    const location = res.headers.location;
    if (status >= 300 && status < 400 && location && redirects < MAX_REDIRECTS) {
      res.destroy();
      url = parseFetchUrl(new URL(location, url));
      continue;
    }
    if (status < 200 || status >= 300) {
      res.destroy();
      throw invalid(where, `image URL ${url.href} answered HTTP ${status}`);
    }
    const { body, truncated } = await readCappedBody(decodedBody(res), options.limits.imageBytes);
    const name = decodeURIComponent(url.pathname.split("/").pop() || "image");
    if (truncated) {
      throw new DimsumError(
        "too_large",
        `the image at ${url.href} is over ${options.limits.imageBytes} bytes`,
        {
          issues: [{ path: where, message: "send a smaller image" }],
        },
      );
    }
    return attach(body, name, where, options.limits);
  }
}

function invalid(where: string, message: string): DimsumError {
  return new DimsumError("invalid", message, { issues: [{ path: where, message }] });
}
