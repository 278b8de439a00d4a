/**
 * A template file's name, the same for the server's download and the browser's (a module without
 * schema code, so the web bundle can take it): the template's name in lower-case letters and
 * digits, dashed.
 */
export function templateFileName(name: string): string {
  const base = name
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-+|-+$/g, "")
    .slice(0, 60);
  return `${base || "template"}.dimsum.json`;
}
