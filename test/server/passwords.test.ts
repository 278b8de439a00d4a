import { timingSafeEqual } from "node:crypto";
import { describe, expect, it, vi } from "vitest";
import {
  DEFAULT_SCRYPT_PARAMS,
  hashPassword,
  parsePasswordHash,
  verifyAgainstDummy,
  verifyPassword,
} from "../../src/server/auth/passwords.js";

// Wrap the real comparison so the test can prove the check goes through it.
vi.mock("node:crypto", async (importOriginal) => {
  const actual = await importOriginal<typeof import("node:crypto")>();
  return { ...actual, timingSafeEqual: vi.fn(actual.timingSafeEqual) };
});

describe("password hashing", () => {
  it("stores scrypt with its parameters and a random salt, and uses the default cost", async () => {
    const a = await hashPassword("correct horse battery");
    const b = await hashPassword("correct horse battery");
    expect(a).toMatch(/^scrypt\$32768\$8\$1\$[A-Za-z0-9+/]+=*\$[A-Za-z0-9+/]+=*$/);
    expect(a).not.toBe(b);
    const parsed = parsePasswordHash(a);
    expect(parsed?.params).toEqual(DEFAULT_SCRYPT_PARAMS);
    expect(parsed?.salt.length).toBe(16);
    expect(parsed?.key.length).toBe(64);
  });

  it("verifies with a constant-time comparison and rejects wrong passwords", async () => {
    const stored = await hashPassword("correct horse battery", { N: 1024, r: 8, p: 1 });
    const compare = vi.mocked(timingSafeEqual);
    compare.mockClear();
    expect(await verifyPassword("correct horse battery", stored)).toBe(true);
    expect(await verifyPassword("correct horse batterY", stored)).toBe(false);
    expect(compare).toHaveBeenCalledTimes(2);
  });

  it("keeps the cost a hash was made with, and refuses malformed or absurd hashes", async () => {
    const cheap = await hashPassword("pw-one-two-three", { N: 1024, r: 8, p: 1 });
    expect(cheap.startsWith("scrypt$1024$8$1$")).toBe(true);
    expect(await verifyPassword("pw-one-two-three", cheap)).toBe(true);
    expect(await verifyPassword("x", "plain-text-password")).toBe(false);
    expect(await verifyPassword("x", "scrypt$4194304$8$1$c2FsdHNhbHRzYWx0$a2V5a2V5a2V5a2V5a2V5a2V5")).toBe(
      false,
    );
  });

  it("spends scrypt work for unknown users too", async () => {
    const compare = vi.mocked(timingSafeEqual);
    compare.mockClear();
    expect(await verifyAgainstDummy("whatever", { N: 1024, r: 8, p: 1 })).toBe(false);
    expect(compare).toHaveBeenCalledTimes(1);
  });
});
