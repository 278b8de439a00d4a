import { mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { request } from "node:http";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { startServer, tempDir } from "./helpers.js";

/** Sends a GET with the path exactly as written (fetch would normalise `..` away). */
function rawGet(base: string, path: string): Promise<{ status: number; body: string }> {
  const { hostname, port } = new URL(base);
  return new Promise((resolve, reject) => {
    const req = request({ host: hostname, port, path, method: "GET" }, (res) => {
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (chunk) => {
        body += chunk;
      });
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on("error", reject);
    req.end();
  });
}

function buildSite() {
  const root = tempDir("dimsum-web-");
  const dist = join(root, "dist");
  mkdirSync(join(dist, "assets"), { recursive: true });
  writeFileSync(join(dist, "index.html"), "<!doctype html><title>Dimsum UI</title><div id=app></div>");
  writeFileSync(join(dist, "assets", "app-123.js"), "console.log('app')");
  writeFileSync(join(dist, "assets", "style.css"), "body{}");
  writeFileSync(join(dist, ".env"), "SECRET=hidden-dotfile");
  writeFileSync(join(root, "secret.txt"), "TOP-SECRET-OUTSIDE-ROOT");
  symlinkSync(join(root, "secret.txt"), join(dist, "assets", "link.txt"));
  return { dist, root };
}

describe("static web UI", () => {
  it("serves files with types and caching, and index.html for client-side routes", async () => {
    const { dist } = buildSite();
    const { url } = await startServer({ staticDir: dist });
    const home = await fetch(`${url}/`);
    expect(home.status).toBe(200);
    expect(home.headers.get("content-type")).toContain("text/html");
    expect(await home.text()).toContain("Dimsum UI");
    const js = await fetch(`${url}/assets/app-123.js`);
    expect(js.headers.get("content-type")).toContain("text/javascript");
    expect(js.headers.get("cache-control")).toContain("immutable");
    expect(await js.text()).toBe("console.log('app')");
    const route = await fetch(`${url}/channels/general`);
    expect(route.status).toBe(200);
    expect(await route.text()).toContain("Dimsum UI");
    expect((await fetch(`${url}/assets/missing.js`)).status).toBe(404);
    // API paths never fall back to the page.
    const api = await fetch(`${url}/api/unknown`);
    expect(api.headers.get("content-type")).toContain("application/json");
  });

  it("refuses path traversal in every spelling, dotfiles and symlinks out of the root", async () => {
    const { dist } = buildSite();
    const { url } = await startServer({ staticDir: dist });
    const attempts = [
      "/../secret.txt",
      "/../../../../etc/passwd",
      "/assets/../../secret.txt",
      "/%2e%2e/secret.txt",
      "/..%2fsecret.txt",
      "/assets/..%2f..%2fsecret.txt",
      "/%2e%2e%2fsecret.txt",
      "/..%5csecret.txt",
      "/assets/%2e%2e/%2e%2e/secret.txt",
      "/assets/link.txt",
      "/.env",
      "/assets/%00.js",
      "/%E0%A4%A",
    ];
    for (const path of attempts) {
      const res = await rawGet(url, path);
      expect(res.body, path).not.toContain("TOP-SECRET");
      expect(res.body, path).not.toContain("hidden-dotfile");
      expect(res.body, path).not.toContain("root:");
    }
    expect((await rawGet(url, "/..%2fsecret.txt")).status).toBe(404);
    expect((await rawGet(url, "/assets/link.txt")).status).toBe(404);
  });

  it("explains how to build the UI when web/dist is missing", async () => {
    const { url } = await startServer({ staticDir: join(tempDir(), "nothing-here") });
    const res = await fetch(`${url}/`);
    expect(res.status).toBe(503);
    expect(await res.text()).toContain("npm run build:web");
  });
});
