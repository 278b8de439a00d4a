import { describe, expect, it } from "vitest";
import { renderSystemLayers } from "../../src/agent/layered-context.js";
import { Bm25Index } from "../../src/skills/bm25.js";
import {
  findSkill,
  parseSkillCommand,
  SkillIndex,
  selectSkills,
  skillContextBody,
} from "../../src/skills/select-skills.js";
import { stem, tokenize } from "../../src/skills/tokenize.js";
import type { Skill } from "../../src/skills/types.js";

function skill(name: string, description: string, body: string, extra: Partial<Skill> = {}): Skill {
  return {
    name,
    description,
    body,
    hidden: false,
    tools: [],
    model: undefined,
    source: "project",
    dir: `/p/skills/${name}`,
    path: `/p/skills/${name}/SKILL.md`,
    files: [],
    extra: {},
    ...extra,
  };
}

const skills: Skill[] = [
  skill(
    "code-review",
    "Review code changes, pull requests and diffs for bugs and security problems. 代码审查，检查代码。",
    "Read the diff. Look for correctness problems, then security, then tests. Report findings by severity.",
  ),
  skill(
    "commit-message",
    "Write a git commit message in the Conventional Commits format. 写提交信息。",
    "Run git diff --cached. Summarise the change in the imperative mood, at most 72 characters.",
  ),
  skill(
    "travel-planner",
    "Plan trips: flights, hotels, itineraries and budgets. 旅行计划，订酒店，行程安排。",
    "Ask for dates and budget first. Suggest a day-by-day itinerary.",
  ),
  skill(
    "spreadsheet-formulas",
    "Write and explain spreadsheet formulas for Excel and Google Sheets.",
    "Prefer XLOOKUP over VLOOKUP. Explain each argument of the formula.",
  ),
  skill(
    "deploy-production",
    "Deploy the service to production with the release checklist. Review the diff before deploying.",
    "Only when asked explicitly. Tag the release, run the migration, watch the dashboards.",
    { hidden: true },
  ),
];

describe("tokenize", () => {
  it("splits English into stemmed lowercase words without stop words", () => {
    expect(tokenize("Reviewing the Pull-Requests!")).toEqual(["review", "pull", "request"]);
    expect(stem("commits")).toBe(stem("committed"));
    expect(stem("reviews")).toBe(stem("review"));
  });

  it("turns CJK runs into unigrams and bigrams, and keeps mixed text apart", () => {
    expect(tokenize("提交信息")).toEqual(["提", "提交", "交", "交信", "信", "信息", "息"]);
    expect(tokenize("用git提交")).toEqual(["用", "git", "提", "提交", "交"]);
  });

  it("drops very common Chinese characters as unigrams but keeps their bigrams", () => {
    const tokens = tokenize("我的代码");
    expect(tokens).not.toContain("我");
    expect(tokens).not.toContain("的");
    expect(tokens).toContain("代码");
    expect(tokens).toContain("我的");
  });
});

describe("Bm25Index", () => {
  it("ranks a document with more, rarer matching terms higher and weights fields", () => {
    const index = new Bm25Index<string>();
    index.add("a", [{ text: "apple banana", weight: 1 }]);
    index.add("b", [{ text: "banana cherry", weight: 1 }]);
    index.add("c", [{ text: "cherry", weight: 3 }]);
    const hits = index.search("cherry banana");
    expect(hits.map((h) => h.item)).toEqual(["b", "c", "a"]);
    expect(index.search("durian")).toEqual([]);
  });
});

describe("selectSkills", () => {
  it("matches English requests to the right skill", () => {
    expect(selectSkills(skills, "Can you review my pull request for bugs?")[0]?.name).toBe("code-review");
    expect(selectSkills(skills, "write a commit message for my staged changes")[0]?.name).toBe(
      "commit-message",
    );
    expect(selectSkills(skills, "I need a VLOOKUP formula in Excel")[0]?.name).toBe("spreadsheet-formulas");
  });

  it("matches Chinese requests to the right skill", () => {
    expect(selectSkills(skills, "帮我写一个提交信息")[0]?.name).toBe("commit-message");
    expect(selectSkills(skills, "请审查这段代码")[0]?.name).toBe("code-review");
    expect(selectSkills(skills, "下个月去东京旅行，帮我安排行程")[0]?.name).toBe("travel-planner");
  });

  it("returns nothing for an unrelated message", () => {
    expect(selectSkills(skills, "What is the capital of France?")).toEqual([]);
    expect(selectSkills(skills, "今天天气怎么样")).toEqual([]);
  });

  it("never chooses a hidden skill automatically, even on a strong match", () => {
    const picked = selectSkills(skills, "deploy the service to production with the release checklist");
    expect(picked.map((s) => s.name)).not.toContain("deploy-production");
  });

  it("includes hidden skills chosen by name, via the option or a /skill command", () => {
    const byOption = selectSkills(skills, "ship it", { explicit: ["deploy-production"] });
    expect(byOption.map((s) => [s.name, s.explicit])).toEqual([["deploy-production", true]]);
    const byCommand = selectSkills(skills, "/skill deploy-production then write the commit message");
    expect(byCommand[0]).toMatchObject({ name: "deploy-production", explicit: true, score: 0 });
    expect(byCommand.map((s) => s.name)).toContain("commit-message");
  });

  it("respects max and minScore", () => {
    const query = "review the code diff, write a commit message, plan a trip and fix a spreadsheet formula";
    expect(selectSkills(skills, query).length).toBeLessThanOrEqual(3);
    expect(selectSkills(skills, query, { max: 1 })).toHaveLength(1);
    expect(selectSkills(skills, query, { minScore: 1000 })).toEqual([]);
    const all = selectSkills(skills, query, { max: 10, minScore: 0, minRelativeScore: 0 });
    expect(all.length).toBeGreaterThan(3);
    const scores = all.map((s) => s.score);
    expect(scores).toEqual([...scores].sort((a, b) => b - a));
  });

  it("drops matches far behind the best one but keeps two strong ones", () => {
    expect(selectSkills(skills, "write a commit message").map((s) => s.name)).toEqual(["commit-message"]);
    expect(
      selectSkills(skills, "review the code and write a commit message")
        .map((s) => s.name)
        .sort(),
    ).toEqual(["code-review", "commit-message"]);
  });

  it("ignores a single weak body-word match", () => {
    expect(selectSkills(skills, "read this article for me")).toEqual([]);
  });

  it("gives name and description more weight than the body", () => {
    const index = new SkillIndex([
      skill("alpha", "Handles invoices.", "Mentions invoices invoices invoices in the body only."),
      skill("invoices", "Create invoices for customers.", "Steps."),
    ]);
    expect(index.select("invoices", { minScore: 0 }).map((s) => s.name)).toEqual(["invoices", "alpha"]);
  });

  it("produces layers the context renderer accepts, with the skill's files listed", () => {
    const withFiles = skill("pdf-tools", "Extract text from PDF files.", "Use the script.", {
      files: ["scripts/extract.py"],
    });
    expect(skillContextBody(withFiles)).toContain("scripts/extract.py");
    expect(skillContextBody(withFiles)).toContain("/p/skills/pdf-tools");
    const picked = selectSkills([withFiles], "extract the text of this PDF");
    const system = renderSystemLayers({ skills: picked }) ?? "";
    expect(system).toContain("## Skill: pdf-tools");
    expect(system).toContain("scripts/extract.py");
  });
});

describe("skill commands and lookup", () => {
  it("parses /skill with one or several names", () => {
    expect(parseSkillCommand("/skill code-review please look")).toEqual({
      names: ["code-review"],
      rest: "please look",
    });
    expect(parseSkillCommand("/skill a, b")).toEqual({ names: ["a", "b"], rest: "" });
    expect(parseSkillCommand("review /skill a")).toBeUndefined();
  });

  it("finds skills by name, case-insensitively", () => {
    expect(findSkill(skills, "Code-Review")?.name).toBe("code-review");
    expect(findSkill(skills, "nope")).toBeUndefined();
  });
});
