/**
 * One patch applied to many letters (a group repair): RFC 6902 JSON Patch through
 * fast-json-patch (pointer escaping, "-", move/copy/test, and its guard against `__proto__` paths
 * are the solved problem), RFC 7396 JSON Merge Patch by hand (a dozen lines of the RFC's own
 * pseudo-code). Documents are parsed by ./json-lossless, so numbers the patch does not touch keep
 * their exact tokens; the result is written with the original's indentation. A patch that does not
 * apply to a letter gives that letter's reason; it never throws.
 */
import {
  applyPatch as applyJsonPatch,
  JsonPatchError,
  validate as validateJsonPatch,
  type Operation,
} from "fast-json-patch";
import { z } from "zod";
import { decodeUtf8 } from "@/lib/text";
import { indentOf, parseLossless } from "./json-lossless";

export type PayloadPatch = { kind: "json-patch"; operations: unknown[] } | { kind: "merge-patch"; patch: unknown };

export type PatchOutcome = { ok: true; bytes: Uint8Array; changed: boolean } | { ok: false; reason: string };

/**
 * Bytes a patch produced remember the patch and the bytes it was applied to, for as long as the
 * bytes live: a diff of them (a preview's, a repair job's audit row) then masks values by where
 * they came from (lib/repair/masked-patch.ts), whichever code asks for it.
 */
const producedBy = new WeakMap<Uint8Array, { before: Uint8Array; patch: PayloadPatch }>();

/** The patch that produced these bytes by applyPatch, and what it was applied to; null for any other bytes. */
export function patchBehind(after: Uint8Array): { before: Uint8Array; patch: PayloadPatch } | null {
  return producedBy.get(after) ?? null;
}

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === "object" && !Array.isArray(v);

/** Own-property write: a "__proto__" key in a patch is data, never the object's prototype. */
function put(target: Record<string, unknown>, key: string, value: unknown) {
  Object.defineProperty(target, key, { value, writable: true, enumerable: true, configurable: true });
}

/** RFC 7396, section 2. */
export function mergePatch(target: unknown, patch: unknown): unknown {
  if (!isObject(patch)) return patch;
  const out: Record<string, unknown> = isObject(target) ? target : {};
  for (const key of Object.keys(patch)) {
    const value = patch[key];
    if (value === null) delete out[key];
    else put(out, key, mergePatch(Object.hasOwn(out, key) ? out[key] : undefined, value));
  }
  return out;
}

const REASONS: Partial<Record<string, string>> = {
  TEST_OPERATION_FAILED: "its test does not match this letter",
  OPERATION_PATH_UNRESOLVABLE: "the path does not exist in this letter",
  OPERATION_FROM_UNRESOLVABLE: "the 'from' path does not exist in this letter",
  OPERATION_PATH_CANNOT_ADD: "the parent of the path does not exist in this letter",
  OPERATION_PATH_ILLEGAL_ARRAY_INDEX: "the array index is not a number",
  OPERATION_VALUE_OUT_OF_BOUNDS: "the array index is past the end of the array",
};

/**
 * The payload with the patch applied, or why it does not apply to this letter. The payload must be
 * JSON (UTF-8); a JSON Patch applies whole or not at all.
 */
export function applyPatch(payload: Uint8Array, patch: PayloadPatch): PatchOutcome {
  const text = decodeUtf8(payload);
  if (text === null) return { ok: false, reason: "The payload is not UTF-8 text, so a JSON patch cannot apply to it." };
  let doc: ReturnType<typeof parseLossless>;
  try {
    doc = parseLossless(text);
  } catch {
    return { ok: false, reason: "The payload is not JSON, so a JSON patch cannot apply to it." };
  }
  let result: unknown;
  if (patch.kind === "merge-patch") {
    result = mergePatch(doc.value, patch.patch);
  } else {
    try {
      // Validated, applied to the freshly parsed copy (mutated: no JSON round trip), prototype paths
      // refused; the operations cloned, since the library writes values into them.
      const ops = JSON.parse(JSON.stringify(patch.operations)) as Operation[];
      result = applyJsonPatch(doc.value, ops, true, true, true).newDocument;
    } catch (e) {
      return { ok: false, reason: patchErrorReason(e) };
    }
  }
  const out = doc.stringify(result, indentOf(text) || undefined);
  const bytes = new TextEncoder().encode(out);
  producedBy.set(bytes, { before: payload, patch });
  return { ok: true, bytes, changed: out !== text };
}

/** Why a JSON Patch did not apply, in the operator's words (the library's error, or a refused prototype path). */
export function patchErrorReason(e: unknown): string {
  if (e instanceof JsonPatchError) {
    const op = (e.operation ?? {}) as { op?: string; path?: string };
    const which =
      e.index !== undefined ? `operation ${e.index + 1}${op.op ? ` (${op.op} ${op.path ?? ""})` : ""}` : "the patch";
    return `The patch does not apply: ${which}: ${REASONS[e.name] ?? e.message.split("\n")[0]}.`;
  }
  return `The patch does not apply: ${(e as Error).message.split("\n")[0]}.`;
}

/**
 * What the audit log records of a patch: its operations and the paths they name, never their
 * values (a value written or tested may be as sensitive as the payload). A merge patch's paths are
 * the pointers it sets or removes.
 */
export function patchSummary(patch: PayloadPatch): Record<string, unknown> {
  if (patch.kind === "json-patch") {
    return {
      kind: "json-patch",
      operations: patch.operations.slice(0, MAX_SUMMARY_PATHS).map((raw) => {
        const o = raw as { op?: unknown; path?: unknown; from?: unknown };
        return { op: o.op, path: o.path, ...(o.from !== undefined ? { from: o.from } : {}) };
      }),
    };
  }
  const paths: Array<{ op: "set" | "remove"; path: string }> = [];
  const walk = (v: unknown, at: string) => {
    if (paths.length >= MAX_SUMMARY_PATHS) return;
    if (!isObject(v)) {
      paths.push({ op: v === null ? "remove" : "set", path: at });
      return;
    }
    for (const k of Object.keys(v)) walk(v[k], `${at}/${k.replace(/~/g, "~0").replace(/\//g, "~1")}`);
  };
  walk(patch.patch, "");
  return { kind: "merge-patch", paths };
}

const MAX_SUMMARY_PATHS = 200;

/** A patch's JSON text is kept with the plan and applied to every letter: bounded like a payload edit's form. */
const MAX_PATCH_CHARS = 64 * 1024;
const boundedJson = (v: unknown) => {
  try {
    return (JSON.stringify(v) ?? "").length <= MAX_PATCH_CHARS;
  } catch {
    return false;
  }
};

/**
 * The same payload change for every letter (group repair): RFC 6902 JSON Patch
 * operations, or an RFC 7396 JSON merge patch (lib/repair/patch.ts applies either). A JSON Patch
 * is checked as a patch here (ops, paths, values), so a malformed one is refused before anything
 * is counted, not found letter by letter.
 */
/** What a patch's values read as for a role that may not repair (`patchWithoutValues`). */
export const HIDDEN_PATCH_VALUE = "[hidden]";

/**
 * A repair patch as a role that may not repair letters sees it: its operations, paths and shape,
 * every value it writes or tests hidden. The values an operator typed into a patch can be as
 * sensitive as the payload they edit (a corrected card number, an e-mail address).
 */
export function patchWithoutValues(patch: PayloadPatch): PayloadPatch {
  if (patch.kind === "json-patch")
    return {
      kind: "json-patch",
      operations: patch.operations.map((o) => {
        const op = o as Record<string, unknown>;
        return "value" in op ? { ...op, value: HIDDEN_PATCH_VALUE } : { ...op };
      }),
    };
  const hide = (v: unknown): unknown =>
    v !== null && typeof v === "object" && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v).map(([k, x]) => [k, hide(x)]))
      : v === null
        ? null // a merge patch's null removes the field: keep what the patch does, it is not a value
        : HIDDEN_PATCH_VALUE;
  return { kind: "merge-patch", patch: hide(patch.patch) };
}

export const payloadPatchSchema = z
  .discriminatedUnion("kind", [
    z
      .object({
        kind: z.literal("json-patch"),
        operations: z.array(z.record(z.string(), z.unknown())).min(1).max(1000),
      })
      .superRefine((p, ctx) => {
        // The library's own "_get" reads a value into the operation: not RFC 6902, and never wanted here.
        const get = p.operations.findIndex((o) => o.op === "_get");
        if (get >= 0) {
          ctx.addIssue({ code: "custom", path: ["operations", get], message: "not a JSON Patch operation (_get)" });
          return;
        }
        const e = validateJsonPatch(p.operations as unknown as Operation[]);
        if (e)
          ctx.addIssue({
            code: "custom",
            path: ["operations", ...(e.index !== undefined ? [e.index] : [])],
            message: `not a valid JSON Patch operation (${e.name})`,
          });
      }),
    z.object({
      kind: z.literal("merge-patch"),
      patch: z.unknown().refine((v) => v !== undefined, "a merge patch is required"),
    }),
  ])
  .refine((p) => boundedJson(p), `The patch must stay under ${MAX_PATCH_CHARS} characters of JSON.`);
