/** What every format extractor produces: a title and the document as structural blocks, in order. */

export type BlockKind = "heading" | "text" | "code";

export interface Block {
  kind: BlockKind;
  text: string;
  /** Heading level 1..6. */
  level?: number;
  /** 1-based page the block is on (PDF). */
  page?: number;
  /** A name for where the block is when there are no headings (e.g. a code declaration). */
  label?: string;
}

export interface ExtractedDocument {
  /** Title found in the content (first heading, `<title>`, PDF metadata), if any. */
  title?: string;
  blocks: Block[];
  /** Page count, for paged formats. */
  pages?: number;
}
