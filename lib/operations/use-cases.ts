import "server-only";
import { z } from "zod";
import { authorize } from "@/lib/auth/authorize";
import type { Actor, RequestMeta } from "@/lib/auth/session";
import { loadConfig } from "@/lib/config";
import { getDb } from "@/lib/db";
import { AppError } from "@/lib/errors";
import { checkGlob } from "@/lib/glob";
import { audited } from "@/lib/use-case/audited";
import { queryFindings, type FindingFilter, type FindingRow } from "./findings";
import { configOwnerEntries, ownerResolver } from "./owners";
import { byAttention, overviewRows, type DlqOverviewRow } from "./queries";
import { CHART_RANGES, dlqSeries, type ChartRange, type SeriesPoint } from "./samples";
import { sampledTopFailures } from "./top-failure-sample";
import type { TopFailure } from "./top-failure-view";
import { attentionByDlq, type DlqAttention, scannedTopFailures } from "./top-failures";
import { parseInput } from "@/lib/use-case/input";

/**
 * Operations use cases: the overview, a DLQ's charts, findings (acknowledged by operators) and
 * owners (set by admins). authorize → validate → act → audit, like every use case; reads that
 * every role may make are not audited.
 */
export interface Overview {
  rows: DlqOverviewRow[];
  /** "Lost in" below this many hours is urgent. */
  deadlineWarnHours: number;
  sampleIntervalSeconds: number;
  /** The newest round that reached any broker; null before the first. */
  lastSampledAt: string | null;
  /** Each DLQ's top failure: from its last scan, else from a sample where reading is free; absent otherwise. */
  failures: TopFailure[];
  /** Each DLQ's failure groups that are new or regressed (absent: none). */
  attention: DlqAttention[];
}

/** Every sampled DLQ, needs-attention first. */
export async function viewOverview(actor: Actor, meta: RequestMeta): Promise<Overview> {
  await authorize(actor, "ops:read", { action: "ops.overview", meta });
  const cfg = loadConfig().operations;
  const [ownerOf, scanned] = await Promise.all([ownerResolver(), scannedTopFailures(actor.role)]);
  const [sampled, status, attention] = await Promise.all([
    sampledTopFailures(actor.role, scanned),
    overviewRows(ownerOf),
    attentionByDlq(),
  ]);
  const rows = byAttention(status, cfg.deadlineWarnHours);
  const failures = [...scanned, ...sampled];
  const last = rows.reduce<string | null>((m, r) => (m === null || r.sampledAt > m ? r.sampledAt : m), null);
  return {
    rows,
    deadlineWarnHours: cfg.deadlineWarnHours,
    sampleIntervalSeconds: cfg.sampleIntervalSeconds,
    lastSampledAt: last,
    failures,
    attention,
  };
}

const seriesSchema = z.object({
  connectionId: z.string().min(1).max(100),
  queue: z.string().min(1).max(1000),
  range: z.enum(Object.keys(CHART_RANGES) as [ChartRange, ...ChartRange[]]).default("day"),
});

/** One DLQ's last sampled figures (the line under every DLQ page's header): its status row only. */
export async function viewDlqStatus(
  actor: Actor,
  meta: RequestMeta,
  input: { connectionId: string; queue: string },
): Promise<DlqOverviewRow | null> {
  await authorize(actor, "ops:read", {
    action: "ops.dlq",
    connectionId: input?.connectionId ?? null,
    queue: input?.queue ?? null,
    meta,
  });
  const p = parseInput(seriesSchema.omit({ range: true }), input, "bad_request:range");
  return (await overviewRows(await ownerResolver(), new Date(), getDb(), p))[0] ?? null;
}

export interface DlqOperations {
  range: ChartRange;
  points: SeriesPoint[];
  status: DlqOverviewRow | null;
}

/** One DLQ's figures and its depth and inflow over an hour, a day or a week. */
export async function viewDlqOperations(
  actor: Actor,
  meta: RequestMeta,
  input: z.input<typeof seriesSchema>,
): Promise<DlqOperations> {
  await authorize(actor, "ops:read", {
    action: "ops.dlq",
    connectionId: input?.connectionId ?? null,
    queue: input?.queue ?? null,
    meta,
  });
  const p = parseInput(seriesSchema, input, "bad_request:range");
  const [points, rows] = await Promise.all([
    dlqSeries(p.connectionId, p.queue, p.range),
    overviewRows(await ownerResolver(), new Date(), getDb(), p),
  ]);
  return { range: p.range, points, status: rows[0] ?? null };
}

const findingFilterSchema = z.object({
  state: z.enum(["open", "resolved", "all"]).optional(),
  connectionId: z.string().max(100).optional(),
  queue: z.string().max(1000).optional(),
  severity: z.enum(["critical", "warning", "info"]).optional(),
});

export async function listFindings(actor: Actor, meta: RequestMeta, filter: FindingFilter = {}): Promise<FindingRow[]> {
  await authorize(actor, "ops:read", { action: "ops.findings", meta });
  const [rows, ownerOf] = await Promise.all([
    queryFindings(parseInput(findingFilterSchema, filter, "bad_request:filter")),
    ownerResolver(),
  ]);
  return rows.map((f) => ({ ...f, ownerTeam: f.queue ? (ownerOf(f.connectionId, f.queue)?.team ?? null) : null }));
}

/** An operator says they have seen a finding; it stays listed until the fault is fixed. Audited `finding.acknowledge`. */
export async function acknowledgeFinding(
  actor: Actor,
  meta: RequestMeta,
  input: { id: string },
): Promise<{ id: string }> {
  await authorize(actor, "ops:acknowledge", {
    action: "finding.acknowledge",
    target: typeof input?.id === "string" ? input.id : null,
    meta,
  });
  const { id } = parseInput(z.object({ id: z.string().uuid("Unknown finding.") }), input, "bad_request:finding");
  const row = await getDb().dlqFinding.findUnique({ where: { id } });
  if (!row) throw new AppError("not_found:finding", { userMessage: "That finding does not exist." });
  return audited(
    actor,
    meta,
    { action: "finding.acknowledge", connectionId: row.connectionId, queue: row.queue, target: id },
    async () => {
      await getDb().dlqFinding.update({
        where: { id },
        data: { acknowledgedBy: actor.email, acknowledgedAt: new Date() },
      });
      return { id };
    },
    () => ({ code: row.code, object: row.object, severity: row.severity }),
  );
}

const kindSchema = z.object({
  code: z.string().regex(/^[a-z0-9_.-]{1,200}$/i, "Unknown kind of finding."),
  connectionId: z.string().min(1).max(100).optional(),
});

/**
 * Acknowledges every open, not yet acknowledged finding of one kind (optionally on one
 * connection) at once. Audited as one `finding.acknowledge_all` row naming the kind and the count.
 */
export async function acknowledgeFindingKind(
  actor: Actor,
  meta: RequestMeta,
  input: { code: string; connectionId?: string },
): Promise<{ code: string; count: number }> {
  await authorize(actor, "ops:acknowledge", {
    action: "finding.acknowledge_all",
    connectionId: typeof input?.connectionId === "string" ? input.connectionId : null,
    target: typeof input?.code === "string" ? input.code.slice(0, 200) : null,
    meta,
  });
  const p = parseInput(kindSchema, input, "bad_request:finding");
  return audited(
    actor,
    meta,
    { action: "finding.acknowledge_all", connectionId: p.connectionId ?? null, target: p.code },
    async () => {
      const r = await getDb().dlqFinding.updateMany({
        where: {
          code: p.code,
          resolvedAt: null,
          acknowledgedAt: null,
          ...(p.connectionId ? { connectionId: p.connectionId } : {}),
        },
        data: { acknowledgedBy: actor.email, acknowledgedAt: new Date() },
      });
      return { code: p.code, count: r.count };
    },
    (r) => ({ code: r.code, count: r.count }),
  );
}

export interface OwnerEntryView {
  id: string | null;
  position: number;
  connectionPattern: string | null;
  queuePattern: string;
  team: string;
  contact: string;
  source: "console" | "config";
}

/** The console's owner rows (editable) then the config file's (read-only), in the order they match. */
export async function listOwners(actor: Actor, meta: RequestMeta): Promise<OwnerEntryView[]> {
  await authorize(actor, "ops:read", { action: "owner.list", meta });
  const rows = await getDb().dlqOwner.findMany({ orderBy: [{ position: "asc" }, { createdAt: "asc" }] });
  return [
    ...rows.map((r) => ({
      id: r.id,
      position: r.position,
      connectionPattern: r.connectionPattern,
      queuePattern: r.queuePattern,
      team: r.team,
      contact: r.contact,
      source: "console" as const,
    })),
    ...configOwnerEntries(loadConfig().owners).map((o, i) => ({
      id: null,
      position: i,
      connectionPattern: o.connection,
      queuePattern: o.queue,
      team: o.team,
      contact: o.contact,
      source: "config" as const,
    })),
  ];
}

const glob = (what: string) =>
  z
    .string()
    .trim()
    .min(1, `Give ${what}.`)
    .max(300)
    .refine((v) => !/[\u0000-\u001f]/.test(v), `${what} cannot hold control characters.`);

export const ownerSchema = z.object({
  id: z.string().uuid().optional(),
  position: z.coerce.number().int().min(0).max(100_000).default(0),
  connectionPattern: z
    .string()
    .trim()
    .max(300)
    .superRefine(checkGlob("The connection pattern"))
    .optional()
    .transform((v) => (v ? v : null)),
  queuePattern: glob("a DLQ name pattern").superRefine(checkGlob("The DLQ name pattern")),
  team: z.string().trim().min(1, "Give the team's name.").max(100),
  contact: z.string().trim().min(1, "Give a way to reach the team.").max(300),
});

/** Creates or changes an owner row; audited `owner.save`. */
export async function saveOwner(
  actor: Actor,
  meta: RequestMeta,
  input: z.input<typeof ownerSchema>,
): Promise<{ id: string }> {
  await authorize(actor, "ops:manage", { action: "owner.save", meta });
  const p = parseInput(ownerSchema, input, "bad_request:owner");
  const data = {
    position: p.position,
    connectionPattern: p.connectionPattern,
    queuePattern: p.queuePattern,
    team: p.team,
    contact: p.contact,
  };
  return audited(
    actor,
    meta,
    { action: "owner.save", target: p.id ?? null },
    async () => {
      if (p.id) {
        const done = await getDb().dlqOwner.updateMany({ where: { id: p.id }, data });
        if (done.count === 0)
          throw new AppError("not_found:owner", { userMessage: "That owner entry no longer exists." });
        return { id: p.id };
      }
      const row = await getDb().dlqOwner.create({ data: { ...data, createdBy: actor.email } });
      return { id: row.id };
    },
    (r) => ({ id: r.id, ...data }),
  );
}

/** Audited `owner.delete`. */
export async function deleteOwner(actor: Actor, meta: RequestMeta, input: { id: string }): Promise<{ id: string }> {
  await authorize(actor, "ops:manage", {
    action: "owner.delete",
    target: typeof input?.id === "string" ? input.id : null,
    meta,
  });
  const { id } = parseInput(z.object({ id: z.string().uuid("Unknown owner entry.") }), input, "bad_request:owner");
  return audited(
    actor,
    meta,
    { action: "owner.delete", target: id },
    async () => {
      const row = await getDb().dlqOwner.findUnique({ where: { id } });
      if (!row) throw new AppError("not_found:owner", { userMessage: "That owner entry no longer exists." });
      await getDb().dlqOwner.delete({ where: { id } });
      return { id };
    },
    () => ({ id }),
  );
}
