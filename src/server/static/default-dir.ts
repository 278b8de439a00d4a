/** Where the built web UI lives: `<package root>/web/dist`, found from this module's own location. */
import { fileURLToPath } from "node:url";

/** `web/dist` next to `src/` (tsx, vitest) or `dist/` (the compiled package): both are two levels up. */
export function defaultStaticDir(): string {
  return fileURLToPath(new URL("../../../web/dist", import.meta.url));
}
