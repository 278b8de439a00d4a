// The Cranfield collection in the shared datasets folder, parsed once for the retrieval benches.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { sharedDir } from "./shared.mjs";

const DATA = join(sharedDir(), "datasets/cranfield");

/** Splits a Cranfield file into records of `.X` fields keyed by letter. */
function parseRecords(text) {
  const records = [];
  let current;
  let field;
  for (const line of text.split(/\r?\n/)) {
    const marker = /^\.([A-Z])(?:\s+(.*))?$/.exec(line);
    if (marker) {
      if (marker[1] === "I") {
        current = { id: marker[2]?.trim(), fields: {} };
        records.push(current);
        field = undefined;
      } else {
        field = marker[1];
        current.fields[field] = "";
      }
      continue;
    }
    if (current && field) current.fields[field] += `${line}\n`;
  }
  return records;
}

/** The collection: documents (id, title, text), queries numbered by position, graded judgments. */
export function loadCranfield() {
  const docs = parseRecords(readFileSync(join(DATA, "cran.all.1400"), "utf8")).map((r) => ({
    id: Number(r.id),
    title: (r.fields.T ?? "").replace(/\s+/g, " ").trim(),
    text: (r.fields.W ?? "").trim(),
  }));
  // Judgments number queries by position in cran.qry, not by its .I ids.
  const queries = parseRecords(readFileSync(join(DATA, "cran.qry"), "utf8")).map((r, i) => ({
    id: i + 1,
    text: (r.fields.W ?? "").replace(/\s+/g, " ").trim(),
  }));
  const qrels = new Map();
  for (const line of readFileSync(join(DATA, "cranqrel"), "utf8").split(/\r?\n/)) {
    const [q, d, code] = line.trim().split(/\s+/).map(Number);
    if (!q || !d || !(code >= 1 && code <= 4)) continue;
    if (!qrels.has(q)) qrels.set(q, new Map());
    qrels.get(q).set(d, 5 - code);
  }
  return { docs, queries, qrels };
}
