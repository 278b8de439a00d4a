/** Team templates: one file for an agent or a whole team, exported, imported, and a built-in gallery. */
export { exportAgent, exportTeam } from "./export-template.js";
export { createGallery, createLocalizedGallery, defaultGalleryDir, type GalleryEntry } from "./gallery.js";
export { type ImportDeps, type ImportResult, importTemplate } from "./import-template.js";
export { parseTemplate } from "./parse-template.js";
export type { TemplateSchedules } from "./template-schedules.js";
export * from "./template-schema.js";
