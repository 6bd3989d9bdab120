/**
 * What the repair editor sends, worked out from what the admin changed (pure, client-safe). Only
 * real changes travel: an untouched payload is not sent (so a header-only repair keeps the payload
 * byte for byte), an unchanged header value is not set again, and locked fields never leave the
 * browser as edits (the server refuses them anyway: lib/repair/policy.ts).
 */
import { archiveHref } from "@/lib/archive/params";
import type { RedriveTarget } from "@/lib/brokers/contract/move";

/** One header line of the editor. `original` is null for a header the admin adds. */
export interface HeaderRow {
  key: string;
  name: string;
  original: string | null;
  value: string;
  removed: boolean;
  /** Why it cannot be changed, when it cannot. */
  lockedBecause: string | null;
}

export interface HeaderEdits {
  setHeaders: Record<string, string>;
  removeHeaders: string[];
}

/** The header edits the rows stand for: added and changed values set, removed names removed. */
export function headerEdits(rows: HeaderRow[]): HeaderEdits {
  const setHeaders: Record<string, string> = {};
  const removeHeaders: string[] = [];
  for (const r of rows) {
    if (r.lockedBecause) continue;
    const name = r.original === null ? r.name.trim() : r.name;
    if (r.original === null) {
      if (name !== "" && !r.removed) setHeaders[name] = r.value;
    } else if (r.removed) {
      if (!removeHeaders.includes(name)) removeHeaders.push(name);
    } else if (r.value !== r.original) {
      setHeaders[name] = r.value;
    }
  }
  return { setHeaders, removeHeaders };
}

export type PayloadKind = "json" | "text" | "binary";

/** The body edit as the server takes it (lib/repair/use-cases.ts), or undefined when the payload is left as it is. */
export type BodyEdit = { kind: "json" | "text"; text: string } | { kind: "file"; base64: string };

export function bodyEdit(
  kind: PayloadKind,
  initialText: string | null,
  text: string,
  fileBase64: string | null,
): BodyEdit | undefined {
  if (fileBase64 !== null) return { kind: "file", base64: fileBase64 };
  if (kind === "binary" || initialText === null || text === initialText) return undefined;
  return { kind, text };
}

/**
 * Whether the letter page's view of the payload is the whole payload, so that editing it as text
 * cannot drop the rest: a view read or printed only in part (its note says so) can only be
 * replaced by a file. A JSON view shown as raw text because of its depth is still whole.
 */
export function wholeText(
  view: { kind: "json" | "text" | "hex" | "hidden"; note: string | null } | null,
  bodySize: number,
  viewMaxBytes: number,
): boolean {
  if (!view || view.kind === "hex" || view.kind === "hidden" || bodySize > viewMaxBytes) return false;
  return view.note === null || /nested deeper/i.test(view.note);
}

/** Where the copy goes, in words. */
export function targetText(target: RedriveTarget, originQueue: string | null): string {
  if (target.kind === "queue") return target.name;
  return originQueue ? `its origin, ${originQueue}` : "its origin (as the broker recorded it)";
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * The archive filtered to the originals a repair archived: they are kept under the repair's
 * operation id (one letter's repair, or a group repair's job), so `operation` finds exactly them.
 * A copy's marker is only a header, which anyone publishing to the queue can set: one that is not
 * an operation id falls back to searching the connection's archive for the original's id.
 */
export function archivedOriginalHref(
  operationId: string,
  fallback: { connectionId: string; queue?: string | null; id?: string | null },
): string {
  if (UUID.test(operationId)) return archiveHref({ operation: operationId });
  const { connectionId, queue, id } = fallback;
  return archiveHref({ connectionId, ...(queue ? { queue } : {}), ...(id ? { q: id } : {}) });
}

/** A base64 string of a file's bytes (the server decodes it strictly). */
export function bytesToBase64(bytes: Uint8Array): string {
  let s = "";
  const CHUNK = 0x8000;
  for (let i = 0; i < bytes.length; i += CHUNK) s += String.fromCharCode(...bytes.subarray(i, i + CHUNK));
  return btoa(s);
}

/** The 0-based offset of a 1-based line and column in `text` (clamped), to put the caret on a JSON error. */
export function offsetOf(text: string, line: number, column: number): number {
  let offset = 0;
  for (let l = 1; l < line; l++) {
    const nl = text.indexOf("\n", offset);
    if (nl < 0) return text.length;
    offset = nl + 1;
  }
  return Math.min(text.length, offset + Math.max(0, column - 1));
}
