import { describe, expect, it } from "vitest";
import { parseContentType, renderBody } from "../../../src/tools/builtin/fetch-content.js";
import { htmlToReadableText } from "../../../src/tools/builtin/html-text.js";

describe("htmlToReadableText", () => {
  it("extracts the title and keeps headings, links, lists and tables readable", async () => {
    const page = await htmlToReadableText(
      `<html><head><title> Dim &amp; Sum </title></head><body><h2>Menu</h2>
       <p>See <a href="docs/x">the docs</a>, <a href="javascript:void(0)">click</a> and <a href="#top">top</a>.</p>
       <ul><li>har gow</li><li>siu mai</li></ul>
       <table><tr><th>Dish</th><th>Price</th></tr><tr><td>Bao</td><td>3</td></tr></table></body></html>`,
      "https://example.com/a/b",
    );
    expect(page.title).toBe("Dim & Sum");
    expect(page.text).toContain("Menu");
    expect(page.text).toContain("See the docs [https://example.com/a/docs/x], click and top.");
    expect(page.text).toContain("* har gow");
    expect(page.text).toMatch(/Dish\s+Price\nBao\s+3/);
    expect(page.text).not.toContain("javascript");
  });

  it("has no title when the page has none", async () => {
    expect((await htmlToReadableText("<p>hi</p>")).title).toBeUndefined();
  });
});

describe("renderBody", () => {
  it("parses content types with charsets", () => {
    expect(parseContentType('text/html; charset="ISO-8859-1"')).toEqual({
      mime: "text/html",
      charset: "ISO-8859-1",
    });
    expect(parseContentType(undefined)).toEqual({ mime: "", charset: undefined });
  });

  it("decodes the declared charset", async () => {
    const rendered = await renderBody(
      "text/plain; charset=iso-8859-1",
      Buffer.from([0x63, 0x61, 0x66, 0xe9]),
      "http://x/",
      false,
    );
    expect(rendered.text).toBe("café");
  });

  it("treats +json types as JSON and shows cut JSON as text with a note", async () => {
    expect((await renderBody("application/ld+json", Buffer.from('{"a":1}'), "http://x/", false)).text).toBe(
      '{\n  "a": 1\n}',
    );
    const cut = await renderBody("application/json", Buffer.from('{"a":[1,2'), "http://x/", true);
    expect(cut.kind).toBe("text");
    expect(cut.note).toContain("cut at the size limit");
  });

  it("sniffs untyped bodies", async () => {
    expect(
      (await renderBody(undefined, Buffer.from("<!DOCTYPE html><p>x</p>"), "http://x/", false)).kind,
    ).toBe("html");
    expect((await renderBody(undefined, Buffer.from("just text"), "http://x/", false)).kind).toBe("text");
    expect(
      (await renderBody("application/octet-stream", Buffer.from([1, 0, 2]), "http://x/", false)).kind,
    ).toBe("binary");
  });
});
