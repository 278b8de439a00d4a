/**
 * The build step that numbers the web UI's message keys: it reads every entry of the real English
 * catalogue, replaces only whole key literals, refuses keys built in template literals, and the
 * array it writes gives each key its English text back.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { catalogueArray, catalogueEntries, catalogueIds, shortenKeys } from "../../web/i18n-short-ids.js";
import { en } from "../../web/src/i18n/en.js";

const enSource = readFileSync(join(import.meta.dirname, "../../web/src/i18n/en.ts"), "utf8");

describe("i18n short ids", () => {
  it("finds every key of the English catalogue, multi-line and plural values included", () => {
    const entries = catalogueEntries(enSource);
    expect(entries.map((e) => e.key).sort()).toEqual(Object.keys(en).sort());
  });

  it("writes an array in which each key's number gives its English message", () => {
    const entries = catalogueEntries(enSource);
    const ids = catalogueIds(entries);
    const code = catalogueArray(entries, ids).replace("export const en =", "return");
    const array = new Function(code)() as unknown[];
    expect(array).toHaveLength(entries.length);
    for (const [key, message] of Object.entries(en)) expect(array[ids.get(key) ?? -1], key).toEqual(message);
  });

  it("gives keys one number only where English and Chinese are both the same", () => {
    const entries = [
      { key: "a.remove", value: '"Remove"' },
      { key: "b.remove", value: '"Remove"' },
      { key: "c.remove", value: '"Remove"' },
    ];
    const zh = [
      { key: "a.remove", value: '"移除"' },
      { key: "b.remove", value: '"移除"' },
      { key: "c.remove", value: '"删除"' },
    ];
    const ids = catalogueIds(entries, zh);
    expect(ids.get("a.remove")).toBe(ids.get("b.remove"));
    expect(ids.get("c.remove")).not.toBe(ids.get("a.remove"));
    expect(new Set(ids.values()).size).toBe(2);
  });

  it("replaces whole key literals only", () => {
    const ids = new Map([
      ["kb.heading", 0],
      ["kb.doc.remove", 1],
    ]);
    const code = `t("kb.heading"); t('kb.doc.remove'); x = "kb.heading.more"; y = "see kb.heading"; z = "kb";`;
    expect(shortenKeys(code, ids, "a.tsx")).toBe(
      `t(0); t(1); x = "kb.heading.more"; y = "see kb.heading"; z = "kb";`,
    );
  });

  it("refuses a key built in a template literal, which it could not number", () => {
    expect(() => shortenKeys("t(`role.$" + "{r}`)", new Map(), "users.tsx")).toThrow(
      /users\.tsx: t\(\) is given a template literal/,
    );
  });
});
