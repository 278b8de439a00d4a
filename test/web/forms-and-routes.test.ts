import { describe, expect, it } from "vitest";
import { describeUserAgent, plural } from "../../web/src/format.js";
import {
  agentToForm,
  emptyAgentForm,
  formToInput,
  formToPatch,
  splitList,
  toggleName,
  validateAgentForm,
} from "../../web/src/state/agent-form.js";
import { chainProblem, moveStep, normaliseChain, removeStep, updateStep } from "../../web/src/state/chain.js";
import { parseRoute, type Route, routeChannel, routePath } from "../../web/src/state/route.js";
import type { AgentRecord, ChainStep } from "../../web/src/types.js";

describe("routes", () => {
  const routes: Route[] = [
    { name: "home" },
    { name: "not_found", path: "/nope/x" },
    { name: "channel", channelId: "c 1/x" },
    { name: "channel_settings", channelId: "abc" },
    { name: "agents" },
    { name: "agent_new" },
    { name: "agent", agentId: "new" },
    { name: "settings" },
    { name: "memory" },
    { name: "templates" },
    { name: "memory", agentId: "scribe" },
    { name: "settings", section: "account" },
    { name: "settings", section: "providers" },
  ];

  it("round-trips every route through its path", () => {
    for (const route of routes) expect(parseRoute(routePath(route))).toEqual(route);
  });

  it("sends unknown or malformed paths home", () => {
    for (const path of [
      "/nope",
      "/c",
      "/c/x/y/z",
      "/agents/a/b",
      "/c/%E0%A4%A",
      "/settings/x",
      "/memory/a/b",
      "/settings/account/x",
    ]) {
      expect(parseRoute(path), path).toEqual({ name: "not_found", path });
    }
  });

  it("knows which channel a route follows", () => {
    expect(routeChannel({ name: "channel", channelId: "a" })).toBe("a");
    expect(routeChannel({ name: "channel_settings", channelId: "b" })).toBe("b");
    expect(routeChannel({ name: "agents" })).toBeUndefined();
  });
});

describe("agent form", () => {
  const agent: AgentRecord = {
    id: "coder",
    name: "Coder",
    emoji: "💻",
    model: "openai:gpt-x",
    toolsAllow: ["read_file", "write_file"],
    toolsDeny: ["run_command"],
    memory: false,
    skills: ["git"],
    askFirst: [],
    createdAt: 1,
    updatedAt: 1,
  };

  it("splitList accepts commas, spaces and new lines, without duplicates", () => {
    expect(splitList(" a, b  c\nd,,a ")).toEqual(["a", "b", "c", "d"]);
    expect(splitList("")).toEqual([]);
  });

  it("round-trips an agent through the form into a patch", () => {
    expect(formToPatch(agentToForm(agent))).toEqual({
      name: "Coder",
      emoji: "💻",
      model: "openai:gpt-x",
      toolsAllow: ["read_file", "write_file"],
      toolsDeny: ["run_command"],
      memory: false,
      skills: ["git"],
      knowledgeBases: null,
    });
    expect(formToPatch(agentToForm({ ...agent, knowledgeBases: ["handbook"] }))).toMatchObject({
      knowledgeBases: ["handbook"],
    });
  });

  it("clears the model and the allow list with null", () => {
    const values = { ...agentToForm(agent), model: " ", toolsMode: "all" as const };
    expect(formToPatch(values)).toMatchObject({ model: null, toolsAllow: null });
  });

  it("builds a create body with the persona and without empty optionals", () => {
    const values = { ...emptyAgentForm(), id: "writer", name: "Writer", toolsDeny: ["shell"] };
    expect(formToInput(values, "# Writer")).toEqual({
      id: "writer",
      name: "Writer",
      emoji: "🤖",
      soul: "# Writer",
      toolsDeny: ["shell"],
      memory: true,
    });
  });

  it("validates the id (only when creating), the name and the model format", () => {
    const bad = { ...emptyAgentForm(), id: "Bad Id", name: " ", model: "gpt" };
    expect(Object.keys(validateAgentForm(bad, true)).sort()).toEqual(["id", "model", "name"]);
    expect(Object.keys(validateAgentForm(bad, false)).sort()).toEqual(["model", "name"]);
    expect(
      validateAgentForm({ ...emptyAgentForm(), id: "a_1-b", name: "A", model: "anthropic:claude-x" }, true),
    ).toEqual({});
  });

  it("takes a fallback chain in the model field, sent as one comma list", () => {
    const base = { ...emptyAgentForm(), id: "a", name: "A" };
    const chain = { ...base, model: "openai:gpt-4o, deepseek:deepseek-chat" };
    expect(validateAgentForm(chain, true)).toEqual({});
    expect(Object.keys(validateAgentForm({ ...base, model: "openai:gpt-4o, deepseek" }, true))).toEqual([
      "model",
    ]);
    expect(formToPatch(chain).model).toBe("openai:gpt-4o,deepseek:deepseek-chat");
  });

  it("asks for at least one tool when the agent gets only the picked ones", () => {
    const values = { ...emptyAgentForm(), id: "a", name: "A", toolsMode: "list" as const };
    expect(Object.keys(validateAgentForm(values, true))).toEqual(["toolsAllow"]);
    expect(validateAgentForm({ ...values, toolsAllow: ["rag_query"] }, true)).toEqual({});
  });

  it("sends the answer format as a schema, refuses one that is not a JSON object, and clears it with null", () => {
    const schema = { type: "object", properties: { title: { type: "string" } } };
    const withFormat = { ...agent, answerFormat: schema };
    expect(formToPatch(agentToForm(withFormat), withFormat)).toMatchObject({ answerFormat: schema });
    const bad = { ...agentToForm(agent), answerFormat: "[1, 2]" };
    expect(Object.keys(validateAgentForm(bad, false))).toEqual(["answerFormat"]);
    expect(formToPatch({ ...agentToForm(withFormat), answerFormat: "" }, withFormat)).toMatchObject({
      answerFormat: null,
    });
    expect(formToPatch(agentToForm(agent), agent)).not.toHaveProperty("answerFormat");
  });

  it("sends the thinking effort when set, and null to go back to the model's default", () => {
    const thinking = { ...agent, reasoning: "high" as const };
    expect(agentToForm(thinking).reasoning).toBe("high");
    expect(formToPatch(agentToForm(thinking), thinking)).toMatchObject({ reasoning: "high" });
    expect(formToPatch({ ...agentToForm(thinking), reasoning: "" }, thinking)).toMatchObject({
      reasoning: null,
    });
    expect(formToPatch(agentToForm(agent), agent)).not.toHaveProperty("reasoning");
    const created = formToInput({ ...emptyAgentForm(), id: "deep", name: "Deep", reasoning: "low" }, "");
    expect(created.reasoning).toBe("low");
  });

  it("sends the network when set, null to go back to the server's, and checks the hosts", () => {
    const allowed = {
      ...agent,
      network: { mode: "allow" as const, hosts: ["registry.npmjs.org", "pypi.org"] },
    };
    const form = agentToForm(allowed);
    expect(form).toMatchObject({ networkMode: "allow", networkHosts: "registry.npmjs.org, pypi.org" });
    expect(formToPatch(form, allowed)).toMatchObject({ network: allowed.network });
    expect(formToPatch({ ...form, networkMode: "" }, allowed)).toMatchObject({ network: null });
    expect(formToPatch(agentToForm(agent), agent)).not.toHaveProperty("network");
    expect(formToPatch({ ...form, networkMode: "on" }, allowed)).toMatchObject({ network: { mode: "on" } });
    expect(validateAgentForm(form, false)).toEqual({});
    expect(
      validateAgentForm({ ...form, networkHosts: "https://registry.npmjs.org" }, false).networkHosts,
    ).toMatch(/https:\/\/registry\.npmjs\.org/);
    expect(validateAgentForm({ ...form, networkHosts: " " }, false).networkHosts).toBeDefined();
    const created = formToInput({ ...emptyAgentForm(), id: "net", name: "Net", networkMode: "off" }, "");
    expect(created.network).toEqual({ mode: "off" });
  });

  it("ticks and unticks names, keeping the picking order", () => {
    expect(toggleName(["a", "b"], "c", true)).toEqual(["a", "b", "c"]);
    expect(toggleName(["a", "b"], "a", true)).toEqual(["a", "b"]);
    expect(toggleName(["a", "b"], "a", false)).toEqual(["b"]);
  });
});

describe("chain editing", () => {
  const steps: ChainStep[] = [
    { agentId: "a", requiresApproval: false },
    { agentId: "b", requiresApproval: true, instruction: "  check it  " },
    { agentId: "c", requiresApproval: false, instruction: " " },
  ];

  it("moves, removes and updates steps without touching the input", () => {
    expect(moveStep(steps, 0, 1).map((s) => s.agentId)).toEqual(["b", "a", "c"]);
    expect(moveStep(steps, 2, -2).map((s) => s.agentId)).toEqual(["c", "a", "b"]);
    expect(moveStep(steps, 0, -1)).toBe(steps);
    expect(removeStep(steps, 1).map((s) => s.agentId)).toEqual(["a", "c"]);
    expect(updateStep(steps, 0, { requiresApproval: true })[0]).toEqual({
      agentId: "a",
      requiresApproval: true,
    });
    expect(steps.map((s) => s.agentId)).toEqual(["a", "b", "c"]);
  });

  it("normalises instructions: trimmed, empty ones dropped", () => {
    expect(normaliseChain(steps)).toEqual([
      { agentId: "a", requiresApproval: false },
      { agentId: "b", requiresApproval: true, instruction: "check it" },
      { agentId: "c", requiresApproval: false },
    ]);
  });

  it("explains why a chain cannot be saved", () => {
    expect(chainProblem(steps, ["a", "b", "c"])).toBeUndefined();
    expect(chainProblem(steps, ["a", "b"])).toMatch(/Step 3 uses @c, who is not in this group/);
    expect(chainProblem([{ agentId: "", requiresApproval: false }], ["a"])).toMatch(/Step 1 has no agent/);
  });
});

describe("display helpers", () => {
  it("plural picks the singular only for exactly one", () => {
    expect([0, 1, 2].map((n) => plural(n, "agent"))).toEqual(["0 agents", "1 agent", "2 agents"]);
    expect(plural(1, "person", "people")).toBe("1 person");
    expect(plural(3, "person", "people")).toBe("3 people");
  });

  it("describes a browser session in words", () => {
    const chrome =
      "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/140.0.0.0 Safari/537.36";
    expect(describeUserAgent(chrome)).toBe("Chrome on Linux");
    expect(
      describeUserAgent(
        "Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 Version/17.0 Safari/604.1",
      ),
    ).toBe("Safari on iOS");
    expect(describeUserAgent("curl/8.5.0")).toBe("curl/8.5.0");
  });
});
