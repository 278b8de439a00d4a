/**
 * What the team keeps in PostgreSQL beyond the copied rows (see server/storage/copy-to-postgres.ts):
 * the channel messages' search vectors, and the personas that were SOUL.md files in the home folder.
 */
import { readdir } from "node:fs/promises";
import { join } from "node:path";
import type { DerivedStep } from "../../../store/postgres/copy-from-sqlite.js";
import { PersonaFiles } from "../../personas.js";
import { messageLexemes } from "./lexemes.js";
import { PgPersonaStore } from "./persona-store.js";

/** Fills the search vector of every copied message that has none yet. */
export const messageSearchStep: DerivedStep = {
  name: "channel message search",
  async run(target, onProgress) {
    const total =
      (
        await target.one<{ n: number }>(
          "SELECT count(*)::int AS n FROM team_messages WHERE search_terms = ''::tsvector",
        )
      )?.n ?? 0;
    let done = 0;
    let lastId = 0;
    for (;;) {
      const rows = await target.many<{ id: number; text: string }>(
        "SELECT id, text FROM team_messages WHERE search_terms = ''::tsvector AND id > $1 ORDER BY id LIMIT 500",
        [lastId],
      );
      if (rows.length === 0) break;
      lastId = rows.at(-1)?.id ?? lastId;
      await target.run(
        `UPDATE team_messages m SET search_terms = array_to_tsvector(v.terms::text[])
         FROM unnest($1::bigint[], $2::text[]) AS v(id, terms) WHERE m.id = v.id`,
        [rows.map((r) => r.id), rows.map((r) => `{${messageLexemes(r.text).map(arrayItem).join(",")}}`)],
      );
      done += rows.length;
      onProgress(done, total);
    }
  },
};

/** A PostgreSQL array literal item, quoted. */
function arrayItem(term: string): string {
  return `"${term.replaceAll("\\", "\\\\").replaceAll('"', '\\"')}"`;
}

/** Copies `<home>/agents/<id>/SOUL.md` into the personas table, keeping personas already there. */
export function personaFilesStep(home: string): DerivedStep {
  return {
    name: "personas (SOUL.md)",
    async run(target, onProgress) {
      const files = new PersonaFiles(home);
      const store = new PgPersonaStore(target);
      const ids = await readdir(join(home, "agents")).catch(() => [] as string[]);
      let done = 0;
      for (const id of ids) {
        const soul = await files.read(id).catch(() => undefined);
        if (soul && soul.status !== "missing") await store.writeIfMissing(id, soul.content);
        onProgress(++done, ids.length);
      }
    },
  };
}
