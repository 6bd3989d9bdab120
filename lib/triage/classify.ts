import { compileSafeRegex, PatternError, type SafeRegex } from "@/lib/safe-regex";

/**
 * Transient-looking vs permanent-looking failures, from an ordered, admin-editable rule list.
 * Advisory only: it tells the operator whether a redrive is likely to succeed, never acts itself.
 */

export type Disposition = "transient" | "permanent" | "unknown";

export interface ClassificationRule {
  id: string;
  disposition: "transient" | "permanent";
  /** Case-insensitive regex source, RE2 syntax (lib/safe-regex.ts): no lookaround, no backreferences. */
  pattern: string;
  /** What it is matched against; "any" is the class, the message and the broker's reason. */
  field: "class" | "message" | "any";
  description: string;
}

const rule = (
  id: string,
  disposition: ClassificationRule["disposition"],
  field: ClassificationRule["field"],
  pattern: string,
  description: string,
): ClassificationRule => ({ id, disposition, field, pattern, description });

// Lock rules come before timeouts: "lock wait timeout" is a lock conflict.
// HTTP status codes survive normalizeMessage, so these rules work on raw and normalised messages alike.
const HTTP = String.raw`\b(?:HTTP(?:/\d(?:\.\d)?)?|status(?:[ _]?code)?|response code)[\s:=]{0,3}`;

/** Matched text is capped: RE2 is linear in it, so this bounds the time any rule can take. */
const MAX_CLASS = 300;
const MAX_TEXT = 1000;

export const DEFAULT_CLASSIFICATION_RULES: ClassificationRule[] = [
  rule(
    "transient.lock",
    "transient",
    "any",
    String.raw`deadlock|lock wait timeout|could not obtain lock|lock (?:conflict|contention|not available)|LockAcquisition|PessimisticLock|CannotAcquireLock|could not serialize access|serialization failure|OptimisticLock|StaleObjectState`,
    "Lock conflicts, deadlocks and serialization failures: retrying usually succeeds",
  ),
  rule(
    "transient.timeout",
    "transient",
    "any",
    String.raw`time[ds]?[ _-]?out|deadline exceeded|ETIMEDOUT|ESOCKETTIMEDOUT`,
    "Timeouts: the dependency was slow, not the message wrong",
  ),
  rule(
    "transient.connection",
    "transient",
    "any",
    String.raw`connection (?:was )?(?:refused|reset|closed|aborted|lost)|ECONNREFUSED|ECONNRESET|ECONNABORTED|EPIPE|broken pipe|socket hang up|ConnectException|NoRouteToHost|UnknownHostException|EAI_AGAIN|connection is not available`,
    "Connection refused, reset or lost",
  ),
  rule(
    "transient.http-unavailable",
    "transient",
    "any",
    String.raw`${HTTP}(?:502|503|504)\b|service unavailable|bad gateway|gateway time-?out|ServiceUnavailable|BadGateway`,
    "HTTP 502, 503, 504 from a dependency",
  ),
  rule(
    "transient.throttled",
    "transient",
    "any",
    String.raw`${HTTP}429\b|too many requests|TooManyRequests|throttl|rate[ _-]?limit|ProvisionedThroughputExceeded|RequestLimitExceeded|SlowDown`,
    "Throttling and rate limits (HTTP 429)",
  ),
  rule(
    "transient.unavailable",
    "transient",
    "any",
    String.raw`temporar(?:il)?y unavailable|currently unavailable|try again later|TransientException|SQLTransient|TransientError|EAGAIN|server (?:is )?busy|ServerBusy|LeaderNotAvailable|NotLeaderForPartition|NotEnoughReplicas|UnavailableException`,
    "Temporarily unavailable",
  ),
  rule(
    "permanent.null-dereference",
    "permanent",
    "any",
    String.raw`NullPointerException|NullReferenceException|Cannot read propert(?:y|ies) of (?:undefined|null)|Cannot set propert(?:y|ies) of (?:undefined|null)|undefined is not an object|null is not an object|nil pointer dereference|NoneType`,
    "Null dereference: a bug or a message missing a field",
  ),
  rule(
    "permanent.deserialization",
    "permanent",
    "any",
    String.raw`deseriali[sz]|unmarshal|JsonParse|JsonMapping|MismatchedInput|InvalidFormatException|UnrecognizedProperty|JSONDecodeError|Unexpected token|Unexpected end of JSON|is not valid JSON|SyntaxError|SerializationException|InvalidProtocolBuffer|Unknown magic byte|malformed|parse error|ParseException|could not parse|failed to parse|cannot parse`,
    "The payload could not be read",
  ),
  rule(
    "permanent.validation",
    "permanent",
    "any",
    String.raw`validation|ValidationError|MethodArgumentNotValid|schema|must not be (?:null|blank|empty)|missing required|required field|is required|invalid (?:payload|message|input|request|format|value|field)`,
    "Schema or validation failure: the message is wrong",
  ),
  rule(
    "permanent.constraint",
    "permanent",
    "any",
    String.raw`constraint|duplicate key|Duplicate entry|unique violation|foreign key|IntegrityError|DataIntegrityViolation`,
    "Database constraint violation",
  ),
  rule(
    "permanent.illegal-argument",
    "permanent",
    "any",
    String.raw`IllegalArgument|IllegalState|ArgumentException|ArgumentNullException|ArgumentOutOfRange|ValueError|InvalidArgument|invalid argument|RangeError`,
    "Illegal argument or state",
  ),
  rule(
    "permanent.unsupported",
    "permanent",
    "any",
    String.raw`unsupported|not supported|NotSupported|NotImplemented|unknown (?:type|event|message type|enum|variant|subtype)|unrecognized (?:type|event)|no handler (?:found|for)|ClassCastException|InvalidCastException|ClassNotFoundException`,
    "Unsupported or unknown type",
  ),
  rule(
    "permanent.http-client-error",
    "permanent",
    "any",
    String.raw`${HTTP}(?:400|422)\b|bad request|unprocessable (?:entity|content)|BadRequest|UnprocessableEntity`,
    "HTTP 400 or 422: the request will be rejected again",
  ),
];

/** Compiled patterns, or why the engine refuses one (the editor checks every rule as it is typed). */
const compiled = new Map<string, SafeRegex | PatternError>();
function compiledPattern(pattern: string): SafeRegex | PatternError {
  let re = compiled.get(pattern);
  if (re === undefined) {
    try {
      re = compileSafeRegex(pattern, { caseInsensitive: true });
    } catch (e) {
      if (!(e instanceof PatternError)) throw e;
      re = e;
    }
    if (compiled.size > 1000) compiled.clear();
    compiled.set(pattern, re);
  }
  return re;
}

/** A saved rule the engine refuses (written before it did) matches nothing rather than throwing. */
function regex(pattern: string): SafeRegex | null {
  const re = compiledPattern(pattern);
  return re instanceof PatternError ? null : re;
}

/** Checks a rule from admin input; throws an Error whose message says what is wrong. Returns a clean copy. */
export function validateRule(input: unknown): ClassificationRule {
  if (typeof input !== "object" || input === null || Array.isArray(input)) throw new Error("A rule must be an object");
  const r = input as Record<string, unknown>;
  if (typeof r.id !== "string" || !/^[\w.:-]{1,64}$/.test(r.id))
    throw new Error("Rule id must be 1-64 letters, digits, '.', ':', '_' or '-'");
  const at = `Rule "${r.id}"`;
  if (r.disposition !== "transient" && r.disposition !== "permanent")
    throw new Error(`${at}: disposition must be "transient" or "permanent"`);
  if (r.field !== "class" && r.field !== "message" && r.field !== "any")
    throw new Error(`${at}: field must be "class", "message" or "any"`);
  if (typeof r.description !== "string") throw new Error(`${at}: description must be a string`);
  if (typeof r.pattern !== "string" || !r.pattern.trim()) throw new Error(`${at}: pattern must be a non-empty string`);
  const re = compiledPattern(r.pattern);
  if (re instanceof PatternError) throw new Error(`${at}: ${re.message}`);
  if (re.test("")) throw new Error(`${at}: pattern matches the empty string, so it would match every letter`);
  return { id: r.id, disposition: r.disposition, pattern: r.pattern, field: r.field, description: r.description };
}

/**
 * Every rule can run against every letter: the list's total size (RE2's programSize, summed) bounds
 * the worst-case time per letter. The defaults total about 2,200.
 */
export const MAX_RULES_SIZE = 20_000;

/** Validates a whole list: each rule, ids unique (results name the rule that matched), total size bounded. */
export function validateRules(input: unknown): ClassificationRule[] {
  if (!Array.isArray(input)) throw new Error("Rules must be a list");
  const rules = input.map(validateRule);
  const seen = new Set<string>();
  let size = 0;
  for (const r of rules) {
    if (seen.has(r.id)) throw new Error(`Rule id "${r.id}" is used twice`);
    seen.add(r.id);
    size += regex(r.pattern)?.size ?? 0;
  }
  if (size > MAX_RULES_SIZE)
    throw new Error(
      `The patterns together are too large (${size} steps once repeats are counted out, at most ${MAX_RULES_SIZE}); remove rules, merge them, or use smaller repeat counts`,
    );
  return rules;
}

/**
 * First matching rule wins, in two passes: every rule against the exception class, then every rule
 * against the message and reason. The class is the stronger evidence: a NullPointerException whose
 * message mentions "timeout" is a bug, not a slow dependency. Within a pass, list order decides.
 */
export function classify(
  input: { exceptionClass: string | null; exceptionMessage: string | null; reason?: string | null },
  rules: ClassificationRule[] = DEFAULT_CLASSIFICATION_RULES,
): { disposition: Disposition; ruleId: string | null } {
  const cls = input.exceptionClass?.slice(0, MAX_CLASS) ?? "";
  if (cls) {
    const byClass = classPass(cls, rules);
    if (byClass) return byClass;
  }
  const text = [input.exceptionMessage, input.reason].filter(Boolean).join("\n").slice(0, MAX_TEXT);
  return (text && messagePass(text, rules)) || { disposition: "unknown", ruleId: null };
}

type Match = { disposition: Disposition; ruleId: string | null };

/**
 * The message pass, same answer as firstMatch(text, "message", rules) with fewer RE2 runs. Every
 * message differs (ids, numbers), so nothing can be cached per text, and running each rule in turn
 * cost a scan ~6 µs per letter (13 default rules, most not matching). Instead, prefix k is the
 * union of the first k+1 candidate rules: it matches exactly when one of them does, so one run says
 * whether any rule matches, and a binary search over the prefixes finds the first that does in
 * about log2(n) runs (~1.9 µs). Unions are compiled when first needed, once per distinct rule
 * list; if the engine refuses one (too large), that list runs its rules in turn, as before.
 */
interface MessagePlan {
  /** The rules a message is matched against, in list order (field message or any, pattern valid). */
  candidates: ClassificationRule[];
  prefixes: Array<SafeRegex | undefined>;
  /** A union could not be compiled: run the rules one by one. */
  inTurn: boolean;
}
const messagePlans = new WeakMap<ClassificationRule[], MessagePlan>();
const plansBySignature = new Map<string, MessagePlan>();

function messagePlan(rules: ClassificationRule[]): MessagePlan {
  const known = messagePlans.get(rules);
  if (known) return known;
  const candidates = rules.filter((r) => (r.field === "message" || r.field === "any") && regex(r.pattern) !== null);
  const signature = candidates.map((r) => `${r.id}\u0000${r.disposition}\u0000${r.pattern}`).join("\u0001");
  let plan = plansBySignature.get(signature);
  if (!plan) {
    plan = { candidates, prefixes: [], inTurn: false };
    if (plansBySignature.size >= 64) plansBySignature.clear();
    plansBySignature.set(signature, plan);
  }
  messagePlans.set(rules, plan);
  return plan;
}

/** Whether one of the plan's first k+1 candidates matches `text`; null when their union cannot be compiled. */
function prefixMatches(plan: MessagePlan, k: number, text: string): boolean | null {
  let re = plan.prefixes[k];
  if (re === undefined) {
    try {
      // Each rule in a group of its own: an inline flag in one rule stays in that rule.
      re = compileSafeRegex(
        plan.candidates
          .slice(0, k + 1)
          .map((r) => `(?:${r.pattern})`)
          .join("|"),
        { caseInsensitive: true, maxLength: Number.POSITIVE_INFINITY, maxProgramSize: Number.POSITIVE_INFINITY },
      );
    } catch (e) {
      if (!(e instanceof PatternError)) throw e;
      plan.inTurn = true;
      return null;
    }
    plan.prefixes[k] = re;
  }
  return re.test(text);
}

function messagePass(text: string, rules: ClassificationRule[]): Match | null {
  const plan = messagePlan(rules);
  const n = plan.candidates.length;
  if (n === 0) return null;
  if (!plan.inTurn) {
    const any = prefixMatches(plan, n - 1, text);
    if (any === false) return null;
    // The first k whose prefix matches: prefix k matches iff some rule at or before k does.
    let lo = 0;
    let hi = n - 1;
    while (any && lo < hi) {
      const mid = (lo + hi) >> 1;
      const m = prefixMatches(plan, mid, text);
      if (m === null) break;
      if (m) hi = mid;
      else lo = mid + 1;
    }
    if (!plan.inTurn) return { disposition: plan.candidates[lo].disposition, ruleId: plan.candidates[lo].id };
  }
  return firstMatch(text, "message", rules);
}

function firstMatch(value: string, field: ClassificationRule["field"], rules: ClassificationRule[]): Match | null {
  for (const r of rules) {
    if ((r.field === field || r.field === "any") && regex(r.pattern)?.test(value))
      return { disposition: r.disposition, ruleId: r.id };
  }
  return null;
}

/**
 * The class pass depends on the class and the rule list alone, and a DLQ holds few classes: kept
 * per rule list (a scan loads its list once), so a scan runs RE2 over each class once instead of
 * once per letter (about half the classification time of the bench's letters). Bounded.
 */
const classPasses = new WeakMap<ClassificationRule[], Map<string, Match | null>>();
const CLASS_PASS_ENTRIES = 4096;

function classPass(cls: string, rules: ClassificationRule[]): Match | null {
  let m = classPasses.get(rules);
  if (!m) {
    m = new Map();
    classPasses.set(rules, m);
  }
  let r = m.get(cls);
  if (r === undefined) {
    r = firstMatch(cls, "class", rules);
    if (m.size >= CLASS_PASS_ENTRIES) m.clear();
    m.set(cls, r);
  }
  return r;
}
