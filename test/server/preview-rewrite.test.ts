/** Root-relative paths of a dev server's answers, put under the preview's prefix. */
import { describe, expect, it } from "vitest";
import { isRewritable, rewriteRootPaths } from "../../src/server/previews/preview-rewrite.js";

const P = "/preview/ch_1/dev/5173/key/";

describe("preview rewriting", () => {
  it("puts HTML attributes, module imports and CSS urls under the prefix", () => {
    const html =
      '<script type="module" src="/@vite/client"></script><link rel="icon" href="/vite.svg"><a href="//cdn.example/x">x</a><form action="/save"></form><img src="pic.png">';
    expect(rewriteRootPaths(html, "text/html; charset=utf-8", P)).toBe(
      `<script type="module" src="${P}@vite/client"></script><link rel="icon" href="${P}vite.svg"><a href="//cdn.example/x">x</a><form action="${P}save"></form><img src="pic.png">`,
    );
    const js = `import "/@vite/env";\nimport { a } from "/src/a.ts";\nconst b = await import('/src/b.ts');\nimport x from './x.ts';\nconst s = "/not/an/import";`;
    expect(rewriteRootPaths(js, "text/javascript", P)).toBe(
      `import "${P}@vite/env";\nimport { a } from "${P}src/a.ts";\nconst b = await import('${P}src/b.ts');\nimport x from './x.ts';\nconst s = "/not/an/import";`,
    );
    expect(rewriteRootPaths("a{background:url(/bg.png)} b{background:url('/c.png')}", "text/css", P)).toBe(
      `a{background:url(${P}bg.png)} b{background:url('${P}c.png')}`,
    );
  });

  it("leaves already-prefixed and protocol-relative paths, and other kinds of answers, alone", () => {
    const twice = `<script src="${P}src/main.ts"></script>`;
    expect(rewriteRootPaths(twice, "text/html", P)).toBe(twice);
    expect(isRewritable("text/html; charset=utf-8")).toBe(true);
    expect(isRewritable("application/javascript")).toBe(true);
    expect(isRewritable("text/css")).toBe(true);
    expect(isRewritable("image/png")).toBe(false);
    expect(isRewritable("application/json")).toBe(false);
    expect(isRewritable(undefined)).toBe(false);
  });
});
