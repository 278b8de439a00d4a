import { describe, expect, it } from "vitest";
import { extractAll, extractPath, parsePath, parsePathList } from "../../../src/tools/http/extract.js";
import { buildPlan } from "../../../src/tools/http/http-tool.js";
import { createRedactor } from "../../../src/tools/http/redact.js";
import { parseTemplate, renderJsonValue } from "../../../src/tools/http/template.js";

describe("templates", () => {
  it("parses params, env vars and env defaults", () => {
    expect(parseTemplate("a {{ q }} b {{env.TOKEN}} {{env.BASE ?? https://x.test/a?b=1}}")).toEqual([
      "a ",
      { kind: "param", path: ["q"], raw: "{{ q }}" },
      " b ",
      { kind: "env", name: "TOKEN", fallback: undefined, raw: "{{env.TOKEN}}" },
      " ",
      {
        kind: "env",
        name: "BASE",
        fallback: "https://x.test/a?b=1",
        raw: "{{env.BASE ?? https://x.test/a?b=1}}",
      },
    ]);
    expect(() => parseTemplate("{{env.}}")).toThrow(/environment variable/);
    expect(() => parseTemplate("{{a b}}")).toThrow(/not a parameter name/);
    expect(() => parseTemplate("{{q ?? 1}}")).toThrow(/default/);
  });

  it("keeps typed values for whole placeholders in JSON bodies and drops missing keys", () => {
    const scope = { params: { n: 3, tags: ["a"], text: 'x"y' }, env: {} };
    expect(
      renderJsonValue(
        {
          n: "{{n}}",
          tags: "{{tags}}",
          label: "n={{n}} {{text}}",
          gone: "{{missing}}",
          list: ["{{missing}}"],
        },
        scope,
      ),
    ).toEqual({ n: 3, tags: ["a"], label: 'n=3 x"y', list: [null] });
  });

  it("builds a plan: path params percent-encoded, env inserted raw, query values encoded once", () => {
    const plan = buildPlan(
      {
        method: "GET",
        url: "{{env.BASE}}/items/{{id}}",
        query: { q: "{{q}}", fixed: 5, opt: "{{missing}}", many: "{{list}}" },
        headers: { "x-key": "{{env.KEY}}", "x-opt": "{{missing}}" },
      },
      {
        params: { id: "a/b c", q: "x&y=z", list: ["p", "q"] },
        env: { BASE: "https://api.test/v1", KEY: "k-123" },
      },
    );
    expect(plan.url.href).toBe("https://api.test/v1/items/a%2Fb%20c?q=x%26y%3Dz&fixed=5&many=p&many=q");
    expect(plan.headers).toEqual({ "x-key": "k-123" });
    expect(() =>
      buildPlan({ method: "GET", url: "https://a.test/{{id}}" }, { params: { id: ".." }, env: {} }),
    ).toThrow(/may not be/);
  });

  it("reports an unset env variable by name", () => {
    expect(() =>
      buildPlan({ method: "GET", url: "https://a.test/?k={{env.NOPE_KEY}}" }, { params: {}, env: {} }),
    ).toThrow(/NOPE_KEY is not set/);
  });
});

describe("response paths", () => {
  const doc = {
    current: { temperature_2m: 12.5 },
    daily: { time: ["2025-01-01", "2025-01-02"] },
    results: [{ name: "Berlin" }, { name: "Bern" }, { other: 1 }],
    "odd key": { x: 1 },
  };

  it("reads keys, indexes, negative indexes and wildcards", () => {
    expect(extractPath(doc, parsePath("current.temperature_2m"))).toBe(12.5);
    expect(extractPath(doc, parsePath("daily.time[0]"))).toBe("2025-01-01");
    expect(extractPath(doc, parsePath("daily.time[-1]"))).toBe("2025-01-02");
    expect(extractPath(doc, parsePath("results[*].name"))).toEqual(["Berlin", "Bern"]);
    expect(extractPath(doc, parsePath("odd key.x"))).toBe(1);
    expect(extractPath(doc, parsePath("results[9].name"))).toBeUndefined();
    expect(extractPath([1, 2], parsePath("[1]"))).toBe(2);
    expect(parsePath("a.b?").optional).toBe(true);
  });

  it("keys the extracted values by path, with null for missing ones", () => {
    expect(extractAll(doc, parsePathList("current.temperature_2m, daily.time[0], nope"))).toEqual({
      "current.temperature_2m": 12.5,
      "daily.time[0]": "2025-01-01",
      nope: null,
    });
  });

  it("rejects malformed paths", () => {
    for (const bad of ["", "a..b", "a.", "a[x]", "a[0", "a]"])
      expect(() => parsePath(bad)).toThrow(/invalid/);
  });
});

describe("redactor", () => {
  it("hides secrets in raw, URL-encoded and JSON-escaped form, and ignores tiny values", () => {
    const redact = createRedactor(['s3cr3t/+&"x', "ab", undefined]);
    const text = `raw s3cr3t/+&"x url ${encodeURIComponent('s3cr3t/+&"x')} json ${JSON.stringify('s3cr3t/+&"x')} ab`;
    const out = redact(text);
    expect(out).not.toContain("s3cr3t");
    expect(out).toContain("[redacted]");
    expect(out.endsWith("ab")).toBe(true);
  });
});
