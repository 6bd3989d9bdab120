import "server-only";
import { authorize } from "@/lib/auth/authorize";
import { can } from "@/lib/auth/permissions";
import type { Actor, RequestMeta } from "@/lib/auth/session";
import { audited } from "@/lib/use-case/audited";
import { adapterFor, withTimeout } from "@/lib/use-case/connection";
import { AppError } from "@/lib/errors";
import { getDb } from "@/lib/db";
import { jobStore } from "@/lib/jobs/store";
import { wakeJobWorker } from "@/lib/jobs/process-worker";
import { ACTIVE_STATES, type JobProgress, type JobRecord } from "@/lib/jobs/types";
import { jobViewBase, type JobViewBase } from "@/lib/jobs/view";
import {
  COUNT_CAP,
  type CappedCount,
  countLettersCapped,
  queryGroups,
  queryGroupsBy,
  queryLetters,
  streamLetters,
  type ExportedLetter,
  type GroupByKey,
  type GroupView,
  type IndexedLetter,
  type LetterFilter,
} from "./queries";
import { checkRules, loadRules, replaceRules, type RuleSet } from "./rules-store";
import { maskHeaderRecord, maskHeadersWithRules, maskTextWithRules } from "@/lib/masking/engine";
import { maskingPolicy, type MaskingPolicy } from "@/lib/masking/policy";
import { maskExportedLetter } from "./export";
import { scopedFilter } from "./masked-search";
import type { ScanParams } from "./scan";
import type { ProgressNumbers } from "./scan-progress";
import { groupedByOlderVersion } from "./regroup";
import { keptHeaderValueCount, keptHeaderValues } from "./header-stats";

/**
 * Triage use cases: authorize → act → audit. Route handlers (app/api/triage/**) and, later, the
 * triage pages' server actions call these; nothing else reaches the index.
 */

export interface DlqRef {
  connectionId: string;
  queue: string;
}

export interface ScanView extends JobViewBase {
  progress: JobProgress & Pick<ProgressNumbers, "partial">;
  acceptRisk: boolean;
  createdBy: string | null;
}

export function toScanView(j: JobRecord): ScanView {
  return {
    ...jobViewBase(j),
    acceptRisk: Boolean((j.params as ScanParams | null)?.acceptRisk),
    createdBy: j.createdBy,
  };
}

function requireDlq(input: Partial<DlqRef>): DlqRef {
  if (!input.connectionId || !input.queue)
    throw new AppError("bad_request:dlq", { userMessage: "Name the connection and the DLQ." });
  return { connectionId: input.connectionId, queue: input.queue };
}

/**
 * Queues a scan of a DLQ (or returns the one already queued or running: `alreadyActive`).
 * A DLQ whose reading may cost letters needs `acceptRisk` (operator+), recorded in the job.
 * Audited `triage.scan_start`, operation id = job id.
 */
export async function startScan(
  actor: Actor,
  meta: RequestMeta,
  input: DlqRef & { acceptRisk?: boolean },
): Promise<{ scan: ScanView; alreadyActive: boolean }> {
  const scope = { action: "triage.scan_start", connectionId: input.connectionId ?? null, queue: input.queue ?? null };
  await authorize(actor, "triage:scan", { ...scope, meta });
  if (input.acceptRisk) await authorize(actor, "dlq:browse-risky", { ...scope, meta });
  const dlq = requireDlq(input);
  return audited(
    actor,
    meta,
    scope,
    async () => {
      const active = await jobStore().list({ kind: "scan", ...dlq, states: [...ACTIVE_STATES] }, 1);
      if (active[0]) return { scan: toScanView(active[0]), alreadyActive: true, risk: null as string | null };
      const summary = await withTimeout(adapterFor(dlq.connectionId).describeDlq(dlq.queue), 30_000, "describeDlq");
      if (summary.readRisk && !input.acceptRisk) {
        throw new AppError("confirmation_required:read", {
          userMessage: `Reading this DLQ can cost letters: ${summary.readRisk.message} Confirm the risk to scan it.`,
          details: { risk: summary.readRisk.kind },
        });
      }
      const job = await jobStore().enqueue({
        kind: "scan",
        ...dlq,
        params: { acceptRisk: Boolean(input.acceptRisk && summary.readRisk) },
        createdBy: actor.id,
      });
      wakeJobWorker();
      return { scan: toScanView(job), alreadyActive: false, risk: summary.readRisk?.kind ?? null };
    },
    (r) => ({ jobId: r.scan.id, alreadyActive: r.alreadyActive, acceptedRisk: r.risk, depth: null }),
  ).then(({ scan, alreadyActive }) => ({ scan, alreadyActive }));
}

/** Asks a scan to stop at its next batch (a queued one is cancelled at once). Audited `triage.scan_cancel`. */
export async function cancelScan(actor: Actor, meta: RequestMeta, input: { jobId: string }): Promise<ScanView> {
  const scope = { action: "triage.scan_cancel", target: input.jobId ?? null };
  await authorize(actor, "triage:scan", { ...scope, meta });
  const job = await jobStore().get(input.jobId ?? "");
  if (job?.kind !== "scan") throw new AppError("not_found:scan", { userMessage: "There is no such scan." });
  return audited(
    actor,
    meta,
    { ...scope, connectionId: job.connectionId, queue: job.queue },
    async () => {
      await jobStore().requestCancel(job.id);
      return toScanView((await jobStore().get(job.id))!);
    },
    (s) => ({ jobId: s.id, state: s.state }),
  );
}

export async function getScan(actor: Actor, meta: RequestMeta, input: { jobId: string }): Promise<ScanView> {
  await authorize(actor, "triage:read", { action: "triage.scan_view", target: input.jobId ?? null, meta });
  const job = await jobStore().get(input.jobId ?? "");
  if (job?.kind !== "scan") throw new AppError("not_found:scan", { userMessage: "There is no such scan." });
  return toScanView(job);
}

/**
 * Newest first (at most 50). `before` (a scan's id) and `limit` page on by keyset (createdAt, id),
 * the order of the list, for the API; the pages ask for the newest and pass neither.
 */
export async function listScans(
  actor: Actor,
  meta: RequestMeta,
  input: Partial<DlqRef> & { before?: string | null; limit?: number },
): Promise<ScanView[]> {
  await authorize(actor, "triage:read", {
    action: "triage.scan_list",
    connectionId: input.connectionId ?? null,
    queue: input.queue ?? null,
    meta,
  });
  const filter = { kind: "scan" as const, connectionId: input.connectionId, queue: input.queue };
  const limit = Math.min(Math.max(Math.trunc(input.limit ?? 50) || 50, 1), 200);
  if (!input.before) return (await jobStore().list(filter, limit)).map(toScanView);
  const anchor = await jobStore().get(input.before);
  if (anchor?.kind !== "scan")
    throw new AppError("bad_request:cursor", {
      userMessage: "The page cursor is not valid; start again from the first page.",
    });
  const rows = await getDb().job.findMany({
    where: {
      kind: "scan",
      ...(filter.connectionId ? { connectionId: filter.connectionId } : {}),
      ...(filter.queue ? { queue: filter.queue } : {}),
      OR: [{ createdAt: { lt: anchor.createdAt } }, { createdAt: anchor.createdAt, id: { lt: anchor.id } }],
    },
    orderBy: [{ createdAt: "desc" }, { id: "desc" }],
    take: limit,
  });
  return rows.map(toScanView);
}

export type GroupsResult = (
  | { by: "group"; groups: GroupView[]; total: number; lastScan: ScanView | null }
  | {
      by: GroupByKey;
      groups: Array<{ value: string | null; count: number; share: number; firstAt: string; lastAt: string }>;
      total: number;
      lastScan: ScanView | null;
      /** By a header the worker is counting for the DLQ: read from the rows until it has. */
      counting?: boolean;
    }
) & {
  /** The groups were made, wholly or partly, under an older grouping: the next complete scan regroups them. */
  olderGrouping: boolean;
};

/** The DLQ's groups (by grouping key, or by origin / reason / class / header:<name>). */
export async function listGroups(
  actor: Actor,
  meta: RequestMeta,
  input: DlqRef & { by?: string | null },
): Promise<GroupsResult> {
  await authorize(actor, "triage:read", {
    action: "triage.groups",
    connectionId: input.connectionId ?? null,
    queue: input.queue ?? null,
    meta,
  });
  const dlq = requireDlq(input);
  const [lastScan, olderGrouping] = await Promise.all([
    jobStore()
      .list({ kind: "scan", ...dlq }, 1)
      .then((j) => j[0]),
    groupedByOlderVersion(dlq),
  ]);
  const scan = lastScan ? toScanView(lastScan) : null;
  const policy = await maskingPolicy(actor.role, dlq.connectionId, dlq.queue);
  if (!input.by || input.by === "group") {
    const { rules } = await loadRules();
    const r = await queryGroups(dlq.connectionId, dlq.queue, rules);
    return { by: "group", ...r, groups: r.groups.map((g) => maskGroup(g, policy)), lastScan: scan, olderGrouping };
  }
  const by = input.by as GroupByKey;
  // Counting a header's values adds work to every write of the index: only a role that may start
  // scans asks the worker to count it (checked here, on the server); every grouping reads the rows
  // until the worker has counted it (`counting` meanwhile), then the kept counts.
  const r = await queryGroupsBy(dlq.connectionId, dlq.queue, by, undefined, {
    mayCount: can(actor.role, "triage:scan"),
    withCounting: true,
  });
  return {
    by,
    ...r,
    groups: maskValueGroups(by, r.groups, policy),
    lastScan: scan,
    olderGrouping,
  };
}

type ValueGroup = { value: string | null; count: number; share: number; firstAt: string; lastAt: string };

/** A grouping by another key as the role sees it: its values masked, groups that mask alike merged. */
export function maskValueGroups(by: GroupByKey, groups: ValueGroup[], policy: MaskingPolicy): ValueGroup[] {
  return mergeMasked(groups.map((g) => ({ ...g, value: maskGroupValue(by, g.value, policy) })));
}

/**
 * Groups whose values mask alike are one group to this role, ordered by what it sees (count, then
 * the shown value): separate rows, or an order decided by the raw values, would tell masked values apart.
 */
function mergeMasked(groups: ValueGroup[]): ValueGroup[] {
  const byValue = new Map<string | null, ValueGroup>();
  for (const g of groups) {
    const m = byValue.get(g.value);
    if (!m) byValue.set(g.value, { ...g });
    else {
      m.count += g.count;
      m.share += g.share;
      if (g.firstAt < m.firstAt) m.firstAt = g.firstAt;
      if (g.lastAt > m.lastAt) m.lastAt = g.lastAt;
    }
  }
  return [...byValue.values()].sort((a, b) => b.count - a.count || (a.value ?? "").localeCompare(b.value ?? ""));
}

/**
 * Group labels carry exception text, which can quote payload data: the role's masking rules apply.
 * Also the failure issues' titles (lib/issues), so a group reads the same wherever it is shown.
 */
export function maskGroup<G extends Pick<GroupView, "label" | "normalizedMessage">>(g: G, policy: MaskingPolicy): G {
  if (policy.rules.length === 0) return g;
  const text = (t: string | null) => (t ? maskTextWithRules(t, policy.rules, policy.hashKey).text : t);
  return { ...g, label: text(g.label) ?? "", normalizedMessage: text(g.normalizedMessage) };
}

function maskGroupValue(by: GroupByKey, value: string | null, policy: MaskingPolicy): string | null {
  if (value === null || policy.rules.length === 0) return value;
  if (by.startsWith("header:")) {
    const name = by.slice("header:".length);
    return maskHeaderRecord({ [name]: value }, policy.rules, policy.hashKey).headers[name] ?? null;
  }
  return maskTextWithRules(value, policy.rules, policy.hashKey).text;
}

/**
 * One keyset page of the filtered set and the set's count, counted up to COUNT_CAP: above it the
 * answer is "at least" the cap (`countAtLeast`), never an estimate shown as a count.
 */
export async function listLetters(
  actor: Actor,
  meta: RequestMeta,
  input: { filter: LetterFilter; after?: string | null; limit?: number },
): Promise<{ letters: IndexedLetter[]; count: number; countAtLeast: boolean; nextCursor: string | null }> {
  const scope = {
    action: "triage.letters",
    connectionId: input.filter?.connectionId ?? null,
    queue: input.filter?.queue ?? null,
  };
  await authorize(actor, "triage:read", { ...scope, meta });
  const dlq = requireDlq(input.filter ?? {});
  const policy = await maskingPolicy(actor.role, dlq.connectionId, dlq.queue);
  const run = async () => {
    // Filters are evaluated as the role sees the letters (masked-search.ts): no count or row can
    // answer differently for a right and a wrong guess of a masked value.
    const filter = scopedFilter({ ...input.filter, ...dlq }, policy);
    const [page, count] = await Promise.all([
      queryLetters(filter, { after: input.after, limit: input.limit }),
      countForRole(filter, policy),
    ]);
    // Headers, exception text and digests pass through the role's masking before they leave the server.
    return {
      letters: page.rows.map((r) => maskExportedLetter(r, policy)),
      count: count.count,
      countAtLeast: count.atLeast,
      nextCursor: page.nextCursor,
    };
  };
  // A search over a sensitive DLQ is on record, with what was searched for and how many matched.
  if (!policy.sensitive || !searches(input.filter)) return run();
  const onRecord = await searchOnRecord(input.filter, dlq.connectionId, dlq.queue);
  return audited(actor, meta, { ...scope, action: "triage.search" }, run, (r) => ({
    filter: describeFilter(onRecord),
    count: r.count,
    countAtLeast: r.countAtLeast,
  }));
}

/** Counted header values a role's masking is checked against, at most (more: the rows are counted). */
const SHOWN_CHECK_MAX = 1_000;

/**
 * The filtered set's count as countLettersCapped gives it (the same cap). A filter on one header
 * value and nothing else, of a header counted for the DLQ (header-stats.ts), takes the value's kept
 * count instead of reading its rows, but only when this role is shown every counted value of the
 * header as it is stored: a header its masking changes for any letter (a secret header, a value that
 * looks like an address) is counted from the rows, as before, so no count comes from values the role
 * does not see.
 */
async function countForRole(filter: LetterFilter, policy: MaskingPolicy): Promise<CappedCount> {
  const h = filter.header;
  if (h && headerOnly(filter) && (await headerShownAsStored(filter.connectionId, filter.queue, h.name, policy))) {
    const n = await keptHeaderValueCount(filter.connectionId, filter.queue, h.name, h.value);
    if (n !== null) return n > COUNT_CAP ? { count: COUNT_CAP, atLeast: true } : { count: n, atLeast: false };
  }
  return countLettersCapped(filter);
}

/** The filter's keys that do not narrow a header filter's set: the DLQ, and whose eyes search with. */
const NOT_NARROWING = new Set<string>(["connectionId", "queue", "header", "search"]);

/**
 * Whether the filter is one header value and nothing else. Read from the filter's keys, so a
 * criterion added to LetterFilter later counts from the rows until it is thought about here.
 */
function headerOnly(filter: LetterFilter): boolean {
  return Object.entries(filter).every(
    ([key, v]) => NOT_NARROWING.has(key) || v === undefined || v === null || v === false || v === "",
  );
}

/** Whether a counted header's every present value reaches this role unmasked (false when not counted). */
async function headerShownAsStored(
  connectionId: string,
  queue: string,
  name: string,
  policy: MaskingPolicy,
): Promise<boolean> {
  if (policy.rules.length === 0) return true;
  const values = await keptHeaderValues(connectionId, queue, name);
  if (values === null || values.length > SHOWN_CHECK_MAX) return false;
  // All values through the rules at once (one compile of the rules: 1,000 values in about 1 ms,
  // against 25 ms one by one); a value a rule changes or a header a rule names counts as masked.
  const entries = values.map((v) => ({ name, value: { t: "string" as const, v } }));
  return maskHeadersWithRules(entries, policy.rules, policy.hashKey).maskedCount === 0;
}

/**
 * The search as the audit log keeps it: operators read the log, and a value typed into a search
 * (a card number an admin copied, a header's secret) must not reach them there while the letters
 * show it masked. On a sensitive DLQ every enabled rule applies to every role; the viewer's form of
 * those rules hides whatever they match, so the record shows the search as nobody's view reveals it.
 */
async function searchOnRecord(f: LetterFilter, connectionId: string, queue: string): Promise<LetterFilter> {
  const { rules, hashKey } = await maskingPolicy("viewer", connectionId, queue);
  if (rules.length === 0) return f;
  const header = f.header && {
    name: f.header.name,
    value: maskHeaderRecord({ [f.header.name]: f.header.value }, rules, hashKey).headers[f.header.name] ?? "",
  };
  const text = f.text ? maskTextWithRules(f.text, rules, hashKey).text : f.text;
  return { ...f, header, text };
}

const searches = (f: LetterFilter | undefined) => Boolean(f?.header || f?.text?.trim());

/**
 * The filtered set for an export, streamed in keyset batches. Payloads (decrypted) only with
 * letter:read-payload. Audited `triage.export` with the filter and count before the first byte
 * (counted up to COUNT_CAP: a larger set is recorded as "at least" the cap, `countAtLeast`, so the
 * first byte never waits for a count of millions). The rows are unmasked: the caller masks each
 * with `maskExportedLetter` for the actor's policy.
 */
export async function exportLetters(
  actor: Actor,
  meta: RequestMeta,
  input: { filter: LetterFilter; format: "csv" | "json"; includePayload?: boolean },
): Promise<{ count: number; countAtLeast: boolean; rows: AsyncIterable<ExportedLetter> }> {
  const scope = {
    action: "triage.export",
    connectionId: input.filter?.connectionId ?? null,
    queue: input.filter?.queue ?? null,
  };
  await authorize(actor, "triage:export", { ...scope, meta });
  if (input.includePayload) await authorize(actor, "letter:read-payload", { ...scope, meta });
  const dlq = requireDlq(input.filter ?? {});
  const policy = await maskingPolicy(actor.role, dlq.connectionId, dlq.queue);
  const filter = scopedFilter({ ...input.filter, ...dlq }, policy);
  const count = await audited(
    actor,
    meta,
    scope,
    () => countForRole(filter, policy),
    (n) => ({
      format: input.format,
      includePayload: Boolean(input.includePayload),
      count: n.count,
      countAtLeast: n.atLeast,
      filter: describeFilter(filter),
    }),
  );
  return {
    count: count.count,
    countAtLeast: count.atLeast,
    rows: streamLetters(filter, { withPayload: Boolean(input.includePayload) }),
  };
}

function describeFilter(f: LetterFilter): Record<string, unknown> {
  return {
    groupKey: f.groupKey ?? null,
    exceptionClass: f.exceptionClass ?? null,
    reason: f.reason ?? null,
    origin: f.origin ?? null,
    from: f.from?.toISOString() ?? null,
    to: f.to?.toISOString() ?? null,
    header: f.header ? `${f.header.name}=${f.header.value}` : null,
    text: f.text ?? null,
    includeGone: Boolean(f.includeGone),
  };
}

export async function listRules(actor: Actor, meta: RequestMeta): Promise<RuleSet> {
  await authorize(actor, "triage:read", { action: "triage.rules_view", meta });
  return loadRules();
}

/** Replaces the classification rules (validated); groups are re-labelled on their next read. Audited `triage.rules_save`. */
export async function saveRules(
  actor: Actor,
  meta: RequestMeta,
  input: { rules: unknown; expectedVersion?: number },
): Promise<RuleSet> {
  const scope = { action: "triage.rules_save" };
  await authorize(actor, "triage:rules", { ...scope, meta });
  return audited(
    actor,
    meta,
    scope,
    async () => replaceRules(checkRules(input.rules), actor.email, input.expectedVersion),
    (r) => ({
      version: r.version,
      rules: r.rules.length,
      ids: r.rules
        .map((x) => x.id)
        .join(",")
        .slice(0, 1500),
    }),
  );
}
