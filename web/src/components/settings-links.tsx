/**
 * Text from the server (a run's error, say) with each "Settings → Providers" / "Settings → Account"
 * turned into a link to that tab, so an error that says where to fix something leads there.
 */
import { SETTINGS_SECTIONS, type SettingsSection } from "../state/route.js";
import { Link } from "./link.js";

const LABELS: Record<string, SettingsSection> = {
  Providers: "providers",
  Account: "account",
  People: "people",
  "API tokens": "tokens",
  "MCP servers": "mcp",
  "Remote agents": "remote-agents",
};
const MENTION = new RegExp(`Settings → (${Object.keys(LABELS).join("|")})`, "g");

/** `text` with links to the settings tabs it names. */
export function WithSettingsLinks({ text }: { text: string }) {
  const parts: Array<string | { label: string; section: SettingsSection }> = [];
  let at = 0;
  for (const match of text.matchAll(MENTION)) {
    const section = LABELS[match[1] ?? ""];
    if (!section || !SETTINGS_SECTIONS.includes(section)) continue;
    parts.push(text.slice(at, match.index), { label: match[0], section });
    at = match.index + match[0].length;
  }
  parts.push(text.slice(at));
  return (
    <>
      {parts.map((part, i) =>
        typeof part === "string" ? (
          part
        ) : (
          <Link key={i} to={{ name: "settings", section: part.section }} testId="settings-link">
            {part.label}
          </Link>
        ),
      )}
    </>
  );
}
