/** The last lines a stdio server wrote to stderr, kept for error reports ("why did it fail?"). */

const DEFAULT_MAX_LINES = 20;
const MAX_LINE_LENGTH = 400;

/** A bounded buffer of complete stderr lines; partial lines wait for their newline. */
export class StderrTail {
  readonly #lines: string[] = [];
  readonly #maxLines: number;
  #partial = "";

  constructor(maxLines = DEFAULT_MAX_LINES) {
    this.#maxLines = maxLines;
  }

  /** Adds a chunk of output. */
  push(chunk: string): void {
    const pieces = (this.#partial + chunk).split(/\r?\n/);
    this.#partial = pieces.pop() ?? "";
    // A server that never prints a newline must not grow the buffer without bound.
    if (this.#partial.length > MAX_LINE_LENGTH * 4) {
      pieces.push(this.#partial);
      this.#partial = "";
    }
    for (const line of pieces) this.#add(line);
  }

  /** The kept lines, oldest first, including an unfinished last line. */
  lines(): string[] {
    const lines = this.#partial.trim() === "" ? [...this.#lines] : [...this.#lines, this.#partial.trimEnd()];
    return lines.slice(-this.#maxLines);
  }

  /** The last `count` non-empty lines joined with " | ", for one-line error messages. */
  summary(count = 3): string {
    return this.lines()
      .filter((line) => line.trim() !== "")
      .slice(-count)
      .join(" | ");
  }

  clear(): void {
    this.#lines.length = 0;
    this.#partial = "";
  }

  #add(line: string): void {
    const trimmed = line.trimEnd();
    if (trimmed === "") return;
    this.#lines.push(trimmed.length > MAX_LINE_LENGTH ? `${trimmed.slice(0, MAX_LINE_LENGTH)}…` : trimmed);
    if (this.#lines.length > this.#maxLines) this.#lines.shift();
  }
}
