/** Checks a configured engine address: it must be an absolute http(s) URL. */
import { misconfigured } from "../engine-error.js";

/**
 * Parses a base URL and appends `path` to whatever path it already has, so an instance served
 * under a prefix (https://host/searx) keeps it. Throws a config error naming `setting`.
 */
export function endpointUrl(raw: string, path: string, label: string, setting: string): URL {
  let url: URL;
  try {
    url = new URL(raw.trim());
  } catch {
    throw misconfigured(
      // The raw value is not echoed: a malformed URL may still hold a password.
      `The ${label} address in ${setting} is not a valid URL.`,
      `set ${setting} to an absolute http:// or https:// URL`,
    );
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw misconfigured(
      `The ${label} address must use http or https, not ${url.protocol}`,
      `set ${setting} to an http:// or https:// URL`,
    );
  }
  url.search = "";
  url.hash = "";
  url.pathname = `${url.pathname.replace(/\/+$/, "")}${path}`;
  return url;
}
