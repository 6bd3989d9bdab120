import "server-only";
import { createHmac, hash } from "node:crypto";
import { derivedKey } from "@/lib/crypto/derived-keys";
import type { FailureInfo, Letter } from "@/lib/brokers/contract/letter";
import { displayText } from "@/lib/brokers/display";
import { encryptPayload, payloadAad, type Keyring } from "@/lib/crypto/payload-cipher";
import { maskedSearchText, type SearchMasking } from "./masked-search";
import {
  classify,
  groupKeyOf,
  receiveCountBucket,
  rootCauseOf,
  type ClassificationRule,
  type Disposition,
  type GroupKey,
} from "@/lib/triage";

/** Bytes of each payload kept (encrypted) in the index; larger payloads are stored cut, flagged. */
export const PAYLOAD_CAP_BYTES = 1024 * 1024;
/** Exception messages are kept to this many characters. */
export const MESSAGE_CAP = 4000;
/** Each header value in the index is cut to this many characters; at most HEADERS_MAX headers. */
export const HEADER_VALUE_CAP = 512;
export const HEADERS_MAX = 64;

/** One row of `triage_letters` as the batch upsert takes it. */
export interface IndexRow {
  letter_id: string;
  position: number;
  kafka_partition: number | null;
  kafka_offset: string | null;
  message_id: string | null;
  dead_lettered_at: string | null;
  /** Letter.retentionFrom: where the broker's retention clock started (SQS SentTimestamp). */
  retention_from?: string | null;
  reason: string | null;
  origin_queue: string | null;
  exception_class: string | null;
  exception_message: string | null;
  /** { role: message as that role sees it } where masking changes it (masked-search.ts). */
  exception_search: Record<string, string> | null;
  search_version: number | null;
  normalized_message: string | null;
  top_frame: string | null;
  group_key: string;
  group_label: string;
  group_basis: string;
  disposition: string;
  rule_id: string | null;
  receive_count: number | null;
  headers: Record<string, string>;
  body_size: number;
  sha256: string;
  fingerprint: string;
  /** The sealed payload (nonce, ciphertext, tag), as stored in payload_ciphertext. */
  payload: Uint8Array | null;
  payload_key_id: string | null;
  payload_truncated: boolean;
  handled_outcome: string | null;
}

/** Postgres text cannot hold NUL; cut long text. */
export function clean(s: string | null | undefined, cap = 10_000): string | null {
  if (s === null || s === undefined) return null;
  const t = s.includes("\u0000") ? s.replace(/\u0000/g, "\uFFFD") : s;
  return t.length > cap ? t.slice(0, cap) : t;
}

function headersOf(l: Letter): Record<string, string> {
  const out: Record<string, string> = {};
  for (let i = 0; i < l.headers.length && i < HEADERS_MAX; i++) {
    const h = l.headers[i];
    const name = clean(h.name, 200)!;
    out[name] = clean(displayText(h.value) ?? "", HEADER_VALUE_CAP)!;
  }
  return out;
}

function kafkaPosition(l: Letter): { partition: number | null; offset: string | null } {
  const p = displayText(l.properties.find((x) => x.name === "partition")?.value);
  const o = displayText(l.properties.find((x) => x.name === "offset")?.value);
  return p !== null && o !== null && /^\d+$/.test(p) && /^\d+$/.test(o)
    ? { partition: Number(p), offset: o }
    : { partition: null, offset: null };
}

/** Spring Kafka's DeadLetterPublishingRecoverer names the wrapper's direct cause here. */
export const CAUSE_FQCN_HEADER = "kafka_dlt-exception-cause-fqcn";

/** What failed, resolved to the root cause, and how it is classified. */
export interface ResolvedFailure {
  group: GroupKey;
  /** Root cause (what grouping, filters and classification use), else the header's class. */
  exceptionClass: string | null;
  /** The root cause's raw message, else the header's message. */
  exceptionMessage: string | null;
  /** The outermost class (the header's) when it differs from the root cause, e.g. ListenerExecutionFailedException. */
  wrapperClass: string | null;
  disposition: Disposition;
  ruleId: string | null;
}

const blank = (s: string | null | undefined) => (s?.trim() ? s.trim() : null);

/** "…; nested exception is com.foo.X: msg" (Spring before 6) → "msg" when the cause is `cls`. */
function nestedMessage(message: string | null, cls: string): string | null | undefined {
  const marker = `nested exception is ${cls}`;
  const i = message?.lastIndexOf(marker) ?? -1;
  if (!message || i < 0) return undefined;
  return blank(message.slice(i + marker.length).replace(/^:\s?/, ""));
}

/**
 * Resolves a letter's failure to its root cause: the stack's cause chain (via groupKeyOf), else
 * Spring Kafka's cause header, else the header's exception. Pure; cached by scanFailureResolver.
 */
export function resolveFailure(
  f: Pick<FailureInfo, "exceptionClass" | "exceptionMessage" | "stackTrace" | "reason" | "count" | "wrapperClass">,
  causeFqcn: string | null,
  rules: ClassificationRule[] | undefined,
): ResolvedFailure {
  let g = groupKeyOf({
    exceptionClass: f.exceptionClass,
    exceptionMessage: f.exceptionMessage,
    stackTrace: f.stackTrace,
    reason: f.reason,
    count: f.count,
  });
  const headerClass = blank(f.exceptionClass);
  const headerMessage = blank(f.exceptionMessage);
  let exceptionMessage: string | null = headerMessage;
  let wrapperClass = g.wrapperClass;
  const cause = blank(causeFqcn);
  if (g.basis === "exception" && g.wrapperClass) {
    // The stack's chain (or a folded "nested exception is") named a deeper class: take its raw message.
    const root = rootCauseOf(f.stackTrace);
    if (root?.exceptionClass === g.exceptionClass && (root.depth ?? 0) > 1) {
      exceptionMessage = headerClass === root.exceptionClass && headerMessage ? headerMessage : blank(root.message);
    } else {
      const nested = g.exceptionClass ? nestedMessage(headerMessage, g.exceptionClass) : undefined;
      exceptionMessage = nested !== undefined ? nested : headerMessage;
    }
  } else if (g.basis === "exception" && cause && headerClass && cause !== headerClass && cause !== g.exceptionClass) {
    // No cause chain in the stack, but the Spring header names the cause: group and classify by it.
    const nested = nestedMessage(headerMessage, cause);
    exceptionMessage = nested !== undefined ? nested : headerMessage;
    g = groupKeyOf({
      exceptionClass: cause,
      exceptionMessage,
      stackTrace: f.stackTrace,
      reason: f.reason,
      count: f.count,
    });
    wrapperClass = headerClass;
  }
  const exceptionClass = g.exceptionClass ?? headerClass;
  // The adapter already named the cause and its wrapper (Spring Kafka): the wrapper is the letter's.
  if (!wrapperClass && blank(f.wrapperClass) && blank(f.wrapperClass) !== exceptionClass)
    wrapperClass = blank(f.wrapperClass);
  const c = classify({ exceptionClass, exceptionMessage, reason: f.reason }, rules);
  return { group: g, exceptionClass, exceptionMessage, wrapperClass, disposition: c.disposition, ruleId: c.ruleId };
}

/**
 * Most DLQs hold few failure shapes, and redriven letters come back with the very same headers:
 * a bounded LRU (entries and key length) over the raw failure skips parsing and normalising again.
 * One cache per rule list (a scan loads its rules once), dropped with it.
 *
 * Where messages carry ids (order numbers, UUIDs) no two failures are equal and every lookup
 * misses: building the key and churning the LRU then cost ~3 µs per letter for nothing (0 hits in
 * 50,000 on the bench's letters). So each cache watches its hit rate: after a window of lookups
 * with fewer than a quarter hits, it is bypassed for the next BYPASS letters, then tried again.
 */
const CACHE_ENTRIES = 2048;
const CACHE_KEY_MAX = 8192;
const WINDOW = 256;
const MIN_HITS = WINDOW / 4;
const BYPASS = 4096;

interface FailureCache {
  entries: Map<string, ResolvedFailure>;
  lookups: number;
  hits: number;
  /** Letters left to resolve without the cache. */
  bypass: number;
}
const caches = new WeakMap<object, FailureCache>();
const NO_RULES = {};

export function cachedResolveFailure(
  f: FailureInfo,
  causeFqcn: string | null,
  rules: ClassificationRule[] | undefined,
): ResolvedFailure {
  let cache = caches.get(rules ?? NO_RULES);
  if (!cache) {
    cache = { entries: new Map(), lookups: 0, hits: 0, bypass: 0 };
    caches.set(rules ?? NO_RULES, cache);
  }
  if (cache.bypass > 0) {
    cache.bypass--;
    return resolveFailure(f, causeFqcn, rules);
  }
  const key = JSON.stringify([
    f.exceptionClass,
    f.exceptionMessage,
    f.stackTrace,
    f.reason,
    receiveCountBucket(f.count),
    causeFqcn,
    f.wrapperClass ?? null,
  ]);
  if (key.length > CACHE_KEY_MAX) return resolveFailure(f, causeFqcn, rules);
  if (++cache.lookups === WINDOW) {
    if (cache.hits < MIN_HITS) cache.bypass = BYPASS;
    cache.lookups = cache.hits = 0;
  }
  const { entries } = cache;
  const hit = entries.get(key);
  if (hit) {
    cache.hits++;
    entries.delete(key);
    entries.set(key, hit); // most recently used last
    return hit;
  }
  const r = resolveFailure(f, causeFqcn, rules);
  if (entries.size >= CACHE_ENTRIES) entries.delete(entries.keys().next().value!);
  entries.set(key, r);
  return r;
}

/** For tests: how a rule list's cache is doing. */
export function failureCacheStats(rules: ClassificationRule[] | undefined): { size: number; bypass: number } | null {
  const c = caches.get(rules ?? NO_RULES);
  return c ? { size: c.entries.size, bypass: c.bypass } : null;
}

function lastHeaderText(l: Letter, name: string): string | null {
  for (let i = l.headers.length - 1; i >= 0; i--)
    if (l.headers[i].name === name) return displayText(l.headers[i].value);
  return null;
}

/**
 * The group key as stored and shown: the grouping digest (class, normalised message, top frame)
 * keyed with a server key. The normalised message can still hold a value masking hides (an
 * unquoted `password=…`), and an unkeyed digest shown beside the masked label would let a role
 * check guesses of it. Memoised: a DLQ has few groups, and a scan keys every letter's.
 */
const keyedGroups = new Map<string, string>();
function keyedGroupKey(raw: string): string {
  let k = keyedGroups.get(raw);
  if (k === undefined) {
    if (keyedGroups.size >= 4096) keyedGroups.clear();
    k = createHmac("sha256", derivedKey("triage group key v1")).update(raw).digest("hex").slice(0, 32);
    keyedGroups.set(raw, k);
  }
  return k;
}

export function toIndexRow(
  l: Letter,
  ctx: {
    connectionId: string;
    queue: string;
    rules: ClassificationRule[] | undefined;
    ring: Keyring;
    randomAccess: boolean;
    search: SearchMasking;
  },
): IndexRow {
  const f = l.failure;
  const r = cachedResolveFailure(f, lastHeaderText(l, CAUSE_FQCN_HEADER), ctx.rules);
  const g = r.group;
  const groupKey = keyedGroupKey(g.key);
  const sealed = encryptPayload(l.body, payloadAad(ctx.connectionId, ctx.queue, l.id), ctx.ring);
  const pos = ctx.randomAccess ? kafkaPosition(l) : { partition: null, offset: null };
  const message = clean(r.exceptionMessage, MESSAGE_CAP);
  return {
    letter_id: l.id,
    position: l.position,
    kafka_partition: pos.partition,
    kafka_offset: pos.offset,
    message_id: clean(l.messageId, 1000),
    dead_lettered_at: f.deadLetteredAt,
    retention_from: l.retentionFrom ?? null,
    reason: clean(f.reason, 200),
    origin_queue: clean(f.originQueue, 1000),
    // The root cause: what the groups, the class filter and classification use. The header's own
    // class and message (the wrapper's, for Spring) stay in `headers` as the broker gave them.
    exception_class: clean(r.exceptionClass, 500),
    exception_message: message,
    exception_search: maskedSearchText(message, ctx.search),
    search_version: ctx.search.version,
    normalized_message: clean(g.normalizedMessage, MESSAGE_CAP),
    top_frame: clean(g.topFrame, 1000),
    group_key: groupKey,
    group_label: clean(g.label, 1000)!,
    group_basis: g.basis,
    disposition: r.disposition,
    rule_id: r.ruleId,
    receive_count: f.count,
    headers: headersOf(l),
    body_size: l.bodySize,
    sha256: l.sha256,
    // Same payload failing the same way: recognises a letter that came back after a redrive.
    fingerprint: hash("sha256", `${groupKey}\n${l.sha256}`, "hex").slice(0, 32),
    payload: sealed.data,
    payload_key_id: sealed.keyId,
    payload_truncated: l.bodyTruncated,
    handled_outcome: l.handled?.outcome ?? null,
  };
}

/** Rough bytes a row adds to a batch, to bound a batch's memory as well as its length. */
export function rowWeight(r: IndexRow): number {
  return (r.payload?.length ?? 0) + (r.exception_message?.length ?? 0) + 1024;
}

/** Header names, in order of preference, that name the producer or consumer version of a letter. */
export const VERSION_HEADERS = [
  "x-app-version",
  "app-version",
  "x-producer-version",
  "x-consumer-version",
  "x-service-version",
  "__connect.errors.connector.name",
  "kafka_dlt-original-consumer-group",
] as const;
