/**
 * The flat XML WeCom sends (`<xml><ToUserName><![CDATA[…]]></ToUserName>…</xml>`): the text of each
 * top-level element, CDATA or plain with the five XML entities decoded. Nested elements are not
 * needed by the connector and are returned raw.
 */

const ENTITIES: Record<string, string> = { lt: "<", gt: ">", amp: "&", quot: '"', apos: "'" };

function decodeText(raw: string): string {
  const cdata = /^\s*<!\[CDATA\[([\s\S]*)\]\]>\s*$/.exec(raw);
  if (cdata) return cdata[1] ?? "";
  return raw.replace(/&(lt|gt|amp|quot|apos);/g, (_, name: string) => ENTITIES[name] ?? "");
}

/** The fields of `<xml>…</xml>`, by element name; undefined when the text is not such a document. */
export function parseWecomXml(text: string): Record<string, string> | undefined {
  const root = /^\s*(?:<\?xml[^>]*\?>\s*)?<xml>([\s\S]*)<\/xml>\s*$/.exec(text);
  if (!root) return undefined;
  const fields: Record<string, string> = {};
  const element = /<([A-Za-z_][\w.-]*)>([\s\S]*?)<\/\1>/g;
  for (const match of (root[1] ?? "").matchAll(element)) {
    const name = match[1] ?? "";
    if (!(name in fields)) fields[name] = decodeText(match[2] ?? "");
  }
  return fields;
}

/** `<xml>` with the fields as CDATA (the fake platform builds callbacks with it). */
export function buildWecomXml(fields: Record<string, string | number>): string {
  const body = Object.entries(fields)
    .map(([name, value]) =>
      typeof value === "number" ? `<${name}>${value}</${name}>` : `<${name}><![CDATA[${value}]]></${name}>`,
    )
    .join("");
  return `<xml>${body}</xml>`;
}
