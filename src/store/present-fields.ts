/** Fields that may be missing: a nullable column's null, an optional input's undefined. */
export type MaybeFields<T> = { [K in keyof T]?: T[K] | null };

/**
 * `record` with each of `fields` that holds a value set on it: a null or undefined one stays absent
 * rather than being stored as null. How a row's nullable columns become a record's optional fields
 * (SQLite and PostgreSQL rows alike), and how an input copies only the optional keys it was given.
 */
export function withPresent<T extends object>(record: T, fields: MaybeFields<NoInfer<T>>): T {
  const target = record as Record<string, unknown>;
  for (const [key, value] of Object.entries(fields)) {
    if (value !== null && value !== undefined) target[key] = value;
  }
  return record;
}
