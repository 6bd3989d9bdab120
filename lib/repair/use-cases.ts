import "server-only";
import { createHash, randomUUID } from "node:crypto";
import { z } from "zod";
import { recordAudit, recordAuditBatch, type AuditEntry } from "@/lib/audit";
import { writeArchive } from "@/lib/archive/store";
import { authorize } from "@/lib/auth/authorize";
import type { Actor, RequestMeta } from "@/lib/auth/session";
import { REDRIVE_HEADERS } from "@/lib/brokers/contract/markers";
import type { BrokerAdapter } from "@/lib/brokers/contract/adapter";
import type { DlqSummary } from "@/lib/brokers/contract/dlq";
import type { HeaderEntry, Letter, LetterCopy } from "@/lib/brokers/contract/letter";
import type { MoveOutcome, MoveResult, RedriveTarget } from "@/lib/brokers/contract/move";
import { getDb } from "@/lib/db";
import { AppError, asAppError, loggableError } from "@/lib/errors";
import { maskingPolicy, type MaskingPolicy } from "@/lib/masking/policy";
import { visibleSha256 } from "@/lib/masking/digest";
import { valueText } from "@/lib/text";
import { auditActor, errorCodeOf } from "@/lib/use-case/audited";
import { adapterFor, withTimeout } from "@/lib/use-case/connection";
import { assertRepairAllowed, auditDiffMasking } from "./group";
import { headerDiff, headerSecrets, payloadDiff, secretsOf, type DiffMasking } from "./diff";
import type { HeaderDiffEntry, PayloadDiff } from "./diff-types";
import {
  bodyBytes,
  headerEditProblems,
  lockedFields,
  looksEditedFromMask,
  payloadKindOf,
  payloadMaskedFor,
  type EditProblem,
  type LockedField,
  type PayloadKind,
} from "./policy";
import { parseInput } from "@/lib/use-case/input";

/**
 * Repair and resubmit one letter: an admin edits a letter's payload or unlocked headers
 * and sends the copy on; the copy is confirmed at the target first, then the original goes to the
 * encrypted archive, and only then leaves the DLQ (the adapter's `moveLetters` with `repair` and
 * `beforeRemove`). Every entry path (page, action, route, job) calls these, so the permission, the
 * config switch, the locked fields and the audit rows cannot be skipped.
 */

const READ_TIMEOUT_MS = 30_000;
/** A letter larger than this is not read whole for a repair (the broker's own limit applies below it). */
const MAX_REPAIR_READ_BYTES = 10 * 1024 * 1024;

const bodyEditSchema = z.union([
  z.object({ kind: z.enum(["json", "text"]), text: z.string().max(MAX_REPAIR_READ_BYTES) }),
  z.object({ kind: z.literal("file"), base64: z.string().max(Math.ceil((MAX_REPAIR_READ_BYTES * 4) / 3) + 4) }),
]);

const targetSchema = z.union([
  z.object({ kind: z.literal("origin") }),
  z.object({ kind: z.literal("queue"), name: z.string().trim().min(1).max(500) }),
]);

const editSchema = z.object({
  connectionId: z.string().min(1).max(200),
  queue: z.string().min(1).max(500),
  letterId: z.string().min(1).max(1000),
  body: bodyEditSchema.optional(),
  setHeaders: z.record(z.string(), z.string()).optional(),
  removeHeaders: z.array(z.string()).max(200).optional(),
  /** A new correlation id, where the operator asks for one (many consumers correlate on it). */
  newCorrelationId: z.boolean().optional(),
  target: targetSchema.optional(),
  /**
   * Reveal the letter for this request (payload:reveal, audited `payload.reveal` with the reason):
   * without it, values masking hides from the role are locked, and the answer is worked out as if
   * the role saw only the masked letter.
   */
  reveal: z
    .object({
      reason: z
        .string()
        .trim()
        .min(10, "Give a reason of at least 10 characters for the reveal.")
        .max(500, "Keep the reveal's reason under 500 characters."),
    })
    .optional(),
});

export const planRepairSchema = editSchema.extend({ reason: z.string().max(2000).optional() });
export const repairLetterSchema = editSchema.extend({
  reason: z
    .string()
    .trim()
    .min(3, "Give a reason of at least 3 characters.")
    .max(2000, "Keep the reason under 2000 characters."),
});

export type PlanRepairInput = z.input<typeof planRepairSchema>;
export type RepairLetterInput = z.input<typeof repairLetterSchema>;

/** What the letter is, as far as the editor needs to know (nothing masking would hide). */
export interface RepairLetterSummary {
  id: string;
  messageId: string | null;
  correlationId: string | null;
  contentType: string | null;
  payloadKind: PayloadKind;
  bodySize: number;
  /** The digest the actor's role may see (lib/masking/digest.ts). */
  sha256: string;
  originQueue: string | null;
}

export interface RepairDiff {
  payload: PayloadDiff;
  headers: HeaderDiffEntry[];
  newCorrelationId: boolean;
}

export interface RepairPlan {
  /** True when the edit may be sent as it is; otherwise `problems` say what to fix. */
  ok: boolean;
  problems: EditProblem[];
  letter: RepairLetterSummary;
  locked: LockedField[];
  /** The diff, masked for the actor's role. */
  diff: RepairDiff;
  target: RedriveTarget;
  /** Where "origin" leads, as far as the letter tells (the adapter resolves it when sending). */
  originQueue: string | null;
  /** The broker's payload limit, for the editor. */
  maxBodyBytes: number | null;
}

export interface RepairResult {
  outcome: MoveOutcome;
  /** The copy's identity at the target (for the link to it), when it moved. */
  copyId: string | null;
  /** The copy's letter id in a DLQ of this connection if it fails again (`RepairOps.copyLetterId`): the link to it. */
  copyLetterId: string | null;
  destination: string | null;
  /** Operator words when the outcome is not "moved": the original is still in the DLQ. */
  reason: string | null;
  /** The audit operation (and archive) id. */
  operationId: string;
}

type Scope = { action: string; connectionId: string | null; queue: string | null; target: string | null };

const scopeOf = (action: string, input: { connectionId?: unknown; queue?: unknown; letterId?: unknown }): Scope => ({
  action,
  connectionId: typeof input.connectionId === "string" ? input.connectionId : null,
  queue: typeof input.queue === "string" ? input.queue : null,
  target: typeof input.letterId === "string" ? input.letterId : null,
});

function entry(
  actor: Actor,
  meta: RequestMeta,
  scope: Scope,
  outcome: AuditEntry["outcome"],
  details: Record<string, unknown>,
  operationId?: string,
): AuditEntry {
  return {
    actor: auditActor(actor),
    action: scope.action,
    outcome,
    operationId,
    connectionId: scope.connectionId,
    queue: scope.queue,
    target: scope.target,
    requestId: meta.requestId,
    ip: meta.ip,
    details: meta.clientRequestId ? { ...details, clientRequestId: meta.clientRequestId } : details,
  };
}

/** A refusal after authorization (switch off, bad edit, broker away): audited, "denied" when it is a forbidden:* one. */
async function auditRefusal(
  actor: Actor,
  meta: RequestMeta,
  scope: Scope,
  e: unknown,
  operationId?: string,
  extra: Record<string, unknown> = {},
) {
  const code = errorCodeOf(e);
  try {
    await recordAudit(
      entry(
        actor,
        meta,
        scope,
        code.startsWith("forbidden:") ? "denied" : "failure",
        { error: code, ...extra },
        operationId,
      ),
    );
  } catch (auditError) {
    console.error("audit write failed after a refused repair", loggableError(auditError));
  }
}
interface Prepared {
  adapter: BrokerAdapter;
  dlq: DlqSummary;
  letter: Letter;
  policy: MaskingPolicy;
  /** The request revealed the letter (audited): masked fields are editable. */
  revealed: boolean;
  locked: LockedField[];
  problems: EditProblem[];
  newBody: Uint8Array | null;
  setHeaders: Record<string, string>;
  removeHeaders: string[];
  target: RedriveTarget;
}

/**
 * Everything both use cases check before anything moves: the config switch, the broker's
 * capability, a DLQ whose reads cost letters (never read here), the letter itself, and the edit
 * against the locked fields and the payload rules. Throws for what stops the repair outright;
 * returns edit problems for the caller to report.
 */
async function prepare(actor: Actor, input: z.infer<typeof editSchema>, revealed: boolean): Promise<Prepared> {
  const { connectionId, queue, letterId } = input;
  const adapter = adapterFor(connectionId);
  assertRepairAllowed(connectionId, queue, adapter);
  const dlq = await withTimeout(adapter.describeDlq(queue), READ_TIMEOUT_MS, "describeDlq");
  if (dlq.readRisk) {
    throw new AppError("confirmation_required:read", {
      userMessage:
        "Reading this DLQ costs letters, so the console does not read it to repair a letter. Move its letters to safety from the DLQ's page, then repair the letter in the safe queue.",
    });
  }
  const readLimit = Math.min(adapter.capabilities.maxBodyBytes ?? MAX_REPAIR_READ_BYTES, MAX_REPAIR_READ_BYTES);
  // One byte past the limit tells a letter that fits from one that does not.
  const letter = await withTimeout(
    adapter.getLetter(queue, letterId, { maxBodyBytes: readLimit + 1 }),
    READ_TIMEOUT_MS,
    "getLetter",
  );
  if (!letter) throw new AppError("not_found:letter", { userMessage: "This letter is no longer in the DLQ." });
  if (letter.handled)
    throw new AppError("conflict:repair", {
      userMessage: `This letter was already ${letter.handled.outcome} by the console; there is nothing left to repair.`,
    });
  if (letter.bodyTruncated || letter.body.length < letter.bodySize) {
    throw new AppError("bad_request:repair-too-large", {
      userMessage: `This letter's payload (${letter.bodySize} bytes) is larger than the console repairs (${readLimit} bytes).`,
    });
  }

  const policy = await maskingPolicy(actor.role, connectionId, queue);
  // Masked fields are editable only after a reveal in this request, never because the role may reveal:
  // an edit of a masked value answers for it ("unchanged" when the guess is right).
  const locked = lockedFields(letter, { rules: policy.rules, hashKey: policy.hashKey, canReveal: revealed });
  if (policy.payload === "none" && !locked.some((l) => l.kind === "payload")) {
    locked.push({
      kind: "payload",
      name: "payload",
      reason: "masked",
      message: "Payloads of this DLQ are not shown to your role.",
    });
  }
  const setHeaders = input.setHeaders ?? {};
  const removeHeaders = input.removeHeaders ?? [];
  const problems = headerEditProblems(letter.headers, locked, { setHeaders, removeHeaders });
  let newBody: Uint8Array | null = null;
  if (input.body) {
    const lock = locked.find((l) => l.kind === "payload");
    if (lock) problems.push({ field: "payload", message: `The payload cannot be changed: ${lock.message}` });
    else {
      const r = bodyBytes(letter, input.body, {
        maxBodyBytes: adapter.capabilities.maxBodyBytes,
        binaryBodies: adapter.capabilities.binaryBodies,
      });
      if (!r.ok) problems.push(r.problem);
      else if (payloadMaskedFor(letter.body, letter.contentType, policy) && looksEditedFromMask(letter.body, r.bytes)) {
        problems.push({
          field: "payload",
          message:
            "The new payload holds masked values ([hidden], [hash:…]): it looks edited from the masked view. Reveal the payload first and edit the real values.",
        });
      } else if (!Buffer.from(r.bytes).equals(Buffer.from(letter.body))) newBody = r.bytes;
    }
  }
  const headersChange = headerDiff(letter.headers, { setHeaders, removeHeaders }).length > 0;
  if (problems.length === 0 && !newBody && !headersChange && !input.newCorrelationId) {
    problems.push({ field: "letter", message: "The edit changes nothing. To send the letter as it is, redrive it." });
  }
  return {
    adapter,
    dlq,
    letter,
    policy,
    revealed,
    locked,
    problems,
    newBody,
    setHeaders,
    removeHeaders,
    target: input.target ?? { kind: "origin" },
  };
}

/**
 * The diff masked with `mask`. After a reveal, a value the edit copied from a masked one (in the
 * payload or a header) is hidden too; without one, nothing masked could be edited, and a value typed
 * in is a guess whose hiding would answer it.
 */
function diffFor(p: Prepared, mask: DiffMasking, newCorrelationId: boolean): RepairDiff {
  const kind = payloadKindOf(p.letter.body, p.letter.contentType);
  // A locked header's edit is a problem, never part of the diff: compared with the real value, its
  // entry (or its absence, when the value typed is the same) would answer for what the lock hides.
  const locked = new Set(p.locked.filter((l) => l.kind === "header").map((l) => l.name.toLowerCase()));
  const open = (name: string) => !locked.has(name.toLowerCase());
  const setHeaders = Object.fromEntries(Object.entries(p.setHeaders).filter(([name]) => open(name)));
  const removeHeaders = p.removeHeaders.filter(open);
  let secrets: ReturnType<typeof secretsOf> | undefined;
  if (p.revealed) {
    secrets = secretsOf(p.letter.body, kind, mask);
    secrets.absorb(headerSecrets(p.letter.headers, mask));
  }
  return {
    payload: payloadDiff(p.letter.body, p.newBody, kind, mask, { secrets }),
    headers: headerDiff(p.letter.headers, { setHeaders, removeHeaders }, mask, secrets ?? null),
    newCorrelationId,
  };
}

/**
 * A reveal asked for with the edit: authorized (payload:reveal, a refusal audited under
 * `payload.reveal`) before anything is read. True when the request reveals.
 */
async function authorizeReveal(
  actor: Actor,
  meta: RequestMeta,
  scope: Scope,
  input: z.infer<typeof editSchema>,
): Promise<boolean> {
  if (!input.reveal) return false;
  await authorize(actor, "payload:reveal", { ...scope, action: "payload.reveal", meta });
  return true;
}

/** The reveal's audit row (`payload.reveal`, with the reason and what it was for), once the letter was read unmasked. */
async function recordReveal(
  actor: Actor,
  meta: RequestMeta,
  scope: Scope,
  input: z.infer<typeof editSchema>,
  sha256: string,
) {
  await recordAudit(
    entry(actor, meta, { ...scope, action: "payload.reveal" }, "success", {
      reason: input.reveal!.reason,
      for: scope.action,
      sha256,
    }),
  );
}

/** What the audit log records of an edit: what it touches and where (paths, header names), never values. */
function editSummary(input: z.infer<typeof editSchema>, diff: RepairDiff, revealed: boolean): Record<string, unknown> {
  const d = diff.payload;
  const changes =
    d.kind === "json"
      ? d.entries.map((e) => ({ op: e.op, path: e.path }))
      : d.kind === "text"
        ? d.hunk
          ? [{ op: "change", line: d.hunk.line }]
          : []
        : d.kind === "binary"
          ? [{ op: "replace", beforeSize: d.beforeSize, afterSize: d.afterSize }]
          : [];
  return {
    payload: input.body ? { kind: input.body.kind, changes } : null,
    setHeaders: Object.keys(input.setHeaders ?? {}),
    removeHeaders: input.removeHeaders ?? [],
    newCorrelationId: input.newCorrelationId === true,
    revealed,
  };
}

function headerNumber(headers: HeaderEntry[], name: string): string | null {
  const h = headers.find((x) => x.name.toLowerCase() === name);
  return h ? valueText(h.value) : null;
}

/** The letter's redrive count so far (the RabbitMQ/Kafka header, or the count inside SQS's combined marker). */
function previousCount(headers: HeaderEntry[]): number {
  const own = /^\s*(\d{1,9})/.exec(headerNumber(headers, REDRIVE_HEADERS.redriveCount) ?? "");
  if (own) return Number(own[1]);
  const combined = /(?:count|redriveCount)"?\s*[=:]\s*(\d{1,9})/.exec(headerNumber(headers, "x-dlq-redrive") ?? "");
  return combined ? Number(combined[1]) : 0;
}

function summary(p: Prepared): RepairLetterSummary {
  const l = p.letter;
  return {
    id: l.id,
    messageId: l.messageId,
    correlationId: l.correlationId,
    contentType: l.contentType,
    payloadKind: payloadKindOf(l.body, l.contentType),
    bodySize: l.bodySize,
    sha256: visibleSha256(l.sha256, p.policy),
    originQueue: l.failure.originQueue ?? p.dlq.origins[0] ?? null,
  };
}

/**
 * The preview of a repair: validates the edit (problems are returned, with line and column for
 * JSON), the diff masked for the actor's role, the locked fields and the target. Values masking
 * hides are locked unless the request reveals the letter (`reveal`, audited `payload.reveal`), so
 * without a reveal no answer (problems, the diff, "changes nothing") differs between a right and a
 * wrong guess of one. Needs letter:repair; audited `letter.repair_plan` with what the edit touches
 * (paths and header names, never values). Sends nothing.
 */
export async function planRepair(actor: Actor, meta: RequestMeta, input: PlanRepairInput): Promise<RepairPlan> {
  const scope = scopeOf("letter.repair_plan", input);
  await authorize(actor, "letter:repair", { ...scope, meta });
  try {
    const parsed = parseInput(planRepairSchema, input, "bad_request:repair");
    const revealed = await authorizeReveal(actor, meta, scope, parsed);
    const p = await prepare(actor, parsed, revealed);
    if (revealed) await recordReveal(actor, meta, scope, parsed, p.letter.sha256);
    const plan: RepairPlan = {
      ok: p.problems.length === 0,
      problems: p.problems,
      letter: summary(p),
      locked: p.locked,
      diff: diffFor(p, { rules: p.policy.rules, hashKey: p.policy.hashKey }, parsed.newCorrelationId === true),
      target: p.target,
      originQueue: summary(p).originQueue,
      maxBodyBytes: p.adapter.capabilities.maxBodyBytes ?? null,
    };
    await recordAudit(
      entry(actor, meta, scope, "success", {
        ok: plan.ok,
        problems: plan.problems.length,
        target: plan.target,
        edit: editSummary(parsed, plan.diff, revealed),
      }),
    );
    return plan;
  } catch (e) {
    await auditRefusal(actor, meta, scope, e);
    throw e;
  }
}

/**
 * Repairs one letter and sends the copy to its target (default: its origin). Needs letter:repair
 * and the config switch; refuses an edit of a locked field, or any edit problem, before anything is
 * sent (audited). The adapter publishes the repaired copy and waits for the broker's confirmation;
 * then the original is archived (encrypted, under this operation's id, with the reason); only then
 * does it leave the DLQ. A rejected publish or a failed archive write leaves the original in place,
 * with the reason. Audit: one `letter.repair` operation row (reason, target, outcome, copy id) and
 * one `letter.repaired` row for the letter (the masked diff, SHA-256 of the bytes before and after),
 * sharing the operation id.
 */
export async function repairLetter(actor: Actor, meta: RequestMeta, input: RepairLetterInput): Promise<RepairResult> {
  const scope = scopeOf("letter.repair", input);
  await authorize(actor, "letter:repair", { ...scope, meta });
  const operationId = randomUUID();
  let parsed: z.infer<typeof repairLetterSchema>;
  let p: Prepared;
  try {
    parsed = parseInput(repairLetterSchema, input, "bad_request:repair");
    const revealed = await authorizeReveal(actor, meta, scope, parsed);
    p = await prepare(actor, parsed, revealed);
    if (revealed) await recordReveal(actor, meta, scope, parsed, p.letter.sha256);
    if (p.problems.length > 0) {
      throw new AppError("bad_request:repair", {
        userMessage: p.problems.map((x) => x.message).join(" "),
        details: { problems: p.problems },
      });
    }
  } catch (e) {
    await auditRefusal(actor, meta, scope, e, operationId, { problems: asAppError(e)?.details?.problems });
    throw e;
  }

  const { adapter, letter, target } = p;
  const { connectionId, queue, reason } = parsed;
  const replayId = randomUUID();
  const correlationId = parsed.newCorrelationId ? randomUUID() : undefined;
  const originalMessageId = headerNumber(letter.headers, REDRIVE_HEADERS.originalMessageId) || letter.messageId;
  let archiveId: string | null = null;
  const archiveCtx = {
    jobId: operationId,
    connectionId,
    queue,
    reason: `Repaired and resubmitted: ${reason}`,
    actor: { id: actor.id, email: actor.email, role: actor.role },
  };

  let result: MoveResult | null = null;
  let moveError: unknown = null;
  try {
    const stream = adapter.moveLetters(
      queue,
      [
        {
          letterId: letter.id,
          sha256: letter.sha256,
          target,
          markers: {
            redriveId: operationId,
            replayId,
            redriveCount: previousCount(letter.headers) + 1,
            originalMessageId,
          },
          repair: {
            ...(p.newBody ? { body: p.newBody } : {}),
            ...(Object.keys(p.setHeaders).length ? { setHeaders: p.setHeaders } : {}),
            ...(p.removeHeaders.length ? { removeHeaders: p.removeHeaders } : {}),
            ...(correlationId ? { correlationId } : {}),
            operationId,
          },
        },
      ],
      {
        beforeRemove: async (copy: LetterCopy) => {
          try {
            archiveId = await writeArchive(getDb(), archiveCtx, copy);
          } catch (e) {
            if (asAppError(e)) throw e;
            console.error("[repair] archive write failed:", loggableError(e));
            throw new AppError("unavailable:archive", {
              userMessage:
                "Its archive copy could not be written (database error), so the original was not removed: it stays in the DLQ.",
              cause: e,
            });
          }
        },
      },
    );
    // No timeout of our own: a move given up on here could still complete, and the audit would then
    // say the wrong thing. The adapter bounds its own waits for the broker's confirmation.
    for await (const r of stream) if (r.letterId === letter.id) result = r;
  } catch (e) {
    moveError = e;
  }

  const settled: MoveResult = result ?? {
    letterId: letter.id,
    outcome: "failed",
    destination: null,
    reason: asAppError(moveError)?.userMessage ?? "The broker did not answer; the original is still in the DLQ.",
    orderingKey: null,
  };
  if (moveError && !result) console.error("[repair] move failed:", loggableError(moveError));
  const outcome: RepairResult = {
    outcome: settled.outcome,
    copyId: settled.outcome === "moved" ? (settled.copyId ?? null) : null,
    copyLetterId:
      settled.outcome === "moved" && settled.copyId ? (adapter.repair?.copyLetterId(settled.copyId) ?? null) : null,
    destination: settled.destination,
    reason: settled.outcome === "moved" ? null : settled.reason,
    operationId,
  };

  const moved = outcome.outcome === "moved";
  const after = p.newBody ?? letter.body;
  const diff = diffFor(p, await auditDiffMasking(connectionId, queue), Boolean(correlationId));
  const targetText = target.kind === "origin" ? "origin" : `queue ${target.name}`;
  await recordAuditBatch([
    entry(
      actor,
      meta,
      scope,
      moved ? "success" : "failure",
      {
        reason,
        target: targetText,
        outcome: outcome.outcome,
        copyId: outcome.copyId,
        destination: outcome.destination,
        failure: outcome.reason,
        archiveId,
        replayId,
        ...(moveError ? { error: errorCodeOf(moveError) } : {}),
      },
      operationId,
    ),
    {
      ...entry(
        actor,
        meta,
        { ...scope, action: "letter.repaired" },
        moved ? "success" : "failure",
        {
          outcome: outcome.outcome,
          messageId: letter.messageId,
          sha256: letter.sha256,
          afterSha256: createHash("sha256").update(after).digest("hex"),
          diff,
          copyId: outcome.copyId,
          copyLetterId: outcome.copyLetterId,
          destination: outcome.destination,
          archiveId,
        },
        operationId,
      ),
      scope: "letter",
    },
  ]);
  return outcome;
}
