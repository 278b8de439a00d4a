/**
 * The web UI's catalogues: every key of one is in the other (the type check catches this too, this
 * test says which key), plural keys stay plural, placeholders match, and every key is used somewhere
 * in web/src (a key nobody uses is a string nobody sees, or a typo in a component).
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { en } from "../../web/src/i18n/en.js";
import { formatMessage } from "../../web/src/i18n/format-message.js";
import type { Message } from "../../web/src/i18n/messages.js";
import { zhCN } from "../../web/src/i18n/zh-CN.js";

const catalogues: Record<string, Readonly<Record<string, Message>>> = { en, "zh-CN": zhCN };

function placeholders(message: Message): string[] {
  const texts = typeof message === "string" ? [message] : Object.values(message);
  return [
    ...new Set(texts.flatMap((text) => [...text.matchAll(/\{(\w+)\}/g)].map((m) => m[1] ?? ""))),
  ].sort();
}

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return name === "i18n" ? [] : sources(path);
    return /\.(ts|tsx)$/.test(name) ? [path] : [];
  });
}

describe("web UI catalogues", () => {
  it("have the same keys in every locale", () => {
    const keys = Object.keys(en).sort();
    for (const [locale, catalogue] of Object.entries(catalogues)) {
      const have = Object.keys(catalogue).sort();
      expect(
        keys.filter((k) => !have.includes(k)),
        `keys missing in ${locale}`,
      ).toEqual([]);
      expect(
        have.filter((k) => !keys.includes(k)),
        `keys in ${locale} that English does not have`,
      ).toEqual([]);
    }
  });

  it("keep each message's kind and placeholders", () => {
    for (const [key, message] of Object.entries(en)) {
      const zh = (zhCN as Record<string, Message>)[key] as Message;
      expect(typeof zh, key).toBe(typeof message);
      expect(placeholders(zh), key).toEqual(placeholders(message));
      if (typeof zh === "string") expect(zh.trim(), `${key} is empty in zh-CN`).not.toBe("");
    }
  });

  it("uses every key somewhere in web/src", () => {
    const code = sources(join(import.meta.dirname, "../../web/src"))
      .map((file) => readFileSync(file, "utf8"))
      .join("\n");
    const unused = Object.keys(en).filter((key) => !code.includes(`"${key}"`));
    expect(unused, "keys no component uses").toEqual([]);
  });

  it("fills placeholders and picks plural forms for the locale", () => {
    const forms = { one: "{count} agent", other: "{count} agents" };
    expect(formatMessage("en", forms, { count: 1 })).toBe("1 agent");
    expect(formatMessage("en", forms, { count: 1200 })).toBe("1,200 agents");
    expect(formatMessage("zh-CN", { other: "{count} 个智能体" }, { count: 3 })).toBe("3 个智能体");
    expect(formatMessage("en", "Hello {name}", { name: "Ann" })).toBe("Hello Ann");
    expect(formatMessage("en", "Hello {name}", {})).toBe("Hello {name}");
  });
});
