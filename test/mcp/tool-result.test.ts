/** MCP call results as Dimsum tool results, and Dimsum results as MCP results. */
import { describe, expect, it } from "vitest";
import { StderrTail } from "../../src/mcp/stderr-tail.js";
import { toToolResult } from "../../src/mcp/tool-result.js";
import { toCallToolResult } from "../../src/mcp/tool-server.js";

describe("toToolResult", () => {
  it("joins text parts into one string", () => {
    const result = toToolResult({
      content: [
        { type: "text", text: "one" },
        { type: "text", text: "two" },
      ],
    });
    expect(result).toEqual({ content: "one\ntwo" });
  });

  it("keeps images as image parts, merging the text around them", () => {
    const result = toToolResult({
      content: [
        { type: "text", text: "before" },
        { type: "text", text: "still before" },
        { type: "image", mimeType: "image/png", data: "iVBORw0KGgo=" },
        { type: "text", text: "after" },
      ],
    });
    expect(result.content).toEqual([
      { type: "text", text: "before\nstill before" },
      { type: "image", mimeType: "image/png", data: "iVBORw0KGgo=" },
      { type: "text", text: "after" },
    ]);
  });

  it("describes audio by MIME type and decoded size", () => {
    const data = Buffer.alloc(1000).toString("base64");
    expect(toToolResult({ content: [{ type: "audio", mimeType: "audio/wav", data }] }).content).toBe(
      "[audio: audio/wav, 1000 bytes]",
    );
  });

  it("renders embedded resources and resource links with their URIs", () => {
    const result = toToolResult({
      content: [
        { type: "resource", resource: { uri: "file:///a.txt", mimeType: "text/plain", text: "alpha" } },
        { type: "resource", resource: { uri: "file:///b.bin", mimeType: "application/zip", blob: "AAAA" } },
        {
          type: "resource_link",
          uri: "file:///c.md",
          name: "c.md",
          mimeType: "text/markdown",
          description: "notes",
        },
      ],
    });
    expect(result.content).toBe(
      "[resource file:///a.txt (text/plain)]\nalpha\n" +
        "[resource file:///b.bin: application/zip, 3 bytes]\n" +
        "[resource link c.md file:///c.md (text/markdown)]: notes",
    );
  });

  it("marks isError results as errors", () => {
    expect(toToolResult({ content: [{ type: "text", text: "no such file" }], isError: true })).toEqual({
      content: "no such file",
      isError: true,
    });
  });

  it("keeps structuredContent in data, and shows it as JSON when there is no text", () => {
    const withText = toToolResult({
      content: [{ type: "text", text: "22°C" }],
      structuredContent: { t: 22 },
    });
    expect(withText).toEqual({ content: "22°C", data: { t: 22 } });
    const only = toToolResult({ content: [], structuredContent: { t: 22 } });
    expect(JSON.parse(only.content as string)).toEqual({ t: 22 });
    expect(only.data).toEqual({ t: 22 });
  });

  it("reads the old toolResult form and unknown block types", () => {
    expect(toToolResult({ toolResult: { ok: 1 } }).content).toBe('{"ok":1}');
    expect(toToolResult({ content: [{ type: "video", uri: "x" }] }).content).toBe(
      '[video content] {"type":"video","uri":"x"}',
    );
  });
});

describe("toCallToolResult", () => {
  it("turns strings and parts into MCP content blocks", () => {
    expect(toCallToolResult({ content: "42" })).toEqual({ content: [{ type: "text", text: "42" }] });
    expect(
      toCallToolResult({
        content: [
          { type: "text", text: "look" },
          { type: "image", mimeType: "image/png", data: "AAAA" },
        ],
        isError: true,
      }),
    ).toEqual({
      content: [
        { type: "text", text: "look" },
        { type: "image", mimeType: "image/png", data: "AAAA" },
      ],
      isError: true,
    });
  });
});

describe("StderrTail", () => {
  it("keeps the last complete lines and summarises them", () => {
    const tail = new StderrTail(3);
    tail.push("one\ntw");
    tail.push("o\nthree\n\nfour\nfive (partial");
    expect(tail.lines()).toEqual(["three", "four", "five (partial"]);
    expect(tail.summary(2)).toBe("four | five (partial");
  });
});
