/** Small display helpers shared by components. */
import { currentLocale, t } from "./i18n/index.js";

/** "14:05" today, "3 Mar 14:05" otherwise. */
export function formatTime(epochMs: number, now: number = Date.now()): string {
  const date = new Date(epochMs);
  const time = date.toLocaleTimeString(currentLocale(), { hour: "2-digit", minute: "2-digit" });
  if (new Date(now).toDateString() === date.toDateString()) return time;
  return `${date.toLocaleDateString(currentLocale(), { day: "numeric", month: "short" })} ${time}`;
}

/** "850 ms", "2.4 s", "3 min 5 s". */
export function formatDuration(ms: number): string {
  if (ms < 1000) return t("format.ms", { ms: Math.round(ms) });
  if (ms < 60_000) return t("format.seconds", { seconds: (ms / 1000).toFixed(1) });
  const minutes = Math.floor(ms / 60_000);
  return t("format.minutes", { minutes, seconds: Math.round((ms % 60_000) / 1000) });
}

/** Pretty JSON for tool arguments; strings are shown as they are. */
export function formatJson(value: unknown): string {
  if (typeof value === "string") return value;
  try {
    return JSON.stringify(value, null, 2) ?? String(value);
  } catch {
    return String(value);
  }
}

/** One line, at most `max` characters, for summaries. */
export function oneLine(text: string, max = 80): string {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

/**
 * A count with its noun: `plural(1, "agent")` is "1 agent", `plural(3, "agent")` "3 agents";
 * irregular nouns give their plural (`plural(2, "person", "people")`).
 */
export function plural(count: number, singular: string, pluralForm = `${singular}s`): string {
  return `${count} ${count === 1 ? singular : pluralForm}`;
}

/** "Chrome on Linux" from a User-Agent header; the raw start of it when nothing is recognised. */
export function describeUserAgent(userAgent: string): string {
  const browser = /Edg\//.test(userAgent)
    ? "Edge"
    : /Firefox\//.test(userAgent)
      ? "Firefox"
      : /Chrom(e|ium)\//.test(userAgent)
        ? "Chrome"
        : /Safari\//.test(userAgent)
          ? "Safari"
          : undefined;
  const os = /Android/.test(userAgent)
    ? "Android"
    : /iPhone|iPad/.test(userAgent)
      ? "iOS"
      : /Windows/.test(userAgent)
        ? "Windows"
        : /Mac OS X/.test(userAgent)
          ? "macOS"
          : /Linux/.test(userAgent)
            ? "Linux"
            : undefined;
  if (browser && os) return t("format.browserOn", { browser, os });
  return browser ?? os ?? oneLine(userAgent, 60);
}

/** A file size as people read it: "512 B", "3.4 KB", "12 MB". */
export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  const [value, unit] = bytes < 1024 * 1024 ? [bytes / 1024, "KB"] : [bytes / (1024 * 1024), "MB"];
  return `${value < 10 ? Number(value.toFixed(1)) : Math.round(value)} ${unit}`;
}
