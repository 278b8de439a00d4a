/**
 * The composer's checks before uploading: the shared file rules (kind by bytes, size per kind, files
 * per message) in the server's words, and which agents a message reaches whose model reads no images.
 */
import { describe, expect, it } from "vitest";
import {
  DEFAULT_ATTACHMENT_LIMITS,
  oversizeFile,
  problemLine,
  sniffFile,
  tooManyFiles,
  unsupportedFile,
} from "../../src/attachments/file-rules.js";
import { checkFile } from "../../src/attachments/kinds.js";
import { agentsBlindToImages } from "../../web/src/state/image-readers.js";
import type { AgentRecord } from "../../web/src/types.js";
import { pdfDocument, pngImage } from "../support/attachment-files.js";
import { channel } from "./fixtures.js";

function agent(id: string, images?: boolean): AgentRecord {
  return {
    id,
    name: id.toUpperCase(),
    emoji: "🤖",
    toolsDeny: [],
    memory: true,
    skills: [],
    askFirst: [],
    createdAt: 1,
    updatedAt: 1,
    ...(images === undefined ? {} : { modelInput: { model: `x:${id}`, images, pdf: false } }),
  };
}

describe("file rules shared by server and composer", () => {
  it("sniffs kinds from plain Uint8Arrays and words refusals as the server does", () => {
    expect(sniffFile(new Uint8Array(pngImage()), "a.png")).toEqual({ kind: "image", mimeType: "image/png" });
    expect(sniffFile(new Uint8Array(pdfDocument("x")), "a.pdf")?.kind).toBe("pdf");
    expect(sniffFile(new TextEncoder().encode("a,b\n1,2"), "t.csv")).toEqual({
      kind: "text",
      mimeType: "text/csv",
    });
    expect(sniffFile(new Uint8Array([0, 1, 2]), "x.bin")).toBeUndefined();
    let thrown: unknown;
    try {
      checkFile(new Uint8Array([0, 1, 2]), "x.bin", DEFAULT_ATTACHMENT_LIMITS);
    } catch (err) {
      thrown = err;
    }
    expect((thrown as { toLine(): string }).toLine()).toBe(problemLine(unsupportedFile("x.bin")));
    const big = oversizeFile("big.png", "image", 11 * 1024 * 1024, DEFAULT_ATTACHMENT_LIMITS);
    expect(big && problemLine(big)).toBe(
      "big.png is 11 MB; an image may be at most 10 MB (attach a smaller file, or raise attachments.maxImageMB in the config file)",
    );
    expect(oversizeFile("ok.png", "image", 1024, DEFAULT_ATTACHMENT_LIMITS)).toBeUndefined();
    expect(tooManyFiles(10, DEFAULT_ATTACHMENT_LIMITS)).toBeUndefined();
    expect(tooManyFiles(11, DEFAULT_ATTACHMENT_LIMITS)?.message).toBe(
      "11 files attached; a message may carry at most 10",
    );
  });
});

describe("agents that cannot read an attached image", () => {
  const agents = [agent("seer", true), agent("blind", false), agent("unknown")];
  const group = channel("g", {
    kind: "group",
    members: [
      { type: "agent", id: "seer" },
      { type: "agent", id: "blind" },
      { type: "agent", id: "unknown" },
    ],
  });

  it("follows the mentions, else the leader; unknown models are not warned about", () => {
    expect(agentsBlindToImages("@blind look", group, agents).map((a) => a.id)).toEqual(["blind"]);
    expect(agentsBlindToImages("@seer look", group, agents)).toEqual([]);
    expect(agentsBlindToImages("@all look", group, agents).map((a) => a.id)).toEqual(["blind"]);
    expect(agentsBlindToImages("look", group, agents)).toEqual([]);
    expect(
      agentsBlindToImages("look", { ...group, leaderAgentId: "blind" }, agents).map((a) => a.id),
    ).toEqual(["blind"]);
    expect(agentsBlindToImages("@unknown look", group, agents)).toEqual([]);
  });
});
