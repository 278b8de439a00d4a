/**
 * Builds the web UI into web/dist. JSX goes through Vite's own Oxc transform with Preact's automatic
 * runtime, so no Babel or preset plugin is needed. `vite --config web/vite.config.ts` serves it for
 * development, proxying the API and WebSocket to a `dimsum serve` on port 18800.
 */
import { fileURLToPath } from "node:url";
import { defineConfig } from "vite";
import { i18nShortIds } from "./i18n-short-ids.js";

const webRoot = fileURLToPath(new URL(".", import.meta.url));
const apiTarget = process.env.DIMSUM_DEV_API ?? "http://127.0.0.1:18800";

export default defineConfig({
  root: webRoot,
  base: "/",
  // The installable app's files, served as they are at the root: manifest, icons, service worker, offline page.
  publicDir: "public",
  // Message keys become small numbers in the built bundle (see i18n-short-ids.ts).
  plugins: [i18nShortIds(`${webRoot}src/i18n/en.ts`, [`${webRoot}src/i18n/zh-CN.ts`], `${webRoot}src/`)],
  oxc: { jsx: { runtime: "automatic", importSource: "preact" } },
  build: {
    outDir: "dist",
    emptyOutDir: true,
    target: "es2022",
    assetsDir: "assets",
    sourcemap: false,
    // One small app: a single chunk keeps the CSP and caching simple.
    chunkSizeWarningLimit: 400,
  },
  server: {
    proxy: {
      // The server checks Origin on state changes; rewrite it so the dev proxy passes that check.
      "/api": { target: apiTarget, changeOrigin: true, headers: { origin: apiTarget } },
      "/ws": { target: apiTarget, ws: true, changeOrigin: true, headers: { origin: apiTarget } },
    },
  },
});
