/**
 * Just enough HTML handling for search results: find tags by class with attributes in any order,
 * strip inline markup and decode character references. Not a general HTML parser.
 */

const NAMED_ENTITIES: Record<string, string> = {
  amp: "&",
  lt: "<",
  gt: ">",
  quot: '"',
  apos: "'",
  nbsp: "\u00a0",
  ndash: "–",
  mdash: "—",
  hellip: "…",
  lsquo: "‘",
  rsquo: "’",
  ldquo: "“",
  rdquo: "”",
  laquo: "«",
  raquo: "»",
  middot: "·",
  bull: "•",
  copy: "©",
  reg: "®",
  trade: "™",
  deg: "°",
  times: "×",
  euro: "€",
  pound: "£",
  yen: "¥",
  cent: "¢",
  sect: "§",
  para: "¶",
};

/** Decodes numeric and common named character references once (so `&amp;lt;` becomes `&lt;`). */
export function decodeEntities(text: string): string {
  return text.replace(/&(#[xX][0-9a-fA-F]+|#\d+|[a-zA-Z][a-zA-Z0-9]*);/g, (whole, ref: string) => {
    if (ref.startsWith("#")) {
      const hex = ref[1] === "x" || ref[1] === "X";
      const code = Number.parseInt(ref.slice(hex ? 2 : 1), hex ? 16 : 10);
      if (!Number.isFinite(code) || code <= 0 || code > 0x10ffff || (code >= 0xd800 && code <= 0xdfff)) {
        return "\uFFFD";
      }
      return String.fromCodePoint(code);
    }
    return NAMED_ENTITIES[ref] ?? NAMED_ENTITIES[ref.toLowerCase()] ?? whole;
  });
}

/** Removes tags and comments, leaving their text. */
export function stripTags(html: string): string {
  return html.replace(/<!--[\s\S]*?-->/g, "").replace(/<\/?[a-zA-Z][^>]*>/g, "");
}

/** Markup to one line of plain text: tags removed, references decoded, whitespace collapsed. */
export function cleanText(html: string): string {
  return decodeEntities(stripTags(html)).replace(/\s+/g, " ").trim();
}

/** One whitespace-collapsed line of plain text (for engines that already send text). */
export function oneLine(text: string): string {
  return text.replace(/\s+/g, " ").trim();
}

export interface FoundTag {
  name: string;
  attributes: Map<string, string>;
  /** Everything between the opening tag and the first matching closing tag. */
  inner: string;
  /** Offset of the opening tag in the document. */
  index: number;
}

// An opening tag whose quoted attribute values may contain ">".
const OPEN_TAG = /<([a-zA-Z][\w-]*)((?:\s+[^\s=/>"']+(?:\s*=\s*(?:"[^"]*"|'[^']*'|[^\s"'>]+))?)*)\s*\/?>/g;
const ATTRIBUTE = /([^\s=/>"']+)(?:\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'>]+)))?/g;

/** Attribute names (lower-cased) to decoded values. */
export function parseAttributes(source: string): Map<string, string> {
  const attributes = new Map<string, string>();
  for (const match of source.matchAll(ATTRIBUTE)) {
    const name = (match[1] ?? "").toLowerCase();
    if (!attributes.has(name)) attributes.set(name, decodeEntities(match[2] ?? match[3] ?? match[4] ?? ""));
  }
  return attributes;
}

/** Whether a class attribute value lists `name` as one of its classes. */
export function hasClass(attributes: Map<string, string>, name: string): boolean {
  const value = attributes.get("class");
  return value?.split(/\s+/).includes(name) ?? false;
}

/**
 * Every element, in document order, that carries one of `classes`. Its content runs to the first
 * closing tag of the same name, which is right for the inline elements results use (a, span, td).
 */
export function findByClass(html: string, classes: string[]): FoundTag[] {
  const found: FoundTag[] = [];
  for (const match of html.matchAll(OPEN_TAG)) {
    const attributes = parseAttributes(match[2] ?? "");
    if (!classes.some((c) => hasClass(attributes, c))) continue;
    const name = (match[1] ?? "").toLowerCase();
    const start = match.index + match[0].length;
    const close = new RegExp(`</${name}\\s*>`, "i");
    const end = html.slice(start).search(close);
    found.push({
      name,
      attributes,
      inner: end < 0 ? "" : html.slice(start, start + end),
      index: match.index,
    });
  }
  return found;
}
