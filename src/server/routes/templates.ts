/**
 * Team templates over HTTP: `GET /api/agents/:id/export` and `GET /api/channels/:id/export` (a group
 * as a team) download a template file; `POST /api/templates/import` creates what a template holds for
 * the caller, with their rights; `GET /api/templates` is the built-in gallery.
 */
import { Hono } from "hono";
import * as z from "zod";
import {
  createLocalizedGallery,
  exportAgent,
  exportTeam,
  type GalleryEntry,
  importTemplate,
  parseTemplate,
  type TemplateSchedules,
} from "../../team/templates/index.js";
import { templateFileName } from "../../team/templates/template-file-name.js";
import type { Team } from "../../team/types.js";
import { type AppEnv, actorOf } from "../context.js";
import { jsonBody, paramsOf } from "../http/validate.js";
import { idParam } from "./team-schemas.js";

export interface TemplateRoutesOptions {
  team: Team;
  /** Schedules of templates are exported and created through it; without it they are left out. */
  schedules?: TemplateSchedules;
  /** The gallery's loader, given the language asked for (default: the package's `templates/` folder). */
  gallery?: (locale?: string) => Promise<GalleryEntry[]>;
}

/** The template routes, mounted at `/api`. */
export function templateRoutes(options: TemplateRoutesOptions): Hono<AppEnv> {
  const { team, schedules } = options;
  const gallery = options.gallery ?? createLocalizedGallery();
  const app = new Hono<AppEnv>();

  app.get("/agents/:id/export", paramsOf(idParam), async (c) => {
    const template = await exportAgent(team, actorOf(c), c.req.valid("param").id);
    c.header("Content-Disposition", `attachment; filename="${templateFileName(template.name)}"`);
    return c.json(template);
  });

  app.get("/channels/:id/export", paramsOf(idParam), async (c) => {
    const template = await exportTeam(team, actorOf(c), c.req.valid("param").id, schedules);
    c.header("Content-Disposition", `attachment; filename="${templateFileName(template.name)}"`);
    return c.json(template);
  });

  // Everyone signed in sees the gallery; creating from it is an import, with the import's rights.
  // `?locale=zh-CN` gives the teams in Chinese (names, personas, chain instructions, schedule prompts).
  app.get("/templates", async (c) => c.json(await gallery(c.req.query("locale"))));

  // Checked here rather than by jsonBody's schema, for a message that says it is not a template.
  app.post("/templates/import", jsonBody(z.unknown()), async (c) => {
    const template = parseTemplate(c.req.valid("json"));
    const deps = schedules ? { team, schedules } : { team };
    return c.json(await importTemplate(deps, actorOf(c), template), 201);
  });

  return app;
}
