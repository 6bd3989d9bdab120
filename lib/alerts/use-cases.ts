import "server-only";
import { z } from "zod";
import { authorize } from "@/lib/auth/authorize";
import { can } from "@/lib/auth/permissions";
import type { Actor, RequestMeta } from "@/lib/auth/session";
import { loadConfig } from "@/lib/config";
import { getDb } from "@/lib/db";
import { AppError } from "@/lib/errors";
import type { AlertRule, Prisma } from "@/lib/generated/prisma/client";
import { audited } from "@/lib/use-case/audited";
import { attempt } from "./deliver";
import { failureText, readFailure, type FailureClass } from "./failure";
import { buildAlertMessage } from "./message";
import {
  describeCondition,
  describeScope,
  parseCondition,
  ruleInputSchema,
  ruleUpdateSchema,
  type AlertCondition,
  type RuleInput,
  type RuleUpdateInput,
} from "./rules";
import { checkWebhookTarget, defaultPolicy, targetOrigin } from "./target";

/**
 * Alert rules as every role reaches them: reading needs ops:read (the webhook only as its
 * origin: its path may hold a token), changes and test messages need ops:manage and are audited
 * with the rule's name and scope and the webhook's origin, never its URL.
 */
export interface AlertRuleView {
  id: string;
  name: string;
  kind: string;
  params: Record<string, unknown>;
  condition: string;
  connectionId: string | null;
  queuePattern: string | null;
  ownerTeam: string | null;
  scope: string;
  webhookOrigin: string;
  enabled: boolean;
  createdBy: string | null;
  createdAt: string;
  updatedAt: string;
}

export interface DeliveryView {
  id: string;
  connectionId: string | null;
  queue: string | null;
  event: string;
  state: string;
  attempts: number;
  statusCode: number | null;
  /** The last failure's class ("TLS: certificate name mismatch"), for every role; null: none. */
  errorClass: FailureClass | null;
  /** Its words (host names, addresses, the receiver's answer): admins only (ops:manage), else null. */
  errorDetail: string | null;
  createdAt: string;
  nextAttemptAt: string | null;
  deliveredAt: string | null;
}

export interface AlertStateView {
  connectionId: string;
  queue: string;
  state: string;
  since: string;
  value: string | null;
}

function conditionWords(kind: string, params: unknown): string {
  const p = parseCondition(kind, params);
  return p.ok ? describeCondition(p.condition) : `${kind} (unreadable threshold)`;
}

function toView(r: AlertRule): AlertRuleView {
  return {
    id: r.id,
    name: r.name,
    kind: r.kind,
    params: (r.params ?? {}) as Record<string, unknown>,
    condition: conditionWords(r.kind, r.params),
    connectionId: r.connectionId,
    queuePattern: r.queuePattern,
    ownerTeam: r.ownerTeam,
    scope: describeScope(r),
    webhookOrigin: targetOrigin(r.webhookUrl),
    enabled: r.enabled,
    createdBy: r.createdBy,
    createdAt: r.createdAt.toISOString(),
    updatedAt: r.updatedAt.toISOString(),
  };
}

/**
 * A delivery as `actor` may read it: the failure's class for everyone, its detail for admins only.
 * Decided here, on the server, so no page, client component or API that passes a view on can leak it.
 */
function toDelivery(
  actor: Actor,
  d: {
    id: bigint;
    connectionId: string;
    queue: string;
    event: string;
    state: string;
    attempts: number;
    statusCode: number | null;
    lastErrorClass: string | null;
    lastError: string | null;
    createdAt: Date;
    nextAttemptAt: Date;
    deliveredAt: Date | null;
  },
): DeliveryView {
  const failure = readFailure(d);
  return {
    id: d.id.toString(),
    connectionId: d.connectionId || null,
    queue: d.queue || null,
    event: d.event,
    state: d.state,
    attempts: d.attempts,
    statusCode: d.statusCode,
    errorClass: failure?.errorClass ?? null,
    errorDetail: failure && can(actor.role, "ops:manage") ? failure.detail : null,
    createdAt: d.createdAt.toISOString(),
    nextAttemptAt: d.state === "pending" ? d.nextAttemptAt.toISOString() : null,
    deliveredAt: d.deliveredAt?.toISOString() ?? null,
  };
}

/** What the audit log keeps of a rule: name, condition, scope and the webhook's origin. */
function auditShape(r: {
  name: string;
  kind: string;
  params: unknown;
  connectionId: string | null;
  queuePattern: string | null;
  ownerTeam: string | null;
  webhookUrl: string;
  enabled: boolean;
}) {
  return {
    name: r.name,
    kind: r.kind,
    params: r.params,
    scope: { connectionId: r.connectionId, queuePattern: r.queuePattern, ownerTeam: r.ownerTeam },
    webhook: targetOrigin(r.webhookUrl),
    enabled: r.enabled,
  };
}

function badInput(message: string): never {
  throw new AppError("bad_request:alert", { userMessage: message });
}

function notFound(): never {
  throw new AppError("not_found:alert", { userMessage: "There is no such alert rule (it may have been deleted)." });
}

/** A rule id as the client sent it, or not found (a malformed id names no rule). */
function ruleIdOf(id: string | null): string {
  const r = z.uuid().safeParse(id);
  return r.success ? r.data : notFound();
}

/** The checked fields of a rule, or `bad_request:alert` / `bad_request:webhook` with what to fix. */
function checkedRule<T extends typeof ruleInputSchema | typeof ruleUpdateSchema>(schema: T, input: unknown) {
  const r = schema.safeParse(input);
  if (!r.success) badInput(r.error.issues.map((i) => i.message).join("; "));
  const data = r.data as ReturnType<T["parse"]>;
  const cond = parseCondition(data.kind, data.params);
  if (!cond.ok) badInput(cond.message);
  if (data.connectionId && !loadConfig().connections.some((c) => c.id === data.connectionId)) {
    badInput(`There is no connection "${data.connectionId}". Leave the connection empty for every connection.`);
  }
  return { data, condition: cond.condition as AlertCondition };
}

/** Every rule with its firing count and last delivery (ops:read). */
export async function listAlertRules(actor: Actor, meta: RequestMeta) {
  await authorize(actor, "ops:read", { action: "alert.list", meta });
  const db = getDb();
  const rules = await db.alertRule.findMany({ orderBy: [{ name: "asc" }, { createdAt: "asc" }] });
  const firing = await db.alertState.groupBy({ by: ["ruleId"], where: { state: "firing" }, _count: { _all: true } });
  // A growth rule fires per failure group.
  const groupsFiring = await db.alertGroupState.groupBy({
    by: ["ruleId"],
    where: { state: "firing" },
    _count: { _all: true },
  });
  const firingOf = new Map<string, number>();
  for (const f of [...firing, ...groupsFiring]) firingOf.set(f.ruleId, (firingOf.get(f.ruleId) ?? 0) + f._count._all);
  const last = rules.length
    ? await db.$queryRawUnsafe<Array<{ rule_id: string; id: bigint }>>(
        `SELECT DISTINCT ON (rule_id) rule_id, id FROM alert_deliveries WHERE rule_id = ANY($1::uuid[]) ORDER BY rule_id, id DESC`,
        rules.map((r) => r.id),
      )
    : [];
  const lastRows = last.length
    ? await db.alertDelivery.findMany({ where: { id: { in: last.map((l) => BigInt(l.id)) } } })
    : [];
  const lastOf = new Map(lastRows.map((d) => [d.ruleId, toDelivery(actor, d)]));
  return rules.map((r) => ({ ...toView(r), firing: firingOf.get(r.id) ?? 0, lastDelivery: lastOf.get(r.id) ?? null }));
}

/** One rule, the DLQs it fires or fired for, and its delivery log, newest first (ops:read). */
export async function viewAlertRule(actor: Actor, meta: RequestMeta, input: { id: string }) {
  await authorize(actor, "ops:read", {
    action: "alert.view",
    target: typeof input?.id === "string" ? input.id : null,
    meta,
  });
  const id = ruleIdOf(typeof input?.id === "string" ? input.id : null);
  const db = getDb();
  const rule = await db.alertRule.findUnique({ where: { id } });
  if (!rule) notFound();
  const states = await db.alertState.findMany({
    where: { ruleId: id },
    orderBy: [{ state: "asc" }, { since: "desc" }],
    take: 200,
  });
  const deliveries = await db.alertDelivery.findMany({ where: { ruleId: id }, orderBy: { id: "desc" }, take: 100 });
  return {
    rule: toView(rule),
    states: states.map(
      (s): AlertStateView => ({
        connectionId: s.connectionId,
        queue: s.queue,
        state: s.state,
        since: s.since.toISOString(),
        value: s.value,
      }),
    ),
    deliveries: deliveries.map((d) => toDelivery(actor, d)),
  };
}

/** Creates a rule (ops:manage); the webhook target is checked first (lib/alerts/target.ts). Audited `alert.rule_create`. */
export async function createAlertRule(actor: Actor, meta: RequestMeta, input: RuleInput) {
  await authorize(actor, "ops:manage", { action: "alert.rule_create", meta });
  const name = typeof input?.name === "string" ? input.name.trim().slice(0, 100) : null;
  return audited(
    actor,
    meta,
    { action: "alert.rule_create", target: name },
    async () => {
      const { data, condition } = checkedRule(ruleInputSchema, input);
      await checkWebhookTarget(data.webhookUrl, defaultPolicy());
      const r = await getDb().alertRule.create({
        data: {
          name: data.name,
          kind: condition.kind,
          params: condition.params,
          connectionId: data.connectionId,
          queuePattern: data.queuePattern,
          ownerTeam: data.ownerTeam,
          webhookUrl: data.webhookUrl,
          enabled: data.enabled,
          createdBy: actor.email,
        },
      });
      return r;
    },
    (r) => ({ ruleId: r.id, ...auditShape(r) }),
  ).then(toView);
}

/**
 * Changes a rule (ops:manage). An empty webhook URL keeps the saved one. Disabling a rule, or
 * changing what it watches, forgets its states without messages (it starts over when it runs
 * again); a new threshold keeps them, so a DLQ that no longer crosses it resolves with a message.
 * Audited `alert.rule_update` with the rule before and after.
 */
export async function updateAlertRule(actor: Actor, meta: RequestMeta, input: RuleUpdateInput) {
  const id = typeof input?.id === "string" ? input.id : null;
  await authorize(actor, "ops:manage", { action: "alert.rule_update", target: id, meta });
  let before: AlertRule | null = null;
  return audited(
    actor,
    meta,
    { action: "alert.rule_update", target: id },
    async () => {
      const { data, condition } = checkedRule(ruleUpdateSchema, input);
      const db = getDb();
      before = await db.alertRule.findUnique({ where: { id: data.id } });
      if (!before) notFound();
      if (data.webhookUrl) await checkWebhookTarget(data.webhookUrl, defaultPolicy());
      const restart = !data.enabled || condition.kind !== before.kind;
      const update = db.alertRule.update({
        where: { id: data.id },
        data: {
          name: data.name,
          kind: condition.kind,
          params: condition.params,
          connectionId: data.connectionId,
          queuePattern: data.queuePattern,
          ownerTeam: data.ownerTeam,
          webhookUrl: data.webhookUrl ?? before.webhookUrl,
          enabled: data.enabled,
        },
      });
      const after = restart
        ? (
            await db.$transaction([
              update,
              db.alertState.deleteMany({ where: { ruleId: data.id } }),
              db.alertGroupState.deleteMany({ where: { ruleId: data.id } }),
            ])
          )[0]
        : await update;
      return after;
    },
    (after) => ({ ruleId: after.id, before: before ? auditShape(before) : null, after: auditShape(after) }),
  ).then(toView);
}

/** Deletes a rule with its states and delivery log (ops:manage). Audited `alert.rule_delete` with what it was. */
export async function deleteAlertRule(actor: Actor, meta: RequestMeta, input: { id: string }) {
  const id = typeof input?.id === "string" ? input.id : null;
  await authorize(actor, "ops:manage", { action: "alert.rule_delete", target: id, meta });
  return audited(
    actor,
    meta,
    { action: "alert.rule_delete", target: id },
    async () => {
      const db = getDb();
      const rule = await db.alertRule.findUnique({ where: { id: ruleIdOf(id) } });
      if (!rule) notFound();
      await db.alertRule.delete({ where: { id: rule.id } });
      return rule;
    },
    (r) => ({ ruleId: r.id, ...auditShape(r) }),
  ).then((r) => ({ id: r.id }));
}

/**
 * Sends one test message to a rule's webhook now (ops:manage), whether or not the rule is enabled:
 * one attempt, no retries, logged with the rule's deliveries. A receiver's refusal is a result
 * (the admin reads it), not an error. Audited `alert.test_send` with the outcome.
 */
export async function sendTestAlert(actor: Actor, meta: RequestMeta, input: { id: string }) {
  const id = typeof input?.id === "string" ? input.id : null;
  await authorize(actor, "ops:manage", { action: "alert.test_send", target: id, meta });
  return audited(
    actor,
    meta,
    { action: "alert.test_send", target: id },
    async () => {
      const db = getDb();
      const rule = await db.alertRule.findUnique({ where: { id: ruleIdOf(id) } });
      if (!rule) notFound();
      const payload = buildAlertMessage({
        event: "test",
        rule: { name: rule.name, condition: `${conditionWords(rule.kind, rule.params)}, ${describeScope(rule)}` },
        dlq: null,
        owner: null,
        value: null,
        link: null,
        at: new Date(),
      });
      const r = await attempt(rule.webhookUrl, payload, defaultPolicy());
      await db.alertDelivery.create({
        data: {
          ruleId: rule.id,
          connectionId: "",
          queue: "",
          event: "test",
          payload: payload as unknown as Prisma.InputJsonObject,
          state: r.ok ? "delivered" : "failed",
          attempts: 1,
          statusCode: r.statusCode,
          lastErrorClass: r.ok ? null : r.failure.errorClass,
          lastError: r.ok ? null : r.failure.detail,
          deliveredAt: r.ok ? new Date() : null,
        },
      });
      return { rule, delivered: r.ok, statusCode: r.statusCode, error: r.ok ? null : failureText(r.failure) };
    },
    (r) => ({
      ruleId: r.rule.id,
      name: r.rule.name,
      webhook: targetOrigin(r.rule.webhookUrl),
      delivered: r.delivered,
      statusCode: r.statusCode,
    }),
  ).then((r) => ({ delivered: r.delivered, statusCode: r.statusCode, error: r.error }));
}

/** What the rule form offers: the configured connections and the owning teams known (ops:read; the pages that show the form check ops:manage first). */
export async function alertFormOptions(actor: Actor, meta: RequestMeta) {
  await authorize(actor, "ops:read", { action: "alert.list", meta });
  const config = loadConfig();
  const consoleTeams = await getDb().dlqOwner.findMany({ select: { team: true }, distinct: ["team"] });
  const teams = [...new Set([...consoleTeams.map((t) => t.team), ...config.owners.map((o) => o.team)])].sort((a, b) =>
    a.localeCompare(b),
  );
  return { connections: config.connections.map((c) => ({ id: c.id, name: c.name ?? c.id })), teams };
}
