import "server-only";
import { recordAudit } from "@/lib/audit";
import { isRole, type Permission, type Role } from "@/lib/auth/permissions";
import { getUserByEmail } from "@/lib/auth/users";
import type { BrokerAdapter } from "@/lib/brokers/contract/adapter";
import { AppError } from "@/lib/errors";
import type { RedrivePlan } from "@/lib/generated/prisma/client";
import { creatorRefusal, type CreatorRefusal } from "@/lib/jobs/creator";
import { assertRepairAllowed } from "@/lib/repair/group";
import { checkTargetProtection } from "./target-protection";
import type { Parking } from "./plan";

/**
 * A redrive moves letters in the name of the user who started it (and of whoever started its
 * second stage), long after their request was authorized. Every run, every auto-resume, and
 * every few seconds of a long run ask again: are they still enabled users holding what the stage
 * needs (redrive:sample; redrive:bulk for the rest, redrive:override when it was started without
 * a clean sample)? And is every destination still at least as protected as the DLQ, or was it
 * confirmed by an admin who still is one? A repairing redrive (a plan with `repair`) also needs
 * the config switch for its DLQ, a broker that can repair, and letter:repair for those same users.
 * A "no" pauses the job, audited; nothing is lost.
 */

export interface RunnerRefusal {
  /** Why the job stopped, for its pause reason. */
  reason: string;
  details: Record<string, unknown>;
  actor: { id: string | null; email: string | null; role: Role | null };
}

/** Set in the job's params by startRedrive when an admin confirmed a less protected destination. */
export interface RedriveParams {
  redrive: true;
  lessProtectedConfirmedBy?: string;
}

const STILL = "Letters not yet moved are still in the DLQ.";
const AFTER_USER = "An admin can restore that account or role and then resume it, or cancel it.";
const AFTER_TARGET = "Resume it once the destination is protected the same way, or cancel it.";

function refused(
  who: string,
  user: { id: string | null; email: string | null },
  r: CreatorRefusal,
  stage: string,
  doing = "run this redrive",
): RunnerRefusal {
  const email = user.email;
  return {
    reason: `Paused: ${who} (${email ?? "unknown"}) may no longer ${doing}: ${r.text}. ${STILL} ${AFTER_USER}`,
    details: { permission: r.permission, why: r.why, stage, user: email },
    actor: { id: user.id, email, role: r.role },
  };
}

/** `adapter`: the connection's adapter, asked whether it can still repair (default: the registry's). */
export async function runnerRefusal(
  plan: RedrivePlan,
  params: unknown,
  adapter?: BrokerAdapter,
): Promise<RunnerRefusal | null> {
  const stage = plan.stage;
  const bulk = stage === "bulk";
  const protection = await checkTargetProtection(plan.connectionId, plan.queue, {
    target: plan.target as { kind: string; name?: string },
    parking: plan.parking as Parking,
  });
  const confirmed = Boolean((params as Partial<RedriveParams> | null)?.lessProtectedConfirmedBy);
  const creatorNeeds: Permission[] = [bulk ? "redrive:bulk" : "redrive:sample"];
  if (protection.message) {
    if (!confirmed) {
      return {
        reason: `Paused: ${protection.message} ${STILL} ${AFTER_TARGET}`,
        details: {
          permission: "masking:manage",
          why: "less_protected_target",
          stage,
          lessProtected: protection.lessProtected,
        },
        actor: {
          id: plan.createdById,
          email: plan.createdByEmail,
          role: isRole(plan.createdByRole) ? plan.createdByRole : null,
        },
      };
    }
    creatorNeeds.push("masking:manage");
  }
  const creator = await creatorRefusal(plan.createdById, creatorNeeds);
  if (creator)
    return refused("the user who started it", { id: plan.createdById, email: plan.createdByEmail }, creator, stage);
  if (bulk && plan.bulkStartedBy && plan.bulkStartedBy !== plan.createdByEmail) {
    const starter = await getUserByEmail(plan.bulkStartedBy);
    const needs: Permission[] = plan.bulkOverrideReason ? ["redrive:bulk", "redrive:override"] : ["redrive:bulk"];
    const r = await creatorRefusal(starter?.id ?? null, needs);
    if (r)
      return refused(
        "the user who started its second stage",
        { id: starter?.id ?? null, email: plan.bulkStartedBy },
        r,
        stage,
      );
  }
  return plan.repair ? repairRefusal(plan, adapter) : null;
}

async function repairRefusal(plan: RedrivePlan, adapter?: BrokerAdapter): Promise<RunnerRefusal | null> {
  const stage = plan.stage;
  try {
    assertRepairAllowed(plan.connectionId, plan.queue, adapter);
  } catch (e) {
    const why = e instanceof AppError ? e.userMessage : "Repair is no longer allowed here.";
    return {
      reason: `Paused: ${why} ${STILL} Resume it once repair is allowed again, or cancel it.`,
      details: { permission: "letter:repair", why: "repair_disabled", stage },
      actor: {
        id: plan.createdById,
        email: plan.createdByEmail,
        role: isRole(plan.createdByRole) ? plan.createdByRole : null,
      },
    };
  }
  const creator = await creatorRefusal(plan.createdById, ["letter:repair"]);
  if (creator)
    return refused(
      "the user who started it",
      { id: plan.createdById, email: plan.createdByEmail },
      creator,
      stage,
      "repair letters",
    );
  if (stage === "bulk" && plan.bulkStartedBy && plan.bulkStartedBy !== plan.createdByEmail) {
    const starter = await getUserByEmail(plan.bulkStartedBy);
    const r = await creatorRefusal(starter?.id ?? null, ["letter:repair"]);
    if (r)
      return refused(
        "the user who started its second stage",
        { id: starter?.id ?? null, email: plan.bulkStartedBy },
        r,
        stage,
        "repair letters",
      );
  }
  return null;
}

/** The refusal on record: one operation row, outcome "denied", under the redrive's operation id. */
export function auditRefusal(plan: RedrivePlan, r: RunnerRefusal, action: string): Promise<void> {
  return recordAudit({
    actor: r.actor,
    action,
    outcome: "denied",
    operationId: plan.jobId,
    connectionId: plan.connectionId,
    queue: plan.queue,
    target: plan.jobId,
    details: { ...r.details, reason: r.reason },
  }).then(() => undefined);
}
