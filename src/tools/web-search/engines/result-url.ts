/** Result links worth giving a model: absolute http(s) only. */

/** Whether `raw` is an absolute http:// or https:// URL. */
export function isHttpUrl(raw: string): boolean {
  try {
    const url = new URL(raw);
    return url.protocol === "http:" || url.protocol === "https:";
  } catch {
    return false;
  }
}
