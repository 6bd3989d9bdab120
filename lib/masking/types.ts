import { z } from "zod";
import { ROLES, type Role } from "@/lib/auth/permissions";
import { checkGlob } from "@/lib/glob";

/**
 * Masking rules: what to mask (JSON fields, header names, or values a detector recognises), how
 * (hide, keep the last n characters, keyed hash) and for which roles. Pure types and validation;
 * shared by the engine, the store and the admin editor.
 */

export const DETECTORS = ["card", "email", "iban", "bearer", "jwt", "api-key"] as const;
export type Detector = (typeof DETECTORS)[number];

export const HIDDEN = "[hidden]";

const pattern = z.string().trim().min(1).max(200).superRefine(checkGlob());

export const maskTargetSchema = z.discriminatedUnion("kind", [
  /**
   * `$.card.number`, `$.items[*].pan` (from the root); `password`, `*.email`, `card.number` (a path
   * suffix, any depth, on into JSON held in strings). In text, the last name also finds
   * `"key": value`, `key=value` / `key: value` (form fields and dotted or bracketed names too),
   * and XML elements and attributes.
   */
  z.object({ kind: z.literal("field"), paths: z.array(pattern).min(1).max(50) }),
  /** Header and property names, case-insensitive; `*` and `?` are globs. Also `Name: value` lines of header dumps in text. */
  z.object({ kind: z.literal("header"), names: z.array(pattern).min(1).max(50) }),
  z.object({ kind: z.literal("detector"), detector: z.enum(DETECTORS) }),
]);

export const maskActionSchema = z.discriminatedUnion("kind", [
  z.object({ kind: z.literal("hide") }),
  z.object({ kind: z.literal("keep-last"), n: z.number().int().min(1).max(8) }),
  z.object({ kind: z.literal("hash") }),
]);

export const maskingRuleSchema = z.object({
  id: z.string().regex(/^[a-z0-9][a-z0-9._-]{0,63}$/, "use lowercase letters, digits, . _ - (at most 64)"),
  description: z.string().max(300).default(""),
  enabled: z.boolean().default(true),
  target: maskTargetSchema,
  action: maskActionSchema,
  roles: z.array(z.enum(ROLES)).min(1).max(ROLES.length),
});

/** A DLQ name glob (`payments.*`) on one connection, or on every connection ("*"). */
export const sensitiveDlqSchema = z.object({
  connectionId: z.string().trim().min(1).max(100),
  pattern: z.string().trim().min(1).max(200).superRefine(checkGlob()),
});

export type MaskTarget = z.infer<typeof maskTargetSchema>;
export type MaskAction = z.infer<typeof maskActionSchema>;
export type MaskingRule = z.infer<typeof maskingRuleSchema>;
export type SensitiveDlq = z.infer<typeof sensitiveDlqSchema>;

/** What the engine needs besides the rules: the key that makes hashes stable but not reversible by lookup. */
export interface MaskContext {
  rules: MaskingRule[];
  role: Role;
  hashKey: Uint8Array | string;
}

/** Throws an Error whose message names the rule and the problem. */
export function validateMaskingRules(input: unknown): MaskingRule[] {
  if (!Array.isArray(input)) throw new Error("The rules must be a list.");
  if (input.length > 200) throw new Error("At most 200 masking rules.");
  const seen = new Set<string>();
  return input.map((raw, i) => {
    const r = maskingRuleSchema.safeParse(raw);
    const label =
      typeof (raw as { id?: unknown })?.id === "string" ? `Rule "${(raw as { id: string }).id}"` : `Rule ${i + 1}`;
    if (!r.success)
      throw new Error(
        `${label}: ${r.error.issues.map((x) => `${x.path.join(".") || "rule"}: ${x.message}`).join("; ")}`,
      );
    if (seen.has(r.data.id)) throw new Error(`${label}: the id is used twice.`);
    seen.add(r.data.id);
    if (r.data.target.kind === "field") for (const p of r.data.target.paths) parseFieldPath(p);
    return r.data;
  });
}

export function validateSensitiveDlqs(input: unknown): SensitiveDlq[] {
  if (!Array.isArray(input)) throw new Error("The sensitive DLQs must be a list.");
  if (input.length > 500) throw new Error("At most 500 sensitive DLQ patterns.");
  return input.map((raw, i) => {
    const r = sensitiveDlqSchema.safeParse(raw);
    if (!r.success)
      throw new Error(
        `Sensitive DLQ ${i + 1}: ${r.error.issues.map((x) => `${x.path.join(".")}: ${x.message}`).join("; ")}`,
      );
    return r.data;
  });
}

/** A JSON path segment: an object key glob (`*` any key) or an array index (`*` any index). */
export type PathSegment = { key: string } | { index: number | "*" };
export interface FieldPath {
  /** `$`-rooted paths match from the root; others match the end of a path at any depth. */
  anchored: boolean;
  segments: PathSegment[];
}

/** Parses `$.a.b[0].c`, `$.items[*].pan`, `*.email`, `password`; throws on anything else. */
export function parseFieldPath(text: string): FieldPath {
  let s = text.trim();
  const anchored = s.startsWith("$");
  if (anchored) s = s.slice(1);
  const segments: PathSegment[] = [];
  let i = 0;
  if (!anchored && s && s[0] !== "[" && s[0] !== ".") s = `.${s}`;
  while (i < s.length) {
    if (s[i] === ".") {
      let j = i + 1;
      while (j < s.length && s[j] !== "." && s[j] !== "[") j++;
      const key = s.slice(i + 1, j);
      if (!key) throw new Error(`Path "${text}": empty field name.`);
      segments.push({ key });
      i = j;
    } else if (s[i] === "[") {
      const j = s.indexOf("]", i);
      if (j < 0) throw new Error(`Path "${text}": missing "]".`);
      const inner = s.slice(i + 1, j).trim();
      const quoted = /^(['"])(.*)\1$/.exec(inner);
      if (inner === "*") segments.push({ index: "*" });
      else if (/^\d{1,9}$/.test(inner)) segments.push({ index: Number(inner) });
      else if (quoted) segments.push({ key: quoted[2] });
      else throw new Error(`Path "${text}": use [n], [*] or ["name"] in brackets.`);
      i = j + 1;
    } else {
      throw new Error(`Path "${text}": expected "." or "[" at "${s.slice(i, i + 10)}".`);
    }
  }
  if (segments.length === 0 && !anchored) throw new Error(`Path "${text}" is empty.`);
  if (segments.length === 0) throw new Error(`Path "${text}": "$" alone would hide the whole payload; name a field.`);
  return { anchored, segments };
}
