/**
 * The group repair's patch as the admin types it (pure, client-safe): JSON text read into the
 * patch the redrive plan carries (lib/redrive/plan.ts), or where the text stops being JSON (the
 * same line and column the single-letter repair editor names: lib/repair/json-syntax.ts).
 */
import { jsonSyntaxError } from "@/lib/repair/json-syntax";

export type PatchKind = "json-patch" | "merge-patch";

export type PayloadPatch =
  | { kind: "json-patch"; operations: Array<Record<string, unknown>> }
  | { kind: "merge-patch"; patch: unknown };

export type PatchRead =
  | { ok: true; patch: PayloadPatch }
  | { ok: false; message: string; line?: number; column?: number };

/**
 * The patch the text stands for, or why not: a JSON error with its line and column; a JSON Patch
 * must be a non-empty array of operation objects. The server checks each operation again.
 */
export function readPatch(kind: PatchKind, text: string): PatchRead {
  if (text.trim() === "")
    return {
      ok: false,
      message:
        kind === "json-patch" ? "Enter a JSON Patch: an array of operations." : "Enter a JSON merge patch: an object.",
    };
  const err = jsonSyntaxError(text);
  if (err)
    return {
      ok: false,
      message: `The patch is not valid JSON at line ${err.line}, column ${err.column}: ${err.message.replace(/\.$/, "")}.`,
      line: err.line,
      column: err.column,
    };
  const value: unknown = JSON.parse(text);
  if (kind === "merge-patch") return { ok: true, patch: { kind, patch: value } };
  if (!Array.isArray(value) || value.length === 0)
    return {
      ok: false,
      message:
        'A JSON Patch (RFC 6902) is an array of operations, such as [{"op":"replace","path":"/status","value":"PAID"}].',
    };
  const bad = value.findIndex(
    (o) => o === null || typeof o !== "object" || Array.isArray(o) || typeof (o as { op?: unknown }).op !== "string",
  );
  if (bad >= 0) return { ok: false, message: `Operation ${bad + 1} is not an operation object with an "op".` };
  return { ok: true, patch: { kind, operations: value as Array<Record<string, unknown>> } };
}
