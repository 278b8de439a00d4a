import { describe, expect, it } from "vitest";
import {
  applyMention,
  filterCandidates,
  findMentionQuery,
  type MentionCandidate,
  mentionCandidates,
  mentionKey,
  mentionMenuAt,
} from "../../web/src/state/mention.js";
import type { AgentRecord, ChannelRecord } from "../../web/src/types.js";

const candidates: MentionCandidate[] = [
  { id: "coder", name: "Code Monkey", emoji: "💻" },
  { id: "writer", name: "Writer", emoji: "✍️" },
  { id: "editor", name: "Copy Editor", emoji: "📝" },
  { id: "translator", name: "Translator", emoji: "🌍" },
];

function agent(id: string, name: string, emoji = "🤖"): AgentRecord {
  return {
    id,
    name,
    emoji,
    toolsDeny: [],
    memory: true,
    skills: [],
    askFirst: [],
    createdAt: 1,
    updatedAt: 1,
  };
}

function channel(overrides: Partial<ChannelRecord>): ChannelRecord {
  return {
    id: "c1",
    kind: "group",
    name: "team",
    members: [],
    chain: [],
    createdBy: "u1",
    createdAt: 1,
    updatedAt: 1,
    ...overrides,
  };
}

describe("findMentionQuery", () => {
  it("finds the @word the caret is in, at the start or after whitespace", () => {
    expect(findMentionQuery("@co", 3)).toEqual({ start: 0, end: 3, query: "co" });
    expect(findMentionQuery("hi @Wri", 7)).toEqual({ start: 3, end: 7, query: "wri" });
    expect(findMentionQuery("hi\n@", 4)).toEqual({ start: 3, end: 4, query: "" });
    expect(findMentionQuery("(@ed", 4)).toEqual({ start: 1, end: 4, query: "ed" });
  });

  it("extends the word past the caret so a pick replaces all of it", () => {
    expect(findMentionQuery("ask @coder now", 7)).toEqual({ start: 4, end: 10, query: "co" });
  });

  it("ignores e-mail addresses, text without @, and a caret past a space", () => {
    expect(findMentionQuery("mail bob@example", 16)).toBeNull();
    expect(findMentionQuery("hello", 5)).toBeNull();
    expect(findMentionQuery("@coder hi", 9)).toBeNull();
  });
});

describe("filterCandidates", () => {
  it("ranks id prefix, then name prefix, then word prefix, then substring", () => {
    const ids = (q: string) => filterCandidates(candidates, q).map((c) => c.id);
    expect(ids("")).toEqual(["coder", "writer", "editor", "translator"]);
    expect(ids("co")).toEqual(["coder", "editor"]);
    expect(ids("ed")).toEqual(["editor"]);
    expect(ids("monk")).toEqual(["coder"]);
    expect(ids("o")).toEqual(["coder", "editor", "translator"]);
    const withTeam = [...candidates, { id: "red", name: "Editors Team", emoji: "🟥" }];
    // "editor" matches by id prefix, "red" only by name prefix.
    expect(filterCandidates(withTeam, "edi").map((c) => c.id)).toEqual(["editor", "red"]);
    expect(ids("zzz")).toEqual([]);
  });

  it("caps the list", () => {
    expect(filterCandidates(candidates, "", 2)).toHaveLength(2);
  });
});

describe("mentionCandidates", () => {
  const agents = [
    agent("writer", "Writer", "✍️"),
    agent("coder", "Coder", "💻"),
    agent("other", "Not a member"),
  ];

  it("lists the channel's agents by name, with @all and @chain in groups", () => {
    const group = channel({
      members: [
        { type: "agent", id: "writer" },
        { type: "user", id: "u1" },
        { type: "agent", id: "coder" },
        { type: "agent", id: "ghost" },
      ],
      chain: [{ agentId: "coder", requiresApproval: false }],
    });
    expect(mentionCandidates(group, agents).map((c) => c.id)).toEqual([
      "coder",
      "ghost",
      "writer",
      "all",
      "chain",
    ]);
    expect(mentionCandidates(group, agents).find((c) => c.id === "ghost")).toEqual({
      id: "ghost",
      name: "ghost",
      emoji: "🤖",
    });
  });

  it("offers no @all or @chain in a direct chat", () => {
    const direct = channel({ kind: "direct", members: [{ type: "agent", id: "coder" }] });
    expect(mentionCandidates(direct, agents).map((c) => c.id)).toEqual(["coder"]);
  });
});

describe("mention menu and keys", () => {
  it("opens on @, keeps the highlighted item while typing narrows the list", () => {
    const first = mentionMenuAt("@", 1, candidates);
    expect(first?.items.map((c) => c.id)).toEqual(["coder", "writer", "editor", "translator"]);
    const moved = first && { ...first, index: 2 };
    const narrowed = mentionMenuAt("@e", 2, candidates, moved);
    expect(narrowed?.items[narrowed.index]?.id).toBe("editor");
    expect(mentionMenuAt("@zz", 3, candidates)).toBeNull();
    expect(mentionMenuAt("plain", 5, candidates)).toBeNull();
  });

  it("arrows wrap, Enter and Tab pick, Escape closes, other keys pass through", () => {
    const menu = mentionMenuAt("@", 1, candidates);
    if (!menu) throw new Error("menu expected");
    expect(mentionKey(menu, "ArrowDown")).toEqual({ kind: "move", index: 1 });
    expect(mentionKey(menu, "ArrowUp")).toEqual({ kind: "move", index: 3 });
    expect(mentionKey({ ...menu, index: 3 }, "ArrowDown")).toEqual({ kind: "move", index: 0 });
    expect(mentionKey({ ...menu, index: 1 }, "Enter")).toEqual({ kind: "pick", item: candidates[1] });
    expect(mentionKey(menu, "Tab")).toEqual({ kind: "pick", item: candidates[0] });
    expect(mentionKey(menu, "Escape")).toEqual({ kind: "close" });
    expect(mentionKey(menu, "a")).toEqual({ kind: "ignore" });
  });

  it("applyMention replaces the word with @id and a space, caret after it", () => {
    const q1 = findMentionQuery("hi @co", 6);
    if (!q1) throw new Error("query expected");
    expect(applyMention("hi @co", q1, "coder")).toEqual({ text: "hi @coder ", caret: 10 });
    const q2 = findMentionQuery("hi @co please", 5);
    if (!q2) throw new Error("query expected");
    expect(applyMention("hi @co please", q2, "coder")).toEqual({ text: "hi @coder please", caret: 10 });
  });
});
