/** Template files in the browser: download one, read one the person picked, and say what went wrong. */
import { templateFileName } from "../../src/team/templates/template-file-name.js";
import { ApiError } from "./api.js";

/** Saves the template as a JSON file through the browser's download. */
export function downloadTemplate(template: { name: string }): void {
  const blob = new Blob([`${JSON.stringify(template, null, 2)}\n`], { type: "application/json" });
  const url = URL.createObjectURL(blob);
  const link = document.createElement("a");
  link.href = url;
  link.download = templateFileName(template.name);
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}

/** The JSON of a picked file, or an error saying it is not a template file. */
export async function readTemplateFile(file: File): Promise<unknown> {
  if (file.size > 1024 * 1024) {
    throw new Error(
      `${file.name} is larger than 1 MB; a template file is much smaller. Pick the exported .json file.`,
    );
  }
  try {
    return JSON.parse(await file.text()) as unknown;
  } catch {
    throw new Error(`${file.name} is not JSON. Pick a file exported from Dimsum (*.dimsum.json).`);
  }
}

/** An import's refusal with every field named (`agents.1.toolsAllow: …`), not just the first. */
export function importErrorText(err: unknown): string {
  if (err instanceof ApiError && err.issues.length > 0) {
    const fields = err.issues
      .slice(0, 4)
      .map((i) => (i.path ? `${i.path}: ${i.message}` : i.message))
      .join("; ");
    return `${err.message.replace(/:.*$/, "")} — ${fields}${err.issues.length > 4 ? "; …" : ""}`;
  }
  return err instanceof Error ? err.message : String(err);
}
