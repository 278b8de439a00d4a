import { describe, expect, it } from "vitest";
import { DimsumError } from "../../src/errors.js";
import { isValidWireName, toHashedWireName, toWireName, WireNameMap } from "../../src/tools/tool-names.js";

const WIRE_NAME = /^[a-zA-Z0-9_-]{1,64}$/;

describe("toWireName", () => {
  it("keeps valid names unchanged", () => {
    for (const name of ["read_file", "get-weather", "A1", "x".repeat(64)])
      expect(toWireName(name)).toBe(name);
  });

  it("replaces each run of illegal characters with one underscore", () => {
    expect(toWireName("spotify.play")).toBe("spotify_play");
    expect(toWireName("a..b c/d")).toBe("a_b_c_d");
    expect(toWireName("mcp:server/tool")).toBe("mcp_server_tool");
  });

  it("shortens long names with a stable hash suffix", () => {
    const long = `${"very.long.namespace.".repeat(5)}tool`;
    const wire = toWireName(long);
    expect(wire).toMatch(WIRE_NAME);
    expect(wire).toHaveLength(64);
    expect(wire).toMatch(/^very_long_namespace_.*_[0-9a-f]{8}$/);
    expect(toWireName(long)).toBe(wire);
    expect(toWireName(`${long}2`)).not.toBe(wire);
  });

  it("gives names without any legal character a readable, distinct wire name", () => {
    const a = toWireName("天气");
    const b = toWireName("计算");
    expect(a).toMatch(/^tool_[0-9a-f]{8}$/);
    expect(b).toMatch(/^tool_[0-9a-f]{8}$/);
    expect(a).not.toBe(b);
  });

  it("hashed names are valid and differ per original name", () => {
    expect(toHashedWireName("math.sum")).toMatch(/^math_sum_[0-9a-f]{8}$/);
    expect(toHashedWireName("math.sum")).not.toBe(toHashedWireName("math-sum"));
    expect(isValidWireName(toHashedWireName("x".repeat(200)))).toBe(true);
  });

  it("recognises valid wire names", () => {
    expect(isValidWireName("ok_name-1")).toBe(true);
    expect(isValidWireName("")).toBe(false);
    expect(isValidWireName("a.b")).toBe(false);
    expect(isValidWireName("x".repeat(65))).toBe(false);
  });
});

describe("WireNameMap", () => {
  it("maps both ways", () => {
    const map = new WireNameMap();
    expect(map.assign("spotify.play")).toBe("spotify_play");
    expect(map.assign("spotify.play")).toBe("spotify_play");
    expect(map.nameOf("spotify_play")).toBe("spotify.play");
    expect(map.wireOf("spotify.play")).toBe("spotify_play");
    expect(map.nameOf("spotify.play")).toBeUndefined();
  });

  it("gives a later colliding name the hash suffix, keeping both reversible", () => {
    const map = new WireNameMap();
    expect(map.assign("math.sum")).toBe("math_sum");
    const second = map.assign("math_sum");
    expect(second).toMatch(/^math_sum_[0-9a-f]{8}$/);
    const third = map.assign("math/sum");
    expect(third).toMatch(/^math_sum_[0-9a-f]{8}$/);
    expect(new Set(["math_sum", second, third]).size).toBe(3);
    expect(map.nameOf(second)).toBe("math_sum");
    expect(map.nameOf(third)).toBe("math/sum");
  });

  it("uses a preferred wire name when it is free and valid", () => {
    const map = new WireNameMap();
    expect(map.assign("math.sum", "math_sum_1234abcd")).toBe("math_sum_1234abcd");
    expect(map.assign("other.tool", "not valid!")).toBe("other_tool");
  });

  it("frees a wire name on release", () => {
    const map = new WireNameMap();
    map.assign("a.b");
    map.release("a.b");
    expect(map.nameOf("a_b")).toBeUndefined();
    expect(map.assign("a_b")).toBe("a_b");
  });

  it("throws a config error when both candidates are taken", () => {
    const map = new WireNameMap();
    map.assign("math.sum");
    map.assign("zzz", toHashedWireName("math_sum"));
    let error: unknown;
    try {
      map.assign("math_sum");
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(DimsumError);
    expect((error as DimsumError).code).toBe("config");
    expect((error as DimsumError).message).toContain("`math_sum` and `zzz`");
  });
});
