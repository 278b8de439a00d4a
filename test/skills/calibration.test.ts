import { readFileSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { loadSkills } from "../../src/skills/load-skills.js";
import { DEFAULT_MIN_SCORE, SkillIndex } from "../../src/skills/select-skills.js";
import type { Skill } from "../../src/skills/types.js";
import { projectRoot } from "../support/fixtures.js";

interface Labelled {
  text: string;
  expect: string[];
  allow?: string[];
}

const fixtures = join(projectRoot, "test/fixtures/skill-selection");
const prompts: Labelled[] = JSON.parse(readFileSync(join(fixtures, "prompts.json"), "utf8")).prompts;

let shipped: Skill[];
let withSynthetic: Skill[];
beforeAll(async () => {
  const project = { path: join(projectRoot, "skills"), source: "project" as const };
  shipped = (await loadSkills([project])).skills;
  withSynthetic = (await loadSkills([project, { path: join(fixtures, "synthetic"), source: "user" }])).skills;
});

/** Each prompt's automatic choice against the labels, for the skills loaded. */
function check(skills: Skill[]) {
  const index = new SkillIndex(skills);
  const loaded = new Set(skills.map((s) => s.name));
  const wrong: string[] = [];
  let onTopicMin = Number.POSITIVE_INFINITY;
  let offTopicMax = 0;
  for (const prompt of prompts) {
    const chosen = index.select(prompt.text).map((s) => s.name);
    const expected = prompt.expect.filter((name) => loaded.has(name));
    const allowed = new Set([...expected, ...(prompt.allow ?? [])]);
    const missing = expected.filter((name) => !chosen.includes(name));
    const extra = chosen.filter((name) => !allowed.has(name));
    if (missing.length > 0 || extra.length > 0)
      wrong.push(`${prompt.text}: missing ${missing} extra ${extra}`);
    for (const hit of index.select(prompt.text, { minScore: 0, minRelativeScore: 0, max: 100 })) {
      if (expected.includes(hit.name)) onTopicMin = Math.min(onTopicMin, hit.score);
      else if (!allowed.has(hit.name)) offTopicMax = Math.max(offTopicMax, hit.score);
    }
  }
  return { wrong, onTopicMin, offTopicMax };
}

describe("skill selection on the labelled prompts", () => {
  it("has the labelled set it is calibrated on", () => {
    expect(prompts.length).toBeGreaterThanOrEqual(40);
    expect(prompts.filter((p) => p.expect.length === 0).length).toBeGreaterThanOrEqual(15);
    expect(shipped.map((s) => s.name).sort()).toEqual(["code-review", "commit-message"]);
    expect(withSynthetic).toHaveLength(5);
  });

  it("picks no shipped skill for dim sum, haiku and other off-topic prompts, and the right one on topic", () => {
    expect(check(shipped).wrong).toEqual([]);
    const index = new SkillIndex(shipped);
    for (const text of [
      "Tell me about dim sum",
      "Write a haiku about autumn",
      "Write a haiku about dim sum",
    ]) {
      expect(index.select(text)).toEqual([]);
    }
  });

  it("does the same with synthetic skills next to the shipped ones", () => {
    expect(check(withSynthetic).wrong).toEqual([]);
  });

  it("keeps the threshold between the best off-topic and the worst on-topic score", () => {
    for (const skills of [shipped, withSynthetic]) {
      const { onTopicMin, offTopicMax } = check(skills);
      expect(offTopicMax).toBeLessThan(DEFAULT_MIN_SCORE);
      expect(onTopicMin).toBeGreaterThan(DEFAULT_MIN_SCORE);
    }
  });

  it("still applies skills named by /skill or by the agent, on any prompt", () => {
    const index = new SkillIndex(shipped);
    expect(index.select("/skill code-review Tell me about dim sum").map((s) => [s.name, s.explicit])).toEqual(
      [["code-review", true]],
    );
    const named = index.select("Write a haiku about autumn", { explicit: ["commit-message"] });
    expect(named.map((s) => [s.name, s.explicit])).toEqual([["commit-message", true]]);
    const both = index.select("/skill commit-message Review my pull request for bugs", {
      explicit: ["code-review"],
    });
    expect(both.map((s) => s.name)).toEqual(["code-review", "commit-message"]);
  });
});
