import "server-only";
import { getDb } from "@/lib/db";
import { signInLimitPolicy, type SignInLimitPolicy } from "@/lib/auth/config";

export type LimitScope = "email" | "ip";
export type LimitDecision = { limited: false } | { limited: true; scope: LimitScope; retryAfterMs: number };

/**
 * Whether an attempt is refused, given the failures that count against its email and its address
 * (each already restricted to the window). A scope is limited once it holds `limit` failures; it
 * frees up when enough of them age out of the window to leave fewer than `limit`.
 */
export function evaluateSignInLimit(
  input: { emailFailures: Date[]; ipFailures: Date[]; now: Date },
  policy: SignInLimitPolicy,
): LimitDecision {
  const retryAfter = (times: Date[], limit: number): number | null => {
    if (times.length < limit) return null;
    const sorted = times.map((t) => t.getTime()).sort((a, b) => a - b);
    return Math.max(1000, sorted[sorted.length - limit] + policy.windowMs - input.now.getTime());
  };
  const byEmail = retryAfter(input.emailFailures, policy.perEmail);
  const byIp = retryAfter(input.ipFailures, policy.perIp);
  if (byEmail === null && byIp === null) return { limited: false };
  if (byIp === null || (byEmail !== null && byEmail >= byIp))
    return { limited: true, scope: "email", retryAfterMs: byEmail! };
  return { limited: true, scope: "ip", retryAfterMs: byIp };
}

export function retryMinutes(retryAfterMs: number): number {
  return Math.max(1, Math.ceil(retryAfterMs / 60_000));
}

export function limitMessage(retryAfterMs: number): string {
  const n = retryMinutes(retryAfterMs);
  return `Too many attempts; try again in ${n} minute${n === 1 ? "" : "s"}.`;
}

const COUNTED = ["failure", "pending"];
const KEEP_MS = 24 * 60 * 60 * 1000;

export interface SignInAttempt {
  id: bigint;
  decision: LimitDecision;
}

/**
 * Records an attempt (as pending) BEFORE the password is checked, then decides on the failures
 * already recorded: the email's since its last success, the address's whatever the email (a success
 * for one email does not clear an address trying many). Pending rows count, so concurrent attempts
 * on several replicas see each other; a refused attempt is stored as "limited" and does not count.
 */
export async function beginSignInAttempt(
  who: { email: string | null; ip: string | null },
  now = new Date(),
  policy = signInLimitPolicy(),
): Promise<SignInAttempt> {
  const db = getDb();
  const { id } = await db.signInAttempt.create({
    data: { at: now, email: who.email, ip: who.ip, outcome: "pending" },
    select: { id: true },
  });
  const since = new Date(now.getTime() - policy.windowMs);
  let emailFailures: Date[] = [];
  if (who.email) {
    const lastSuccess = await db.signInAttempt.findFirst({
      where: { email: who.email, outcome: "success", at: { gt: since } },
      orderBy: { at: "desc" },
      select: { at: true },
    });
    const rows = await db.signInAttempt.findMany({
      where: { email: who.email, outcome: { in: COUNTED }, at: { gt: lastSuccess?.at ?? since }, id: { not: id } },
      select: { at: true },
    });
    emailFailures = rows.map((r) => r.at);
  }
  const ipRows = who.ip
    ? await db.signInAttempt.findMany({
        where: { ip: who.ip, outcome: { in: COUNTED }, at: { gt: since }, id: { not: id } },
        select: { at: true },
      })
    : [];
  const decision = evaluateSignInLimit({ emailFailures, ipFailures: ipRows.map((r) => r.at), now }, policy);
  if (decision.limited) await db.signInAttempt.update({ where: { id }, data: { outcome: "limited" } });
  // Old rows are of no further use; clearing them now and then keeps the table small.
  if (Math.random() < 0.05)
    await db.signInAttempt.deleteMany({ where: { at: { lt: new Date(now.getTime() - KEEP_MS) } } });
  return { id, decision };
}

export async function finishSignInAttempt(id: bigint, outcome: "success" | "failure"): Promise<void> {
  await getDb().signInAttempt.update({ where: { id }, data: { outcome } });
}
