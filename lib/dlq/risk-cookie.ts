import "server-only";
import { createHash } from "node:crypto";
import { cookies } from "next/headers";
import { RISK_CONFIRMATION_TTL_S } from "./risky-read";

/**
 * A confirmed risky read is remembered per DLQ for a few minutes in an httpOnly cookie. The cookie
 * is only a convenience: every read with acceptRisk is still authorized (dlq:browse-risky) and
 * audited by the use case, so a forged cookie gains nothing a permitted user could not do.
 */
function cookieName(connectionId: string, queue: string) {
  return `dlq_risk_${createHash("sha256").update(`${connectionId}\u0000${queue}`).digest("hex").slice(0, 16)}`;
}

export async function hasRiskConfirmation(connectionId: string, queue: string): Promise<boolean> {
  return (await cookies()).get(cookieName(connectionId, queue))?.value === "1";
}

export async function rememberRiskConfirmation(connectionId: string, queue: string) {
  (await cookies()).set(cookieName(connectionId, queue), "1", {
    httpOnly: true,
    sameSite: "lax",
    path: "/",
    maxAge: RISK_CONFIRMATION_TTL_S,
    secure: process.env.NODE_ENV === "production" && process.env.NEXTAUTH_URL?.startsWith("https://") === true,
  });
}
