import { describe, expect, it } from "vitest";
import { approvalQuestion, rememberingAlways } from "../../src/cli/approval.js";

const request = (tool: string) => ({ tool, summary: "git push", reason: "it matches the confirm rule" });

describe("terminal approvals", () => {
  it("approves once on y, remembers a tool on a(lways), and rejects anything else", async () => {
    const answers = ["y", "n", "always", "", "n"];
    const asked: string[] = [];
    const approve = rememberingAlways(async (r) => {
      asked.push(r.tool);
      return answers.shift() ?? "";
    });
    expect(await approve(request("execute_command"))).toBe(true);
    expect(await approve(request("execute_command"))).toBe(false);
    expect(await approve(request("execute_command"))).toBe(true);
    // Remembered: not asked again.
    expect(await approve(request("execute_command"))).toBe(true);
    expect(await approve(request("github_delete_repo"))).toBe(false);
    expect(asked).toEqual(["execute_command", "execute_command", "execute_command", "github_delete_repo"]);
  });
});

describe("network requests at the terminal", () => {
  const network = {
    tool: "request_network",
    summary: "dimsum wants network access to registry.npmjs.org",
    reason: "to install ms",
  };

  it("asks with the agent's words and offers no always (a grant is for this run only)", async () => {
    expect(approvalQuestion(network)).toBe(
      "dimsum wants network access to registry.npmjs.org\n(to install ms) Allow for this run? [y]es / [N]o ",
    );
    const answers = ["always", "n"];
    const approve = rememberingAlways(async () => answers.shift() ?? "");
    expect(await approve(network)).toBe(false);
    expect(await approve(network)).toBe(false);
    expect(answers).toEqual([]);
  });
});
