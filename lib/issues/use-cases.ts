import "server-only";
import { randomUUID } from "node:crypto";
import { recordAuditBatchIn, type AuditEntry } from "@/lib/audit";
import { authorize } from "@/lib/auth/authorize";
import type { Actor, RequestMeta } from "@/lib/auth/session";
import { getUserByEmail } from "@/lib/auth/users";
import type { BrokerKind } from "@/lib/brokers/contract/capabilities";
import { loadConfig } from "@/lib/config";
import { getDb } from "@/lib/db";
import { AppError } from "@/lib/errors";
import type { PrismaClient } from "@/lib/generated/prisma/client";
import { configOwnerEntries, ownerResolver, type OwnerOf } from "@/lib/operations/owners";
import {
  ignoreColumns,
  lifeOfRow,
  operatorTransition,
  type IssueState,
  type OperatorChange,
} from "@/lib/triage/issue-lifecycle";
import { syncFailureIssues } from "@/lib/triage/issue-sync";
import { auditActor, errorCodeOf, recordOutcome, type AuditScope } from "@/lib/use-case/audited";
import {
  assigneeSchema,
  issueFilterSchema,
  issueRefSchema,
  linkHost,
  linkSchema,
  noteSchema,
  operatorChangeOf,
  stateChangeSchema,
  type Assignee,
  type IssueFilter,
  type IssueRef,
  type StateChangeInput,
} from "./inputs";
import {
  countIssuesByState,
  dlqsBehind,
  issueDlqs,
  lockIssue,
  lockIssues,
  queryIssue,
  queryIssueActivity,
  queryIssueEvents,
  queryIssues,
  type IssueRow,
  type IssueWhere,
} from "./queries";
import { policies, toEventView, toIssueView, type IssueEventView, type IssueView } from "./view";
import { parseInput } from "@/lib/use-case/input";

/**
 * Failure issues (DESIGN "Failures as issues"): authorize → validate → act → audit, like every use
 * case. Every role reads (triage:read); operators and admins change states, assignees, notes and
 * links (issues:write). A change and its audit rows commit together, one audit row per group.
 */

export type { IssueView, IssueEventView, IgnoreView } from "./view";
export type { IssueFilter, IssueRef, StateChangeInput, Assignee } from "./inputs";

/** At most this many issues in a list (not paged: filter to narrow it). */
export const LIST_LIMIT = 500;
/** At most this many groups in one bulk change. */
export const BULK_LIMIT = 1000;

type Tx = Pick<PrismaClient, "$queryRawUnsafe" | "$executeRawUnsafe">;
const TX = { timeout: 30_000, maxWait: 15_000 } as const;

export interface IssueList {
  issues: IssueView[];
  /** Issues in the filtered set (the list shows at most LIST_LIMIT). */
  total: number;
  /** Issues per state in the filtered set, whatever its state filter. */
  counts: Record<IssueState, number>;
}

/** Issues across DLQs, new and regressed first, then by growth (issue-lifecycle STATE_RANK). */
export async function listIssues(actor: Actor, meta: RequestMeta, input: unknown = {}): Promise<IssueList> {
  const raw = (input ?? {}) as Partial<IssueFilter>;
  await authorize(actor, "triage:read", {
    action: "issue.list",
    connectionId: typeof raw.connectionId === "string" ? raw.connectionId : null,
    queue: typeof raw.queue === "string" ? raw.queue : null,
    meta,
  });
  const filter = parseInput(issueFilterSchema, input ?? {}, "bad_request:issues");
  const now = new Date();
  await catchUp(now);
  const ownerOf = await ownerResolver();
  const where = await whereFor(filter, ownerOf);
  const [{ rows, total }, counts] = await Promise.all([queryIssues(where, now, LIST_LIMIT), countIssuesByState(where)]);
  return { issues: await views(actor, rows, ownerOf), total, counts };
}

/** One issue and its history (notes, links, assignments, state changes), as the role sees them. */
export async function getIssue(
  actor: Actor,
  meta: RequestMeta,
  input: unknown,
): Promise<{ issue: IssueView; history: IssueEventView[]; activity: IssueActivity }> {
  await authorize(actor, "triage:read", { action: "issue.view", ...scopeOf(input), meta });
  const ref = parseInput(issueRefSchema, input, "bad_request:issue");
  const now = new Date();
  await ensureIssue(ref, now);
  const row = await queryIssue(ref, now);
  if (!row) throw notFound();
  const policy = await policies(actor)(ref.connectionId, ref.queue);
  const [[issue], events, activity] = await Promise.all([
    views(actor, [row], await ownerResolver()),
    queryIssueEvents(ref),
    queryIssueActivity(ref),
  ]);
  return {
    issue,
    history: events.map((e) => toEventView(e, policy)),
    activity: {
      hourly: activity.hourly.map((h) => ({ hour: h.hour.toISOString(), letters: h.letters })),
      samples: activity.samples,
    },
  };
}

/** A group's letters per hour over its life (death times, gone letters included) and its newest letters still in the DLQ. */
export interface IssueActivity {
  hourly: Array<{ hour: string; letters: number }>;
  samples: string[];
}

/** Acknowledge, resolve (with an optional note, e.g. "in the next release") or ignore one group. Audited `issue.state_change`. */
export async function changeIssueState(
  actor: Actor,
  meta: RequestMeta,
  input: IssueRef & { change: StateChangeInput },
): Promise<{ issue: IssueView; changed: boolean }> {
  const scope = { action: "issue.state_change", ...scopeOf(input) };
  await authorize(actor, "issues:write", { ...scope, meta });
  const ref = parseInput(issueRefSchema, input, "bad_request:issue");
  const change = operatorChangeOf(parseInput(stateChangeSchema, input?.change, "bad_request:issue"));
  const now = new Date();
  await ensureIssue(ref, now);
  const changed = await mutate(actor, meta, scope, async (tx, audit) => {
    const row = await lockIssue(tx, ref);
    if (!row) throw notFound();
    const done = await applyChange(tx, row, change, actor, now);
    audit.push(changeAudit(row, done, change));
    return done !== null;
  });
  return { issue: await viewOf(actor, ref), changed };
}

/**
 * The same change for every group of a filter (at most BULK_LIMIT; the page names the count
 * first, from listIssues with the same filter). One audit row per group changed, and one for the
 * whole (`issue.state_change_bulk`), under one operation id.
 */
export async function changeIssueStates(
  actor: Actor,
  meta: RequestMeta,
  input: { filter: unknown; change: StateChangeInput },
): Promise<{ matched: number; changed: number; operationId: string }> {
  const scope = { action: "issue.state_change_bulk", ...scopeOf(input?.filter) };
  await authorize(actor, "issues:write", { ...scope, meta });
  const filter = parseInput(issueFilterSchema, input?.filter ?? {}, "bad_request:issues");
  const change = operatorChangeOf(parseInput(stateChangeSchema, input?.change, "bad_request:issue"));
  const now = new Date();
  await catchUp(now);
  const where = await whereFor(filter, await ownerResolver());
  const operationId = randomUUID();
  return mutate(
    actor,
    meta,
    scope,
    async (tx, audit) => {
      const rows = await lockIssues(tx, where, BULK_LIMIT + 1);
      if (rows.length > BULK_LIMIT)
        throw new AppError("bad_request:too_many", {
          userMessage: `More than ${BULK_LIMIT} groups match: narrow the filter and change them in parts.`,
        });
      let changed = 0;
      for (const row of rows) {
        const done = await applyChange(tx, row, change, actor, now);
        if (!done) continue;
        changed++;
        audit.push(changeAudit(row, done, change));
      }
      audit.push({
        ...scope,
        details: { filter, to: change.to, matched: rows.length, changed },
      });
      return { matched: rows.length, changed, operationId };
    },
    operationId,
  );
}

/** Assigns the group to a team of the DLQ owners or to a console user (null unassigns). Audited `issue.assign`. */
export async function assignIssue(
  actor: Actor,
  meta: RequestMeta,
  input: IssueRef & { assignee: Assignee | null },
): Promise<{ issue: IssueView; changed: boolean }> {
  const scope = { action: "issue.assign", ...scopeOf(input) };
  await authorize(actor, "issues:write", { ...scope, meta });
  const ref = parseInput(issueRefSchema, input, "bad_request:issue");
  const wanted = parseInput(assigneeSchema, input?.assignee ?? null, "bad_request:assignee");
  const now = new Date();
  const assignee = wanted ? await knownAssignee(wanted) : null;
  await ensureIssue(ref, now);
  const changed = await mutate(actor, meta, scope, async (tx, audit) => {
    const row = await lockIssue(tx, ref);
    if (!row) throw notFound();
    const text = assignee ? `${assignee.kind}:${assignee.name}` : null;
    const before = row.assignee ? `${row.assignee_kind}:${row.assignee}` : null;
    if (text === before) {
      audit.push({ ...scope, details: { assignee: text, changed: false } });
      return false;
    }
    await tx.$executeRawUnsafe(
      `UPDATE failure_issues SET assignee_kind = $4, assignee = $5, updated_at = $6::timestamptz
       WHERE connection_id = $1 AND queue = $2 AND group_key = $3`,
      ref.connectionId,
      ref.queue,
      ref.groupKey,
      assignee?.kind ?? null,
      assignee?.name ?? null,
      now.toISOString(),
    );
    const eventId = await addEvent(tx, ref, { kind: "assign", text }, actor, now);
    audit.push({ ...scope, details: { assignee: text, before, eventId, changed: true } });
    return true;
  });
  return { issue: await viewOf(actor, ref), changed };
}

/** A note on the group, stored as typed, shown as text (masked for roles under masking rules). Audited `issue.note`. */
export async function addIssueNote(
  actor: Actor,
  meta: RequestMeta,
  input: IssueRef & { text: string },
): Promise<IssueEventView> {
  const scope = { action: "issue.note", ...scopeOf(input) };
  await authorize(actor, "issues:write", { ...scope, meta });
  const ref = parseInput(issueRefSchema, input, "bad_request:issue");
  const { text } = parseInput(noteSchema, input, "bad_request:note");
  return addEntry(actor, meta, scope, ref, { kind: "note", text }, { length: text.length });
}

/** A link (http or https) on the group, shown as text with its host. Audited `issue.link` (with the host only). */
export async function addIssueLink(
  actor: Actor,
  meta: RequestMeta,
  input: IssueRef & { url: string },
): Promise<IssueEventView> {
  const scope = { action: "issue.link", ...scopeOf(input) };
  await authorize(actor, "issues:write", { ...scope, meta });
  const ref = parseInput(issueRefSchema, input, "bad_request:issue");
  const { url } = parseInput(linkSchema, input, "bad_request:link");
  return addEntry(actor, meta, scope, ref, { kind: "link", text: url }, { host: linkHost(url) });
}

// ---- internals

const notFound = () =>
  new AppError("not_found:issue", {
    userMessage: "There is no such failure group in this DLQ (scan the DLQ to find its groups).",
  });

function scopeOf(input: unknown): { connectionId: string | null; queue: string | null; target: string | null } {
  const i = (input ?? {}) as Record<string, unknown>;
  const s = (v: unknown) => (typeof v === "string" ? v.slice(0, 300) : null);
  return { connectionId: s(i.connectionId), queue: s(i.queue), target: s(i.groupKey) };
}

/** Syncs the DLQs whose issues are behind (never synced, or an ignore whose time passed); a failure only delays them. */
async function catchUp(now: Date): Promise<void> {
  for (const d of await dlqsBehind(now)) {
    try {
      await syncFailureIssues(getDb(), d.connectionId, d.queue, now);
    } catch (e) {
      console.warn(`[issues] could not bring ${d.connectionId}/${d.queue} up to date: ${String(e)}`);
    }
  }
}

/** A group indexed before its DLQ was last synced has no issue yet: sync the DLQ first. */
async function ensureIssue(ref: IssueRef, now: Date): Promise<void> {
  const db = getDb();
  const issue = await db.failureIssue.findUnique({
    where: { connectionId_queue_groupKey: ref },
    select: { state: true },
  });
  if (issue) return;
  const group = await db.triageGroup.findUnique({
    where: { connectionId_queue_groupKey: ref },
    select: { count: true },
  });
  if (group) await syncFailureIssues(db, ref.connectionId, ref.queue, now);
}

async function whereFor(filter: IssueFilter, ownerOf: OwnerOf): Promise<IssueWhere> {
  const where: IssueWhere = {
    states: filter.states,
    assignee: filter.assignee,
    connectionId: filter.connectionId,
    queue: filter.queue,
  };
  if (filter.brokerKind)
    where.connectionIds = loadConfig()
      .connections.filter((c) => c.kind === filter.brokerKind)
      .map((c) => c.id);
  if (filter.owner) {
    const team = filter.owner.toLowerCase();
    where.dlqs = (await issueDlqs()).filter((d) => ownerOf(d.connectionId, d.queue)?.team.toLowerCase() === team);
  }
  return where;
}

function brokerKinds(): Map<string, BrokerKind> {
  return new Map(loadConfig().connections.map((c) => [c.id, c.kind as BrokerKind]));
}

async function views(actor: Actor, rows: IssueRow[], ownerOf: OwnerOf): Promise<IssueView[]> {
  const policyOf = policies(actor);
  const kinds = brokerKinds();
  return Promise.all(
    rows.map(async (r) =>
      toIssueView(r, await policyOf(r.connection_id, r.queue), {
        brokerKind: kinds.get(r.connection_id) ?? null,
        owner: ownerOf(r.connection_id, r.queue),
      }),
    ),
  );
}

async function viewOf(actor: Actor, ref: IssueRef): Promise<IssueView> {
  const row = await queryIssue(ref, new Date());
  if (!row) throw notFound();
  const [view] = await views(actor, [row], await ownerResolver());
  return view;
}

function describeChange(change: OperatorChange, untilCount: number | null): string | null {
  if (change.to === "resolved") return change.note?.trim() || null;
  if (change.to !== "ignored") return null;
  const i = change.ignore;
  if (i.mode === "forever") return "ignored forever";
  if (i.mode === "until_time") return `ignored until ${i.until.toISOString()}`;
  return `ignored until ${i.letters} more letter${i.letters === 1 ? "" : "s"} (at ${untilCount} in all)`;
}

interface Applied {
  eventId: string;
  from: IssueState;
  to: IssueState;
}

/** An operator's change of one locked issue row, with its history entry; null when it changes nothing. */
async function applyChange(
  tx: Tx,
  row: IssueRow,
  change: OperatorChange,
  actor: Actor,
  now: Date,
): Promise<Applied | null> {
  const before = lifeOfRow(row);
  const patch = operatorTransition(before, change, now);
  if (!patch) return null;
  const cols = ignoreColumns(patch.ignore);
  const ref = { connectionId: row.connection_id, queue: row.queue, groupKey: row.group_key };
  await tx.$executeRawUnsafe(
    `UPDATE failure_issues SET state = $4, state_changed_at = $5::timestamptz, state_changed_by = $6,
       resolved_at = $7::timestamptz, resolve_note = $8, ignore_mode = $9, ignore_until = $10::timestamptz,
       ignore_until_count = $11, ignore_letters = $12, updated_at = $5::timestamptz
     WHERE connection_id = $1 AND queue = $2 AND group_key = $3`,
    ref.connectionId,
    ref.queue,
    ref.groupKey,
    patch.state,
    now.toISOString(),
    actor.email,
    patch.resolvedAt?.toISOString() ?? null,
    patch.resolveNote,
    cols.ignoreMode,
    cols.ignoreUntil?.toISOString() ?? null,
    cols.ignoreUntilCount,
    cols.ignoreLetters,
  );
  const text = describeChange(change, cols.ignoreUntilCount);
  const eventId = await addEvent(tx, ref, { kind: "state", from: before.state, to: patch.state, text }, actor, now);
  return { eventId, from: before.state, to: patch.state };
}

/** The audit row of one group's state change (the resolve note is in the history, not in the log). */
function changeAudit(row: IssueRow, done: Applied | null, change: OperatorChange): PendingAudit {
  return {
    action: "issue.state_change",
    connectionId: row.connection_id,
    queue: row.queue,
    target: row.group_key,
    details: done
      ? {
          from: done.from,
          to: done.to,
          eventId: done.eventId,
          ...(change.to === "ignored" ? { ignore: change.ignore.mode } : {}),
          ...(change.to === "resolved" ? { note: Boolean(change.note?.trim()) } : {}),
        }
      : { to: change.to, changed: false },
  };
}

async function addEvent(
  tx: Tx,
  ref: IssueRef,
  e: { kind: "state" | "note" | "link" | "assign"; from?: IssueState; to?: IssueState; text: string | null },
  actor: Actor,
  now: Date,
): Promise<string> {
  const [row] = await tx.$queryRawUnsafe<Array<{ id: string }>>(
    `INSERT INTO failure_issue_events (connection_id, queue, group_key, kind, from_state, to_state, text,
       actor_id, actor_email, actor_role, at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11::timestamptz) RETURNING id::text AS id`,
    ref.connectionId,
    ref.queue,
    ref.groupKey,
    e.kind,
    e.from ?? null,
    e.to ?? null,
    e.text,
    actor.id,
    actor.email,
    actor.role,
    now.toISOString(),
  );
  return row.id;
}

async function addEntry(
  actor: Actor,
  meta: RequestMeta,
  scope: AuditScope,
  ref: IssueRef,
  entry: { kind: "note" | "link"; text: string },
  details: Record<string, unknown>,
): Promise<IssueEventView> {
  const now = new Date();
  await ensureIssue(ref, now);
  const eventId = await mutate(actor, meta, scope, async (tx, audit) => {
    if (!(await lockIssue(tx, ref))) throw notFound();
    await tx.$executeRawUnsafe(
      `UPDATE failure_issues SET updated_at = $4::timestamptz WHERE connection_id = $1 AND queue = $2 AND group_key = $3`,
      ref.connectionId,
      ref.queue,
      ref.groupKey,
      now.toISOString(),
    );
    const id = await addEvent(tx, ref, entry, actor, now);
    audit.push({ ...scope, details: { ...details, eventId: id } });
    return id;
  });
  const policy = await policies(actor)(ref.connectionId, ref.queue);
  const event = (await queryIssueEvents(ref)).find((e) => e.id === eventId);
  if (!event) throw notFound();
  return toEventView(event, policy);
}

type PendingAudit = AuditScope & { details: Record<string, unknown> };

/**
 * Runs a change in one transaction with its audit rows (pushed by `work`, one operation id), so a
 * change is never on record without having happened, nor the reverse. A failure is audited too.
 */
async function mutate<T>(
  actor: Actor,
  meta: RequestMeta,
  scope: AuditScope,
  work: (tx: Tx, audit: PendingAudit[]) => Promise<T>,
  operationId: string = randomUUID(),
): Promise<T> {
  try {
    return await getDb().$transaction(async (tx) => {
      const audit: PendingAudit[] = [];
      const result = await work(tx, audit);
      await recordAuditBatchIn(
        tx,
        audit.map(
          (a): AuditEntry => ({
            actor: auditActor(actor),
            action: a.action,
            outcome: "success",
            connectionId: a.connectionId ?? null,
            queue: a.queue ?? null,
            target: a.target ?? null,
            requestId: meta.requestId,
            ip: meta.ip,
            operationId,
            details: meta.clientRequestId ? { ...a.details, clientRequestId: meta.clientRequestId } : a.details,
          }),
        ),
      );
      return result;
    }, TX);
  } catch (e) {
    try {
      await recordOutcome(actor, meta, scope, "failure", { error: errorCodeOf(e) });
    } catch (auditError) {
      console.error("audit write failed after a failed action", auditError);
    }
    throw e;
  }
}

/** A team named by the owners (console rows or config file), or an enabled console user. */
async function knownAssignee(a: Assignee): Promise<Assignee> {
  if (a.kind === "user") {
    const user = await getUserByEmail(a.name);
    if (!user || user.disabled)
      throw new AppError("bad_request:assignee", {
        userMessage: `There is no console user "${a.name.slice(0, 100)}".`,
      });
    return { kind: "user", name: user.email };
  }
  const rows = await getDb().dlqOwner.findMany({ select: { team: true } });
  const teams = [...rows.map((r) => r.team), ...configOwnerEntries(loadConfig().owners).map((o) => o.team)];
  const team = teams.find((t) => t.toLowerCase() === a.name.toLowerCase());
  if (!team)
    throw new AppError("bad_request:assignee", {
      userMessage: `No DLQ owner names the team "${a.name.slice(0, 100)}". Assign a team from the owners page, or a user.`,
    });
  return { kind: "owner", name: team };
}
