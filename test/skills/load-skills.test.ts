import { mkdir, mkdtemp, realpath, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { skillsCommand } from "../../src/cli/commands/skills.js";
import { defaultSkillDirs, loadSkills } from "../../src/skills/load-skills.js";
import { selectSkills } from "../../src/skills/select-skills.js";
import { projectRoot } from "../support/fixtures.js";

let root: string;
let home: string;
let project: string;

async function write(path: string, text: string): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
  await writeFile(path, text);
}

function skillText(name: string, description: string, body = "Steps.", extra = ""): string {
  return `---\nname: ${name}\ndescription: ${description}\n${extra}---\n${body}\n`;
}

beforeEach(async () => {
  root = await realpath(await mkdtemp(join(tmpdir(), "dimsum-skills-")));
  home = join(root, "home");
  project = join(root, "project");
  await write(join(home, "skills/shared/SKILL.md"), skillText("shared", "User version of the shared skill."));
  await write(join(home, "skills/user-only/SKILL.md"), skillText("user-only", "Only in the user folder."));
  await write(
    join(project, "skills/shared/SKILL.md"),
    skillText("shared", "Project version of the shared skill.", "Project body."),
  );
  await write(
    join(project, "skills/pdf-tools/SKILL.md"),
    skillText("pdf-tools", "Extract text from PDF files.", "Run scripts/extract.py."),
  );
  await write(join(project, "skills/pdf-tools/scripts/extract.py"), "print('hi')\n");
  await write(join(project, "skills/pdf-tools/reference.md"), "# Reference\n");
  await write(join(project, "skills/pdf-tools/.cache/ignored"), "x");
  await write(
    join(project, "skills/broken/SKILL.md"),
    "---\nname: broken\ndescription: has: a problem\n---\nbody\n",
  );
  await write(join(project, "skills/no-fence/SKILL.md"), "# Just markdown\n");
  await write(join(project, "skills/not-a-skill/notes.txt"), "no SKILL.md here");
});

afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

describe("loadSkills", () => {
  it("loads user and project skills, the project winning on a name clash", async () => {
    const { skills } = await loadSkills(defaultSkillDirs(home, project));
    expect(skills.map((s) => [s.name, s.source])).toEqual([
      ["pdf-tools", "project"],
      ["shared", "project"],
      ["user-only", "user"],
    ]);
    const shared = skills.find((s) => s.name === "shared");
    expect(shared?.description).toBe("Project version of the shared skill.");
    expect(shared?.body).toBe("Project body.");
    expect(shared?.path).toBe(join(project, "skills/shared/SKILL.md"));
  });

  it("lists the other files of a skill folder, skipping hidden ones", async () => {
    const { skills } = await loadSkills(defaultSkillDirs(home, project));
    const pdf = skills.find((s) => s.name === "pdf-tools");
    expect(pdf?.files).toEqual(["reference.md", "scripts/extract.py"]);
    expect(pdf?.dir).toBe(join(project, "skills/pdf-tools"));
  });

  it("reports bad files with path and line and still loads the rest", async () => {
    const { skills, errors } = await loadSkills(defaultSkillDirs(home, project));
    expect(skills).toHaveLength(3);
    const byPath = Object.fromEntries(errors.map((e) => [e.path, e]));
    expect(byPath[join(project, "skills/broken/SKILL.md")]).toMatchObject({ line: 3 });
    expect(byPath[join(project, "skills/no-fence/SKILL.md")]).toMatchObject({ line: 1 });
    expect(errors).toHaveLength(2);
  });

  it("treats missing skills folders as empty", async () => {
    const result = await loadSkills(defaultSkillDirs(join(root, "nowhere"), join(root, "nothing")));
    expect(result).toEqual({ skills: [], errors: [], warnings: [] });
  });

  it("loads the example skills shipped with the project, which follow the Agent Skills rules", async () => {
    const result = await loadSkills([{ path: join(projectRoot, "skills"), source: "project" }]);
    expect(result.errors).toEqual([]);
    expect(result.warnings).toEqual([]);
    const names = result.skills.map((s) => s.name);
    expect(names).toEqual(expect.arrayContaining(["code-review", "commit-message"]));
    const commit = result.skills.find((s) => s.name === "commit-message");
    expect(commit?.files).toContain("references/conventional-commits.md");
    expect(selectSkills(result.skills, "please write a commit message")[0]?.name).toBe("commit-message");
    expect(selectSkills(result.skills, "帮我审查一下代码")[0]?.name).toBe("code-review");
  });
});

describe("skillsCommand", () => {
  function collector() {
    let text = "";
    return {
      write: (chunk: string) => {
        text += chunk;
        return true;
      },
      get text() {
        return text;
      },
    };
  }

  it("lists skills with their source and reports load errors as file:line", async () => {
    const stdout = collector();
    const stderr = collector();
    const code = await skillsCommand({}, { stdout, stderr, env: { DIMSUM_HOME: home }, cwd: project });
    expect(code).toBe(1);
    expect(stdout.text).toMatch(/^NAME\s+SOURCE\s+HIDDEN\s+DESCRIPTION/);
    expect(stdout.text).toMatch(/shared\s+project\s+no\s+Project version/);
    expect(stdout.text).toMatch(/user-only\s+user\s+no/);
    expect(stderr.text).toContain(`${join(project, "skills/broken/SKILL.md")}:3:`);
    expect(stderr.text).toContain(`${join(project, "skills/no-fence/SKILL.md")}:1:`);
  });

  it("prints JSON and exits 0 when every skill loads", async () => {
    await rm(join(project, "skills/broken"), { recursive: true });
    await rm(join(project, "skills/no-fence"), { recursive: true });
    await write(
      join(home, "skills/secret-op/SKILL.md"),
      skillText("secret-op", "Hidden helper.", "Body.", "hidden: true\n"),
    );
    const stdout = collector();
    const code = await skillsCommand(
      { json: true },
      { stdout, stderr: collector(), env: { DIMSUM_HOME: home }, cwd: project },
    );
    expect(code).toBe(0);
    const parsed = JSON.parse(stdout.text) as {
      skills: Array<{ name: string; hidden: boolean }>;
      errors: [];
    };
    expect(parsed.errors).toEqual([]);
    expect(parsed.skills.find((s) => s.name === "secret-op")?.hidden).toBe(true);
  });
});
