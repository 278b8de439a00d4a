import { describe, expect, it } from "vitest";
import { parseFrontMatter } from "../../src/skills/front-matter.js";
import { parseSkill, type SkillFileInfo } from "../../src/skills/parse-skill.js";

const info: SkillFileInfo = {
  path: "/skills/pdf-tools/SKILL.md",
  dir: "/skills/pdf-tools",
  source: "user",
  files: ["scripts/extract.py"],
};

function parse(text: string) {
  return parseSkill(text, info);
}

describe("parseSkill", () => {
  it("reads name, description, body, tools, model and keeps unknown keys", () => {
    const result = parse(
      [
        "---",
        "name: pdf-tools",
        "description: Extract text and tables from PDF files.",
        "tools: [read_file, shell]",
        "model: openai:gpt-4.1",
        "license: MIT",
        "metadata:",
        "  author: someone",
        "---",
        "",
        "# PDF tools",
        "",
        "Run `scripts/extract.py`.",
      ].join("\n"),
    );
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    const { skill } = result;
    expect(skill.name).toBe("pdf-tools");
    expect(skill.description).toBe("Extract text and tables from PDF files.");
    expect(skill.body).toBe("# PDF tools\n\nRun `scripts/extract.py`.");
    expect(skill.tools).toEqual(["read_file", "shell"]);
    expect(skill.model).toBe("openai:gpt-4.1");
    expect(skill.hidden).toBe(false);
    expect(skill.extra).toEqual({ license: "MIT", metadata: { author: "someone" } });
    expect(skill.files).toEqual(["scripts/extract.py"]);
    expect(result.warnings).toEqual([]);
  });

  it("accepts the Agent Skills `allowed-tools` text and Claude's disable-model-invocation", () => {
    const result = parse(
      "---\nname: pdf-tools\ndescription: d\nallowed-tools: Read Bash(git:*)\ndisable-model-invocation: true\n---\nbody",
    );
    expect(result.ok && result.skill.tools).toEqual(["Read", "Bash(git:*)"]);
    expect(result.ok && result.skill.hidden).toBe(true);
  });

  it("marks hidden skills", () => {
    const result = parse("---\nname: pdf-tools\ndescription: d\nhidden: true\n---\nbody");
    expect(result.ok && result.skill.hidden).toBe(true);
  });

  it("reports bad YAML with the file line", () => {
    const result = parse(
      ["---", "name: pdf-tools", "description: Extract text", "tools: [read_file, shell", "---", "body"].join(
        "\n",
      ),
    );
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.error.path).toBe(info.path);
    expect(result.error.message).toMatch(/invalid YAML/);
    expect(result.error.line).toBe(4);
    const nested = parse("---\nname: pdf-tools\ndescription: Extract: text\nmodel: m\n---\n");
    expect(nested.ok).toBe(false);
    if (!nested.ok) {
      expect(nested.error.line).toBe(3);
      expect(nested.error.message).toMatch(/Nested mappings/);
    }
  });

  it("reports a duplicated key on its own line", () => {
    const result = parse("---\nname: pdf-tools\ndescription: a\ndescription: b\n---\n");
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.error.line).toBe(4);
  });

  it("reports a missing opening fence on line 1", () => {
    const result = parse("name: pdf-tools\ndescription: d\n");
    expect(result.ok).toBe(false);
    if (!result.ok) {
      expect(result.error.line).toBe(1);
      expect(result.error.message).toMatch(/---/);
    }
  });

  it("reports a front matter that is never closed", () => {
    const result = parse("---\nname: pdf-tools\ndescription: d\n# Body\n");
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.error.message).toMatch(/never closed/);
  });

  it("requires name and description", () => {
    const noName = parse("---\ndescription: d\n---\nbody");
    expect(noName.ok).toBe(false);
    if (!noName.ok) expect(noName.error.message).toMatch(/no `name`/);
    const noDescription = parse("---\nname: pdf-tools\n---\nbody");
    expect(noDescription.ok).toBe(false);
    if (!noDescription.ok) expect(noDescription.error.message).toMatch(/no `description`/);
    const empty = parse("---\n---\nbody");
    expect(empty.ok).toBe(false);
  });

  it("enforces the name and description rules, pointing at the offending line", () => {
    const upper = parse("---\ndescription: d\nname: PDF Tools\n---\n");
    expect(upper.ok).toBe(false);
    if (!upper.ok) {
      expect(upper.error.line).toBe(3);
      expect(upper.error.message).toMatch(/lowercase/);
    }
    const long = parse(`---\nname: ${"a".repeat(65)}\ndescription: d\n---\n`);
    expect(long.ok).toBe(false);
    const doubleHyphen = parse("---\nname: pdf--tools\ndescription: d\n---\n");
    expect(doubleHyphen.ok).toBe(false);
    const longDescription = parse(`---\nname: pdf-tools\ndescription: ${"x".repeat(1025)}\n---\n`);
    expect(longDescription.ok).toBe(false);
    if (!longDescription.ok) expect(longDescription.error.line).toBe(3);
    const badHidden = parse("---\nname: pdf-tools\ndescription: d\nhidden: sometimes\n---\n");
    expect(badHidden.ok).toBe(false);
    if (!badHidden.ok) expect(badHidden.error.line).toBe(4);
  });

  it("warns when the name differs from the folder", () => {
    const result = parse("---\nname: other-name\ndescription: d\n---\nbody");
    expect(result.ok).toBe(true);
    if (result.ok) {
      expect(result.warnings).toHaveLength(1);
      expect(result.warnings[0]?.line).toBe(2);
    }
  });

  it("handles CRLF line endings and a byte order mark", () => {
    const fm = parseFrontMatter("\uFEFF---\r\nname: x\r\ndescription: y\r\n---\r\nline one\r\nline two");
    expect(fm.ok).toBe(true);
    if (fm.ok) {
      expect(fm.data).toEqual({ name: "x", description: "y" });
      expect(fm.body).toBe("line one\nline two");
      expect(fm.lineOf("description")).toBe(3);
    }
  });
});
