/**
 * A patch tried on a payload as a role sees it. Every answer a preview gives (does the
 * patch apply, what it changes, the diff) is worked out on the masked view (./masked-view), so it
 * cannot differ between a right and a wrong guess of a masked value; a value copied or moved from a
 * masked place stays masked where it lands. A patch that tests a masked value, or changes, removes
 * or reaches inside one, is refused outright (strict): its answer could only come from the real
 * value, and applied for real it would write or compare what the role never saw.
 */
import microdiff from "microdiff";
import { applyOperation, type Operation } from "fast-json-patch";
import { maskPayloadWithRules } from "@/lib/masking/engine";
import { HIDDEN } from "@/lib/masking/types";
import type { JsonDiffEntry, PayloadDiff } from "./diff-types";
import { parseLossless } from "./json-lossless";
import {
  cut,
  isPlainObject,
  MAX_DIFF_ENTRIES,
  MAX_VALUE_CHARS,
  type MaskedView,
  maskedView,
  NumberTokens,
  pointer,
  put,
  type Segment,
  segmentsOf,
  touches,
  type ViewMasking,
} from "./masked-view";
import { applyPatch, mergePatch, patchErrorReason, type PayloadPatch } from "./patch";

/** Deeper JSON is not compared structurally (microdiff recurses); the engine hides it whole anyway. */
const MAX_JSON_DEPTH = 64;

type Tried = { ok: true; after: unknown } | { ok: false; reason: string } | { ok: false; masked: string };

const clone = <T>(v: T): T => JSON.parse(JSON.stringify(v)) as T;
const enc = new TextEncoder();

type Located = { inside: true } | { inside: false; found: false } | { inside: false; found: true; value: unknown };

/** The value at `segs`, or that the path runs into a sentinel (a masked value's inside is not there to see). */
function locate(view: MaskedView, doc: unknown, segs: string[]): Located {
  let cur = doc;
  for (const s of segs) {
    if (view.isSentinel(cur)) return { inside: true };
    if (Array.isArray(cur)) {
      if (!/^(0|[1-9]\d*)$/.test(s) || Number(s) >= cur.length) return { inside: false, found: false };
      cur = cur[Number(s)];
    } else if (isPlainObject(cur)) {
      if (!Object.hasOwn(cur, s)) return { inside: false, found: false };
      cur = cur[s];
    } else return { inside: false, found: false };
  }
  return { inside: false, found: true, value: cur };
}

/** Why an operation may not run on this view, or null. */
function maskedTouch(view: MaskedView, doc: unknown, op: Record<string, unknown>, i: number): string | null {
  const name = String(op.op);
  const path = String(op.path ?? "");
  const which = `Operation ${i + 1} (${name} ${path || "/"})`;
  const changes = `${which} would change or remove a value that masking hides from your role.`;
  const segs = segmentsOf(path);
  const at = locate(view, doc, segs);
  if (name === "test") {
    if (at.inside || (at.found && view.containsSentinel(at.value)))
      return `${which} compares a value that masking hides from your role.`;
    return null;
  }
  if (name === "copy" || name === "move") {
    const from = locate(view, doc, segmentsOf(String(op.from ?? "")));
    if (from.inside)
      return `Operation ${i + 1} (${name} from ${String(op.from)}) reads inside a value that masking hides whole from your role.`;
  }
  if (name === "replace" || name === "remove") {
    if (at.inside || (at.found && view.containsSentinel(at.value))) return changes;
    return null;
  }
  // add, and the target of copy and move: into a masked value, or over one.
  if (segs.length === 0) return view.containsSentinel(doc) ? changes : null;
  const parent = locate(view, doc, segs.slice(0, -1));
  if (parent.inside || (parent.found && view.isSentinel(parent.value))) return changes;
  if (parent.found && isPlainObject(parent.value)) {
    const key = segs[segs.length - 1];
    if (Object.hasOwn(parent.value, key) && view.containsSentinel(parent.value[key])) return changes;
  }
  return null;
}

/**
 * Why a merge patch may not run on this view, or null (RFC 7396: a non-object replaces the target,
 * null removes a member, an object merges into the target or replaces a non-object with one).
 */
function mergeTouch(view: MaskedView, target: unknown, patch: unknown, path: Segment[]): string | null {
  const changes = `The merge patch would change or remove ${pointer(path) || "the whole payload"}, which holds a value that masking hides from your role.`;
  if (!isPlainObject(patch) || !isPlainObject(target) || view.isSentinel(target))
    return view.containsSentinel(target) ? changes : null;
  for (const k of Object.keys(patch)) {
    if (!Object.hasOwn(target, k)) continue;
    const why = mergeTouch(view, target[k], patch[k], [...path, k]);
    if (why) return why;
  }
  return null;
}

/**
 * The patch applied to the view's document. Strict: an operation that touches a masked value is
 * refused (`masked`). Lenient (for the record of a repair already made): tests are skipped, since
 * they were checked on the real payload, and everything else is applied as it comes.
 */
function patchView(view: MaskedView, patch: PayloadPatch, strict: boolean): Tried {
  let doc = clone(view.doc);
  if (patch.kind === "merge-patch") {
    if (strict) {
      const why = mergeTouch(view, doc, patch.patch, []);
      if (why) return { ok: false, masked: why };
    }
    return { ok: true, after: mergePatch(doc, clone(patch.patch)) };
  }
  const ops = clone(patch.operations) as Array<Record<string, unknown>>;
  for (let i = 0; i < ops.length; i++) {
    const op = ops[i];
    if (strict) {
      const why = maskedTouch(view, doc, op, i);
      if (why) return { ok: false, masked: why };
    } else if (op.op === "test") continue;
    try {
      doc = applyOperation(doc, op as unknown as Operation, true, true, true, i).newDocument;
    } catch (e) {
      return { ok: false, reason: patchErrorReason(e) };
    }
  }
  return { ok: true, after: doc };
}

const MARK = "\u0001masked:";
const MARKED = new RegExp(`^${MARK}(\\d+)$`);

/**
 * The patched view as the role sees it: sentinels as they showed where they came from, and
 * everything else masked again by the rules where it now is (a value written under a masked name,
 * a card number typed into a note). Returns the rendition and the paths it masks.
 */
function renderAfter(
  view: MaskedView,
  after: unknown,
  mask: ViewMasking,
): { value: unknown; maskedPaths: Segment[][] } | null {
  const sentinels: unknown[] = [];
  const marked = (v: unknown): unknown => {
    if (view.isSentinel(v)) {
      sentinels.push(v);
      return `${MARK}${sentinels.length - 1}`;
    }
    if (Array.isArray(v)) return v.map(marked);
    if (isPlainObject(v)) {
      const out: Record<string, unknown> = {};
      for (const k of Object.keys(v)) put(out, k, marked(v[k]));
      return out;
    }
    return v;
  };
  const text = view.tokens.stringify(marked(after));
  const bytes = new TextEncoder().encode(text);
  const m = maskPayloadWithRules(bytes, "application/json", mask.rules, mask.hashKey, {
    maxChars: text.length * 32 + 4096,
  });
  const maskedPaths: Segment[][] = [];
  if (m.kind === "original") return { value: view.render(after), maskedPaths };
  if (m.kind !== "json" || m.truncated || m.text === null) return null;
  const doc = parseLossless(m.text);
  const shown = view.tokens.adopt(doc, doc.value);
  const unmark = (v: unknown): unknown => {
    if (typeof v === "string") {
      const hit = MARKED.exec(v);
      return hit ? view.shownOf(sentinels[Number(hit[1])]) : v;
    }
    if (Array.isArray(v)) return v.map(unmark);
    if (isPlainObject(v)) {
      const out: Record<string, unknown> = {};
      for (const k of Object.keys(v)) put(out, k, unmark(v[k]));
      return out;
    }
    return v;
  };
  const walk = (e: unknown, t: unknown, path: Segment[]): unknown => {
    if (view.isSentinel(t)) {
      maskedPaths.push(path);
      return view.shownOf(t);
    }
    if (Array.isArray(e) && Array.isArray(t) && e.length === t.length)
      return e.map((x, i) => walk(x, t[i], [...path, i]));
    if (isPlainObject(e) && isPlainObject(t)) {
      const out: Record<string, unknown> = {};
      for (const k of Object.keys(e)) {
        if (Object.hasOwn(t, k)) put(out, k, walk(e[k], t[k], [...path, k]));
        else {
          maskedPaths.push([...path, k]);
          put(out, k, unmark(e[k]));
        }
      }
      return out;
    }
    if (JSON.stringify(e) === JSON.stringify(t)) return e;
    maskedPaths.push(path);
    return unmark(e);
  };
  return { value: walk(shown, after, []), maskedPaths };
}

const depthOf = (v: unknown): number => {
  if (Array.isArray(v)) return 1 + v.reduce<number>((d, x) => Math.max(d, depthOf(x)), 0);
  if (isPlainObject(v)) return 1 + Object.keys(v).reduce((d, k) => Math.max(d, depthOf(v[k])), 0);
  return 0;
};

const WHOLE_HIDDEN: PayloadDiff = {
  kind: "json",
  entries: [{ op: "change", path: "", before: JSON.stringify(HIDDEN), after: JSON.stringify(HIDDEN), masked: true }],
  truncated: false,
};

/** The diff between the view and the patched view, both as the role sees them. */
function diffOf(view: MaskedView, after: unknown, mask: ViewMasking | null, size: number): PayloadDiff {
  if (depthOf(view.doc) > MAX_JSON_DEPTH || depthOf(after) > MAX_JSON_DEPTH) return WHOLE_HIDDEN;
  const before = view.render(view.doc);
  const shown = mask && mask.rules.length > 0 ? renderAfter(view, after, mask) : { value: after, maskedPaths: [] };
  if (!shown) return WHOLE_HIDDEN;
  const changes = microdiff({ r: before } as Record<string, unknown>, { r: shown.value } as Record<string, unknown>);
  if (changes.length === 0) return { kind: "unchanged", size };
  const text = (v: unknown) => cut(view.tokens.stringify(v), MAX_VALUE_CHARS);
  const entries: JsonDiffEntry[] = changes.slice(0, MAX_DIFF_ENTRIES).map((c) => {
    const path = c.path.slice(1);
    const e: JsonDiffEntry = {
      op: c.type === "CREATE" ? "add" : c.type === "REMOVE" ? "remove" : "change",
      path: pointer(path),
    };
    if (c.type !== "CREATE") {
      e.before = text(c.oldValue);
      if (touches(path, view.maskedPaths)) e.masked = true;
    }
    if (c.type !== "REMOVE") {
      e.after = text(c.value);
      if (touches(path, shown.maskedPaths)) e.masked = true;
    }
    return e;
  });
  return { kind: "json", entries, truncated: changes.length > MAX_DIFF_ENTRIES };
}

/**
 * Why a patch may not be tried at all, whatever the letters hold: it names a field by a name the
 * rules mask (a detector finds a card number or an e-mail address in it). Whether a letter has such
 * a field is hidden, so a patch naming one would answer for it, in the preview or in the run.
 */
export function patchNamesMasked(patch: PayloadPatch, mask: ViewMasking | null): string | null {
  if (!mask || mask.rules.length === 0) return null;
  const masked = (name: string) => {
    const probe = maskPayloadWithRules(
      enc.encode(`{${JSON.stringify(name)}:0}`),
      "application/json",
      mask.rules,
      mask.hashKey,
    );
    if (probe.kind !== "json" || probe.text === null) return true;
    return Object.keys(JSON.parse(probe.text) as object)[0] !== name;
  };
  if (patch.kind === "merge-patch") {
    const walk = (v: unknown, path: Segment[]): string | null => {
      if (!isPlainObject(v)) return null;
      for (const k of Object.keys(v)) {
        if (masked(k))
          return `The merge patch names a field (at ${pointer(path) || "the top"}) whose name masking hides from your role.`;
        const why = walk(v[k], [...path, k]);
        if (why) return why;
      }
      return null;
    };
    return walk(patch.patch, []);
  }
  for (const [i, raw] of patch.operations.entries()) {
    const op = raw as Record<string, unknown>;
    for (const field of ["path", "from"] as const) {
      if (typeof op[field] !== "string") continue;
      if (segmentsOf(op[field] as string).some(masked))
        return `Operation ${i + 1} (${String(op.op)}) names a field in its ${field} whose name masking hides from your role.`;
    }
  }
  return null;
}

/** A letter's answer to a patch, as a role sees it. */
export type MaskedPatchOutcome =
  | { ok: true; unchanged: boolean; diff: PayloadDiff | null }
  | { ok: false; reason: string; masked?: false }
  | { ok: false; reason: string; masked: true };

/**
 * Why a patch that applies to the view does not apply to the payload itself: it names a key the
 * rules masked by its masked name (patchNamesMasked refuses a patch naming one by its real name).
 */
const NAMES_A_MASKED_KEY =
  "The patch does not apply: it names a field whose name masking hides from your role, so it cannot be applied to this letter.";

/**
 * The patch tried on one payload as `mask` shows it (strict). `masked: true` when the patch tests
 * or changes a masked value; otherwise whether it applies, and (with `withDiff`) the diff, both from
 * the masked view only, so a right and a wrong guess get the same answer. Without rules the payload
 * is used as it is. Callers check patchNamesMasked once per patch first.
 */
export function tryPatchMasked(
  before: Uint8Array,
  patch: PayloadPatch,
  mask: ViewMasking | null,
  withDiff: boolean,
): MaskedPatchOutcome {
  const v = maskedView(before, mask);
  if (!v.ok) return { ok: false, reason: v.reason };
  const tried = patchView(v.view, patch, true);
  if (!tried.ok) return "masked" in tried ? { ok: false, reason: tried.masked, masked: true } : tried;
  // The view and the payload differ only where the rules masked something, and the strict checks
  // kept the patch away from those values: the payload refuses the patch only for a masked name.
  const real = applyPatch(before, patch);
  if (!real.ok) return { ok: false, reason: NAMES_A_MASKED_KEY };
  if (!withDiff) return { ok: true, unchanged: false, diff: null };
  const diff = diffOf(v.view, tried.after, mask, before.length);
  return { ok: true, unchanged: diff.kind === "unchanged", diff };
}

/**
 * The diff of a patch already applied (a repair's audit row), masked by provenance for `mask`:
 * what a patch copied from a masked value stays masked. Lenient: the patch ran on the real payload;
 * where it cannot be followed on the masked view, every value is hidden.
 */
export function maskedPatchDiff(before: Uint8Array, patch: PayloadPatch, mask: ViewMasking): PayloadDiff {
  const tokens = new NumberTokens();
  const v = maskedView(before, mask, tokens);
  if (!v.ok) return WHOLE_HIDDEN;
  const tried = patchView(v.view, patch, false);
  if (!tried.ok) return WHOLE_HIDDEN;
  return diffOf(v.view, tried.after, mask, before.length);
}
