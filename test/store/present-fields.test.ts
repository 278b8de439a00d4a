import { describe, expect, it } from "vitest";
import { withPresent } from "../../src/store/present-fields.js";

interface Sample {
  id: string;
  note?: string;
  count?: number;
  done?: boolean;
}

describe("withPresent", () => {
  it("sets the fields that hold a value and leaves null and undefined ones absent", () => {
    const record = withPresent<Sample>({ id: "a" }, { note: null, count: 0, done: undefined });
    expect(record).toStrictEqual({ id: "a", count: 0 });
    expect("note" in record).toBe(false);
    expect("done" in record).toBe(false);
  });

  it("keeps falsy values (0, '', false) and returns the record it was given", () => {
    const base: Sample = { id: "b" };
    const record = withPresent(base, { note: "", count: 0, done: false });
    expect(record).toBe(base);
    expect(record).toStrictEqual({ id: "b", note: "", count: 0, done: false });
  });
});
