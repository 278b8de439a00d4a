/** Narrowing helpers for provider JSON, which arrives untyped and varies by vendor. */

export type JsonRecord = { [key: string]: unknown };

/** The value as a plain object, or undefined for null, arrays and primitives. */
export function asRecord(value: unknown): JsonRecord | undefined {
  return typeof value === "object" && value !== null && !Array.isArray(value)
    ? (value as JsonRecord)
    : undefined;
}

/** The value if it is a string. */
export function asString(value: unknown): string | undefined {
  return typeof value === "string" ? value : undefined;
}

/** The value if it is a finite number. */
export function asNumber(value: unknown): number | undefined {
  return typeof value === "number" && Number.isFinite(value) ? value : undefined;
}

/** The value if it is an array. */
export function asArray(value: unknown): unknown[] | undefined {
  return Array.isArray(value) ? value : undefined;
}
