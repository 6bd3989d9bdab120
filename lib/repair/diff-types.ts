/** What a repair diff reports (./diff computes it, ./masked-patch builds it from a patch): payload and header changes, masked as shown. */

export interface JsonDiffEntry {
  op: "add" | "remove" | "change";
  /** JSON Pointer (RFC 6901) of the changed value. */
  path: string;
  /** Compact JSON of the old value (absent for "add"), cut at MAX_VALUE_CHARS. */
  before?: string;
  after?: string;
  /** A masking rule covers this value: before/after are the masked renditions. */
  masked?: boolean;
}

export interface TextHunk {
  /** 1-based line where the change starts (in both texts: the lines before it are equal). */
  line: number;
  before: string;
  after: string;
}

export type PayloadDiff =
  | { kind: "unchanged"; size: number }
  | { kind: "json"; entries: JsonDiffEntry[]; truncated: boolean }
  | { kind: "text"; hunk: TextHunk | null; masked: boolean }
  | { kind: "binary"; beforeSize: number; afterSize: number };

export interface HeaderDiffEntry {
  name: string;
  op: "add" | "remove" | "change";
  before?: string;
  after?: string;
  masked?: boolean;
}
