/** The Visibility field's rules: what a save sends, and who may change it. */
import { describe, expect, it } from "vitest";
import { mayChangeVisibility, visibilityOf, visibilityPatch } from "../../web/src/state/visibility.js";

describe("visibility field", () => {
  it("reads a resource that says nothing as everyone, nobody listed", () => {
    expect(visibilityOf(undefined)).toEqual({ visibility: "everyone", allowedUsers: [] });
    expect(visibilityOf({ ownerId: "u1" })).toEqual({ visibility: "everyone", allowedUsers: [] });
  });

  it("sends nothing when unchanged, so an edit by a non-owner is not refused for it", () => {
    const agent = { ownerId: "u1", visibility: "people" as const, allowedUsers: ["u2", "u3"] };
    expect(visibilityPatch({ visibility: "people", allowedUsers: ["u3", "u2"] }, agent)).toBeUndefined();
    expect(visibilityPatch({ visibility: "everyone", allowedUsers: [] }, undefined)).toBeUndefined();
  });

  it("sends the choice when changed, dropping the list unless chosen people", () => {
    const agent = { ownerId: "u1", visibility: "people" as const, allowedUsers: ["u2"] };
    expect(visibilityPatch({ visibility: "private", allowedUsers: ["u2"] }, agent)).toEqual({
      visibility: "private",
      allowedUsers: [],
    });
    expect(visibilityPatch({ visibility: "people", allowedUsers: ["u2", "u4", "u4"] }, agent)).toEqual({
      visibility: "people",
      allowedUsers: ["u2", "u4"],
    });
    expect(visibilityPatch({ visibility: "private", allowedUsers: [] }, undefined)).toEqual({
      visibility: "private",
      allowedUsers: [],
    });
  });

  it("lets the owner and admins change it, not other members", () => {
    const owned = { ownerId: "u1", visibility: "private" as const };
    expect(mayChangeVisibility({ id: "u1", role: "member" }, owned)).toBe(true);
    expect(mayChangeVisibility({ id: "u2", role: "member" }, owned)).toBe(false);
    expect(mayChangeVisibility({ id: "u2", role: "admin" }, owned)).toBe(true);
    expect(mayChangeVisibility({ id: "u2", role: "member" }, {})).toBe(false);
    expect(mayChangeVisibility({ id: "u2", role: "member" }, undefined)).toBe(true);
    expect(mayChangeVisibility(undefined, owned)).toBe(false);
  });
});
