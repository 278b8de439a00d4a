/** "1 model call", "2 model calls": a count with its noun, for terminal summaries. */
export function plural(count: number, singular: string, pluralForm = `${singular}s`): string {
  return `${count} ${count === 1 ? singular : pluralForm}`;
}
