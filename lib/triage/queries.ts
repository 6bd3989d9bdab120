import "server-only";
import { decryptPayload, payloadAad } from "@/lib/crypto/payload-cipher";
import { getDb } from "@/lib/db";
import { AppError } from "@/lib/errors";
import type { PrismaClient } from "@/lib/generated/prisma/client";
import { classify, detectBurst, type ClassificationRule } from "@/lib/triage";
import { keyedDigestFingerprint, keyedDigestPads, keyedDigestQuery, keyedDigestSql } from "@/lib/masking/digest";
import { headerCountState, queryHeaderGroupsKept, requestHeaderCount } from "./header-stats";
import type { SearchScope } from "./masked-search";

/**
 * Reads of the triage index. All SQL over indexed columns; lists page by keyset on
 * (arrived_at, id) newest first, never OFFSET.
 */

export interface LetterFilter {
  connectionId: string;
  queue: string;
  groupKey?: string;
  exceptionClass?: string;
  reason?: string;
  origin?: string;
  /** Inclusive bounds on arrival (dead-lettered time, else first seen). */
  from?: Date;
  to?: Date;
  /** Exact header value (JSONB containment, GIN-indexed). */
  header?: { name: string; value: string };
  /**
   * Substring of the exception class or message (case-insensitive), or an exact letter id,
   * message id or SHA-256. Payloads are encrypted, so their text is not searchable.
   */
  text?: string;
  /** Include letters a scan found gone (kept for the retention period). Default false. */
  includeGone?: boolean;
  /** Exactly this letter (server-side lookups; not a search the pages offer). */
  letterId?: string;
  /**
   * Whose eyes `text` and `header` are evaluated with (set by `scopedFilter` from the role's
   * masking policy, never by the client): required when either is present.
   */
  search?: SearchScope;
}

export interface IndexedLetter {
  letterId: string;
  position: number;
  kafkaPartition: number | null;
  kafkaOffset: string | null;
  messageId: string | null;
  arrivedAt: string;
  deadLetteredAt: string | null;
  /** Letter.retentionFrom: when the broker's retention clock started (SQS: SentTimestamp, the send). */
  retentionFrom: string | null;
  firstSeenAt: string;
  lastSeenAt: string;
  goneAt: string | null;
  reason: string | null;
  originQueue: string | null;
  exceptionClass: string | null;
  exceptionMessage: string | null;
  groupKey: string;
  groupLabel: string;
  /** As classified when last scanned. */
  disposition: string;
  ruleId: string | null;
  receiveCount: number | null;
  headers: Record<string, string>;
  bodySize: number;
  sha256: string;
  fingerprint: string;
  payloadTruncated: boolean;
  handledOutcome: string | null;
}

type Row = Record<string, unknown>;
const iso = (v: unknown) => (v === null || v === undefined ? null : new Date(v as string | Date).toISOString());

function toLetter(r: Row): IndexedLetter {
  return {
    letterId: r.letter_id as string,
    position: Number(r.position),
    kafkaPartition: r.kafka_partition === null ? null : Number(r.kafka_partition),
    kafkaOffset: r.kafka_offset === null ? null : String(r.kafka_offset),
    messageId: (r.message_id as string) ?? null,
    arrivedAt: iso(r.arrived_at)!,
    deadLetteredAt: iso(r.dead_lettered_at),
    retentionFrom: iso(r.retention_from),
    firstSeenAt: iso(r.first_seen_at)!,
    lastSeenAt: iso(r.last_seen_at)!,
    goneAt: iso(r.gone_at),
    reason: (r.reason as string) ?? null,
    originQueue: (r.origin_queue as string) ?? null,
    exceptionClass: (r.exception_class as string) ?? null,
    exceptionMessage: (r.exception_message as string) ?? null,
    groupKey: r.group_key as string,
    groupLabel: r.group_label as string,
    disposition: r.disposition as string,
    ruleId: (r.rule_id as string) ?? null,
    receiveCount: r.receive_count === null ? null : Number(r.receive_count),
    headers: (typeof r.headers === "string" ? JSON.parse(r.headers) : r.headers) as Record<string, string>,
    bodySize: Number(r.body_size),
    sha256: r.sha256 as string,
    fingerprint: r.fingerprint as string,
    payloadTruncated: Boolean(r.payload_truncated),
    handledOutcome: (r.handled_outcome as string) ?? null,
  };
}

const LETTER_COLUMNS = `letter_id, position, kafka_partition, kafka_offset::text AS kafka_offset, message_id, arrived_at, dead_lettered_at,
  retention_from, first_seen_at, last_seen_at, gone_at, reason, origin_queue, exception_class, exception_message, group_key, group_label,
  disposition, rule_id, receive_count, headers, body_size, sha256, fingerprint, payload_truncated, handled_outcome, id`;

const likeEscape = (s: string) => s.replace(/[\\%_]/g, (c) => `\\${c}`);

/** The WHERE clause and its parameters for a filter ($1, $2 … in order). */
export function whereOf(f: LetterFilter): {
  sql: string;
  params: unknown[];
  /**
   * The clauses but the searches (header, text), and the searches alone (null without any), same
   * params: a search is a condition many rows may meet, tried on the newest rows first.
   */
  base: string;
  search: string | null;
} {
  const params: unknown[] = [f.connectionId, f.queue];
  const parts = ["connection_id = $1", "queue = $2"];
  const add = (clause: (p: string) => string, value: unknown) => {
    params.push(value);
    parts.push(clause(`$${params.length}`));
  };
  if (!f.includeGone) parts.push("gone_at IS NULL");
  if (f.letterId !== undefined) add((p) => `letter_id = ${p}`, f.letterId);
  if (f.groupKey) add((p) => `group_key = ${p}`, f.groupKey);
  if (f.exceptionClass) add((p) => `exception_class = ${p}`, f.exceptionClass);
  if (f.reason) add((p) => `reason = ${p}`, f.reason);
  if (f.origin) add((p) => `origin_queue = ${p}`, f.origin);
  if (f.from) add((p) => `arrived_at >= ${p}::timestamptz`, f.from.toISOString());
  if (f.to) add((p) => `arrived_at <= ${p}::timestamptz`, f.to.toISOString());
  if ((f.header || f.text?.trim()) && !f.search) {
    // A text or header filter evaluated without the role's masking would be an oracle for masked values.
    throw new AppError("internal:filter", {
      userMessage: "This filter could not be applied. Reload the page and try again.",
    });
  }
  const base = parts.join(" AND ");
  const baseParts = parts.length;
  /** The last clauses of `parts` as tested on rows read in arrival order (without the candidates). */
  const scanParts: string[] = [];
  let digestSearch = false;
  if (f.header) add((p) => `headers @> ${p}::jsonb`, JSON.stringify({ [f.header.name]: f.header.value }));
  if (f.text?.trim()) {
    const t = f.text.trim();
    params.push(`%${likeEscape(t)}%`, t);
    const like = `$${params.length - 1}`;
    const exact = `$${params.length}`;
    // Every text a masked role could match (the class, the message as each role sees it) is a line of
    // triage_search_text, kept per letter in triage_letter_search (trigram-indexed where pg_trgm is
    // available) once filled, and every letter not filled yet is in triage_search_pending: so a
    // matching letter is always among these candidates. They only find rows through the primary
    // key, never decide a match (the exact, per-role condition does, and comes first). Where the
    // rows are read in arrival order instead (the newest SEARCH_WINDOW), the exact condition alone
    // is the test (`search` below).
    const candidates = `id = ANY(ARRAY(SELECT id FROM triage_letter_search WHERE search_text ILIKE ${like}
      UNION ALL SELECT id FROM triage_search_pending))`;
    // Exact ids: letter_id has its unique index, message_id a hash index; a SHA-256 is 64 hex digits.
    let ids = `letter_id = ${exact} OR message_id = ${exact}`;
    if (f.search!.kind === "raw") {
      if (/^[0-9a-f]{64}$/i.test(t)) ids += ` OR sha256 = lower(${exact})`;
      // The raw message is indexed only where some role sees it as it is, so a role no rule masks
      // (not the default) reads its DLQ's rows for a text the newest ones do not hold.
      parts.push(`(exception_message ILIKE ${like} OR exception_class ILIKE ${like} OR ${ids})`);
    } else {
      // The message as this role sees it, computed under the masking version in force; the digest
      // only in its keyed form (what the role is shown), never the raw SHA-256.
      params.push(f.search!.version, f.search!.role);
      const message = `(search_version = $${params.length - 1} AND COALESCE(exception_search->>$${params.length}, exception_message) ILIKE ${like})`;
      const digest = keyedDigestQuery(t);
      let digestMatch = "";
      let digestFound = "";
      if (digest) {
        const { ipad, opad } = keyedDigestPads();
        params.push(ipad, opad, digest);
        const d = `$${params.length}`;
        const keyed = `${keyedDigestSql("sha256", `$${params.length - 2}`, `$${params.length - 1}`)} = ${d}`;
        // A literal, not a parameter: the rows read in arrival order (`search`) do not use it. 32 hex digits.
        const fp = `'${keyedDigestFingerprint().replace(/[^0-9a-f]/g, "")}'`;
        digestMatch = ` OR ${keyed}`;
        digestSearch = true;
        // Candidates as for text: the digests the fill wrote (trusted only under the key they were
        // written with, see letter-search.ts) and the letters still pending; under another key, every
        // letter of the DLQ. The keyed digest computed under the key in force decides.
        const current = `EXISTS (SELECT 1 FROM triage_search_key WHERE id = 1 AND fingerprint = ${fp})`;
        digestFound = ` OR (${keyed} AND id = ANY(ARRAY(SELECT id FROM triage_letter_search WHERE keyed_sha256 = ${d} AND ${current}
          UNION ALL SELECT id FROM triage_search_pending
          UNION ALL SELECT id FROM triage_letters WHERE connection_id = $1 AND queue = $2 AND NOT ${current})))`;
      }
      const exactMatch = `(${message} OR exception_class ILIKE ${like})`;
      parts.push(`((${exactMatch} AND ${candidates}) OR ${ids}${digestFound})`);
      scanParts.push(`(${exactMatch} OR ${ids}${digestMatch})`);
    }
  }
  // A digest as shown names one payload: its letters are few, and found by index at once, so the
  // newest rows are not read first (each would cost two SHA-256s).
  const search =
    parts.length > baseParts && !digestSearch
      ? [...parts.slice(baseParts, parts.length - scanParts.length), ...scanParts].join(" AND ")
      : null;
  return { sql: parts.join(" AND "), params, base, search };
}

export interface Cursor {
  at: string;
  id: string;
}

export function encodeCursor(c: Cursor): string {
  return Buffer.from(JSON.stringify([c.at, c.id])).toString("base64url");
}

export function decodeCursor(s: string | undefined | null): Cursor | null {
  if (!s) return null;
  try {
    const [at, id] = JSON.parse(Buffer.from(s, "base64url").toString("utf8")) as [string, string];
    if (typeof at !== "string" || Number.isNaN(Date.parse(at)) || !/^\d{1,19}$/.test(String(id)))
      throw new Error("shape");
    return { at, id: String(id) };
  } catch {
    throw new AppError("bad_request:cursor", {
      userMessage: "The page cursor is not valid; start again from the first page.",
    });
  }
}

/** Rows on one page of a letter list (the triage list, its API), unless a caller asks for another size. */
export const LETTER_PAGE_SIZE = 50;

/** One page of the filtered set, newest first. */
export async function queryLetters(
  filter: LetterFilter,
  page: { after?: string | null; limit?: number },
  db: PrismaClient = getDb(),
  opts: { withPayload?: boolean } = {},
): Promise<{
  rows: Array<IndexedLetter & { payloadCiphertext?: Uint8Array | null; payloadKeyId?: string | null }>;
  nextCursor: string | null;
}> {
  const limit = Math.min(Math.max(Math.trunc(page.limit ?? LETTER_PAGE_SIZE) || LETTER_PAGE_SIZE, 1), 1000);
  const w = whereOf(filter);
  const cursor = decodeCursor(page.after);
  let sql = w.sql;
  const params = [...w.params];
  if (cursor) {
    params.push(cursor.at, cursor.id);
    sql += ` AND (arrived_at, id) < ($${params.length - 1}::timestamptz, $${params.length}::bigint)`;
  }
  params.push(limit + 1);
  const cols = opts.withPayload ? `${LETTER_COLUMNS}, payload_ciphertext, payload_key_id` : LETTER_COLUMNS;
  let found: Row[] | null = null;
  if (w.search) {
    // A text or header value that many letters hold is found among the newest ones long before an
    // index (trigram, GIN) has listed them all: look through the newest SEARCH_WINDOW of the rest of
    // the set first. Enough matches there are the page (no older letter can come before them); too
    // few, and the index finds the rare ones.
    const base = cursor
      ? `${w.base} AND (arrived_at, id) < ($${params.length - 2}::timestamptz, $${params.length - 1}::bigint)`
      : w.base;
    const recent = await db.$queryRawUnsafe<Row[]>(
      `SELECT ${cols} FROM (SELECT * FROM triage_letters WHERE ${base}
         ORDER BY arrived_at DESC, id DESC LIMIT ${SEARCH_WINDOW}) recent
       WHERE ${w.search} ORDER BY arrived_at DESC, id DESC LIMIT $${params.length}`,
      ...params,
    );
    if (recent.length > limit) found = recent;
  }
  found ??= await db.$queryRawUnsafe<Row[]>(
    `SELECT ${cols} FROM triage_letters WHERE ${sql} ORDER BY arrived_at DESC, id DESC LIMIT $${params.length}`,
    ...params,
  );
  const rows = found.slice(0, limit).map((r) => ({
    ...toLetter(r),
    ...(opts.withPayload
      ? {
          payloadCiphertext: (r.payload_ciphertext as Uint8Array | null) ?? null,
          payloadKeyId: (r.payload_key_id as string | null) ?? null,
        }
      : {}),
  }));
  const last = found.length > limit ? found[limit - 1] : null;
  return { rows, nextCursor: last ? encodeCursor({ at: iso(last.arrived_at)!, id: String(last.id) }) : null };
}

/** Rows in arrival order a text or header search looks through before it asks an index (above). */
export const SEARCH_WINDOW = 10_000;

/**
 * Counts above this are answered "at least COUNT_CAP": an exact count reads every row of the set
 * (900,000 rows of one DLQ take longer than any view may), a capped one at most COUNT_CAP + 1.
 */
export const COUNT_CAP = 10_000;
/**
 * A text or header value found this many times among the newest SEARCH_WINDOW letters is counted no further: the set
 * is "at least" that many (a common word would otherwise send the count through most of the index).
 */
export const SEARCH_LOWER_BOUND = 500;

export interface CappedCount {
  /** The set's size when `atLeast` is false; else a lower bound (the cap). */
  count: number;
  /** True when the set holds more than `count` letters (how many more was not counted). */
  atLeast: boolean;
}

/** The filtered set's size, counted up to `cap` (never a wrong number: above it, "at least cap"). */
export async function countLettersCapped(
  filter: LetterFilter,
  cap: number = COUNT_CAP,
  db: PrismaClient = getDb(),
): Promise<CappedCount> {
  const w = whereOf(filter);
  const limit = Math.max(Math.trunc(cap), 0) + 1;
  if (w.search) {
    // As for a page: the newest SEARCH_WINDOW rows first. All of the set, or matches enough to say
    // "at least" that many (a true lower bound: each was counted), answer without the index.
    const r = await db.$queryRawUnsafe<Array<{ n: bigint | number; k: bigint | number }>>(
      `SELECT count(*) AS n, count(*) FILTER (WHERE ${w.search}) AS k FROM (SELECT * FROM triage_letters WHERE ${w.base}
         ORDER BY arrived_at DESC, id DESC LIMIT ${SEARCH_WINDOW}) recent`,
      ...w.params,
    );
    const n = Number(r[0]?.n ?? 0);
    const k = Math.min(Number(r[0]?.k ?? 0), limit - 1);
    if (n < SEARCH_WINDOW) return { count: k, atLeast: Number(r[0]?.k ?? 0) >= limit };
    if (k >= SEARCH_LOWER_BOUND) return { count: k, atLeast: true };
  }
  const r = await db.$queryRawUnsafe<Array<{ n: bigint | number }>>(
    `SELECT count(*) AS n FROM (SELECT 1 FROM triage_letters WHERE ${w.sql} LIMIT ${limit}) s`,
    ...w.params,
  );
  const n = Number(r[0]?.n ?? 0);
  return n >= limit ? { count: limit - 1, atLeast: true } : { count: n, atLeast: false };
}

/** The filtered set's exact size (reads the whole set: for selections that act on it, not for views). */
export async function countLetters(filter: LetterFilter, db: PrismaClient = getDb()): Promise<number> {
  const w = whereOf(filter);
  const r = await db.$queryRawUnsafe<Array<{ n: bigint | number }>>(
    `SELECT count(*) AS n FROM triage_letters WHERE ${w.sql}`,
    ...w.params,
  );
  return Number(r[0]?.n ?? 0);
}

export interface GroupView {
  groupKey: string;
  label: string;
  basis: string;
  exceptionClass: string | null;
  normalizedMessage: string | null;
  topFrame: string | null;
  reason: string | null;
  count: number;
  /** count / letters present in the DLQ, 0..1 */
  share: number;
  handledCount: number;
  firstAt: string;
  lastAt: string;
  origins: string[];
  versions: string[];
  sampleLetterIds: string[];
  disposition: "transient" | "permanent" | "unknown";
  ruleId: string | null;
  buckets: Array<{ start: string; count: number }>;
  bucketSeconds: number;
  burst: { burst: boolean; from: string | null; to: string | null; share: number };
  refreshedAt: string;
}

/** The groups of a DLQ, largest first, labelled with the current rules (so edits apply at once). */
export async function queryGroups(
  connectionId: string,
  queue: string,
  rules: unknown[] | undefined,
  db: PrismaClient = getDb(),
): Promise<{ groups: GroupView[]; total: number }> {
  const rows = await db.triageGroup.findMany({
    where: { connectionId, queue },
    orderBy: [{ count: "desc" }, { groupKey: "asc" }],
    take: 500,
  });
  const total = rows.reduce((n, g) => n + g.count, 0);
  const groups = rows.map((g): GroupView => {
    const c = classify(
      { exceptionClass: g.exceptionClass, exceptionMessage: g.sampleMessage, reason: g.reason },
      rules as ClassificationRule[] | undefined,
    );
    const buckets = (g.buckets as Array<{ start: string; count: number }>).map((b) => ({
      start: new Date(b.start).toISOString(),
      count: b.count,
    }));
    const b = detectBurst(
      buckets.map((x) => ({ start: Date.parse(x.start), count: x.count })),
      { bucketMs: g.bucketSeconds * 1000 },
    );
    const burst = {
      burst: b.burst,
      from: b.from === null ? null : new Date(b.from).toISOString(),
      to: b.to === null ? null : new Date(b.to).toISOString(),
      share: b.share,
    };
    return {
      groupKey: g.groupKey,
      label: g.label,
      basis: g.basis,
      exceptionClass: g.exceptionClass,
      normalizedMessage: g.normalizedMessage,
      topFrame: g.topFrame,
      reason: g.reason,
      count: g.count,
      share: total ? g.count / total : 0,
      handledCount: g.handledCount,
      firstAt: g.firstAt.toISOString(),
      lastAt: g.lastAt.toISOString(),
      origins: g.origins,
      versions: g.versions,
      sampleLetterIds: g.sampleLetterIds,
      disposition: c.disposition,
      ruleId: c.ruleId,
      buckets,
      bucketSeconds: g.bucketSeconds,
      burst,
      refreshedAt: g.refreshedAt.toISOString(),
    };
  });
  return { groups, total };
}

export type GroupByKey = "origin" | "reason" | "class" | `header:${string}`;

type ValueGroups = {
  groups: Array<{ value: string | null; count: number; share: number; firstAt: string; lastAt: string }>;
  total: number;
  /** Grouping by a header whose values the worker is counting: these groups read the rows meanwhile. */
  counting?: boolean;
};

/** The column each key groups by, and the triage_group_stats kind that counts its values. */
const KEPT_BY = {
  origin: { column: "origin_queue", kind: "o" },
  reason: { column: "reason", kind: "r" },
  class: { column: "exception_class", kind: "c" },
} as const;

/**
 * Grouping by another key (count, first/last arrival), largest first, of the DLQ's present letters.
 * By origin, reason or class: the counts triage_group_stats keeps (letters without a value: the
 * present letters less those with one) and two index probes per value for its first and last
 * arrival. By a header: its kept counts once it is counted for the DLQ (header-stats.ts). `mayCount`
 * (the caller's decision: counting adds work to every write) asks the worker to count it; until the
 * worker has, every present letter's row (queryGroupsByRows), never counts still being filled, and
 * (with `withCounting`) `counting` says the worker is on it.
 */
export async function queryGroupsBy(
  connectionId: string,
  queue: string,
  by: GroupByKey,
  db: PrismaClient = getDb(),
  opts: { mayCount?: boolean; withCounting?: boolean } = {},
): Promise<ValueGroups> {
  if (by.startsWith("header:") && by.length > 7) {
    const name = by.slice(7);
    let state = await headerCountState(connectionId, queue, name, db);
    if (state === null && opts.mayCount) state = await requestHeaderCount(connectionId, queue, name, db);
    const rows = state === "counted" ? await queryHeaderGroupsKept(connectionId, queue, name, db) : null;
    if (rows) return valueGroups(rows);
    if (opts.withCounting && (state === "wanted" || state === "filling"))
      return { ...(await queryGroupsByRows(connectionId, queue, by, db)), counting: true };
  }
  if (!Object.hasOwn(KEPT_BY, by)) return queryGroupsByRows(connectionId, queue, by, db);
  const { column, kind } = KEPT_BY[by as keyof typeof KEPT_BY];
  const present = `FROM triage_letters l WHERE l.connection_id = $1 AND l.queue = $2 AND l.gone_at IS NULL`;
  // One probe per value, on the (connection_id, queue, <column>, gone_at, arrived_at) index: ordered
  // by (gone_at, arrived_at), which only that index gives, the planner cannot walk the DLQ's
  // arrival index instead and filter it (all of it, for a value no present letter has left).
  const probe = (order: "ASC" | "DESC") =>
    `CASE WHEN top.value IS NULL
       THEN (SELECT l.arrived_at ${present} AND l.${column} IS NULL ORDER BY l.gone_at ${order}, l.arrived_at ${order} LIMIT 1)
       ELSE (SELECT l.arrived_at ${present} AND l.${column} = top.value ORDER BY l.gone_at ${order}, l.arrived_at ${order} LIMIT 1) END`;
  const rows = await db.$queryRawUnsafe<Row[]>(
    `WITH v AS (
       SELECT value, sum(n)::int AS n FROM triage_group_stats
       WHERE connection_id = $1 AND queue = $2 AND kind = $3 AND n > 0 GROUP BY value
     ),
     counts AS (
       SELECT value, n FROM v
       UNION ALL
       SELECT NULL, (COALESCE(sum(n), 0) - (SELECT COALESCE(sum(n), 0) FROM v))::int FROM triage_group_stats
       WHERE connection_id = $1 AND queue = $2 AND kind = 'h' AND n > 0
     ),
     top AS (SELECT value, n FROM counts WHERE n > 0 ORDER BY n DESC, value LIMIT 500)
     SELECT top.value, top.n, ${probe("ASC")} AS first_at, ${probe("DESC")} AS last_at
     FROM top ORDER BY top.n DESC, top.value`,
    connectionId,
    queue,
    kind,
  );
  return valueGroups(rows);
}

/** Grouping by another key, by aggregating every present letter's row of the DLQ. */
export async function queryGroupsByRows(
  connectionId: string,
  queue: string,
  by: GroupByKey,
  db: PrismaClient = getDb(),
): Promise<ValueGroups> {
  const params: unknown[] = [connectionId, queue];
  let expr: string;
  if (by === "origin") expr = "origin_queue";
  else if (by === "reason") expr = "reason";
  else if (by === "class") expr = "exception_class";
  else if (by.startsWith("header:") && by.length > 7) {
    params.push(by.slice(7));
    expr = `headers->>$3`;
  } else
    throw new AppError("bad_request:group-by", {
      userMessage: 'Group by "origin", "reason", "class" or "header:<name>".',
    });
  const rows = await db.$queryRawUnsafe<Row[]>(
    `SELECT ${expr} AS value, count(*)::int AS n, min(arrived_at) AS first_at, max(arrived_at) AS last_at
     FROM triage_letters WHERE connection_id = $1 AND queue = $2 AND gone_at IS NULL
     GROUP BY 1 ORDER BY n DESC, 1 LIMIT 500`,
    ...params,
  );
  return valueGroups(rows);
}

function valueGroups(rows: Row[]): ValueGroups {
  const total = rows.reduce((n, r) => n + Number(r.n), 0);
  return {
    total,
    groups: rows.map((r) => ({
      value: (r.value as string) ?? null,
      count: Number(r.n),
      share: total ? Number(r.n) / total : 0,
      firstAt: iso(r.first_at)!,
      lastAt: iso(r.last_at)!,
    })),
  };
}

export type ExportedLetter = IndexedLetter & { payloadBase64?: string | null; payloadText?: string | null };

/** Every letter of the filter, in keyset batches (bounded memory); payloads decrypted only when asked. */
export async function* streamLetters(
  filter: LetterFilter,
  opts: { withPayload: boolean; batchSize?: number },
  db: PrismaClient = getDb(),
): AsyncGenerator<ExportedLetter> {
  let after: string | null = null;
  // The first batch is a list page's size (also the first chunk an export writes), so an export's
  // first bytes wait for those rows only: a value on 1% of letters fills it from the newest
  // SEARCH_WINDOW rows (100 there), where a batch of 100 missed by one and read the index again.
  let size = Math.min(opts.batchSize ?? 500, LETTER_PAGE_SIZE);
  for (;;) {
    const page = await queryLetters(filter, { after, limit: size }, db, {
      withPayload: opts.withPayload,
    });
    for (const r of page.rows) {
      const { payloadCiphertext, payloadKeyId, ...rest } = r;
      if (!opts.withPayload) {
        yield rest;
        continue;
      }
      let payloadBase64: string | null = null;
      let payloadText: string | null = null;
      if (payloadCiphertext && payloadKeyId) {
        const plain = decryptPayload(
          { keyId: payloadKeyId, data: Buffer.from(payloadCiphertext) },
          payloadAad(filter.connectionId, filter.queue, r.letterId),
        );
        payloadBase64 = plain.toString("base64");
        const text = plain.toString("utf8");
        payloadText = Buffer.from(text, "utf8").equals(plain) ? text : null;
      }
      yield { ...rest, payloadBase64, payloadText };
    }
    if (!page.nextCursor) return;
    after = page.nextCursor;
    size = opts.batchSize ?? 500;
  }
}
