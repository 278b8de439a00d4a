// The "search itself" of the cold-start bench: in a fresh process, opens the database (not timed),
// then times the store's construction and one memory or knowledge search, as `dimsum memory search` / `dimsum kb search` run it.
//   node bench/search-only.mjs memory DB USER QUERY   |   node bench/search-only.mjs kb DB KB QUERY
import { KnowledgeService } from "../dist/knowledge/knowledge-service.js";
import { SqliteMemoryStore } from "../dist/memory/sqlite-memory-store.js";
import { openDatabase } from "../dist/store/database.js";

const [kind, file, scope, query] = process.argv.slice(2);
const db = openDatabase(file);
const t0 = performance.now();
if (kind === "memory") await new SqliteMemoryStore(db).search({ userId: scope, query, limit: 10 });
else await KnowledgeService.sqlite(db).search({ query, kb: scope, topK: 5 });
process.stdout.write(`${performance.now() - t0}\n`);
db.close();
