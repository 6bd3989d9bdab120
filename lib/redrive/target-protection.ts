import "server-only";
import { ROLES, type Role } from "@/lib/auth/permissions";
import { policyFrom, type MaskingPolicy } from "@/lib/masking/policy";
import { loadMaskingConfig, type MaskingConfig } from "@/lib/masking/store";
import type { MaskAction } from "@/lib/masking/types";
import type { Parking } from "./plan";

/**
 * Where a redrive puts letters must protect their payloads at least as well as the DLQ they come
 * from: every role that would see them less masked at a destination than in the source is a leak,
 * since any queue can be opened in the console by name. Checked for the destinations an operator
 * names (a custom target, a parking queue). Letters sent back to their origin go where they
 * already were before they failed: nothing is exposed that was not before.
 */

export type DestinationKind = "target" | "parking";
export interface LessProtected {
  kind: DestinationKind;
  queue: string;
  /** Roles that would see these payloads less masked there. */
  roles: Role[];
}
export interface TargetProtection {
  lessProtected: LessProtected[];
  /** In the operator's words; null when every destination is at least as protected. */
  message: string | null;
}

type Config = Pick<MaskingConfig, "rules" | "sensitive">;
const NO_KEY = Buffer.alloc(0);
const same = (a: MaskAction, b: MaskAction) => JSON.stringify(a) === JSON.stringify(b);

/** `to` shows this role no more than `from` does: no payload where `from` shows none, and every rule of `from` applies at `to`, as strictly or hiding. */
function atLeastAsStrict(from: MaskingPolicy, to: MaskingPolicy): boolean {
  if (to.payload === "none") return true;
  if (from.payload === "none") return false;
  return from.rules.every((r) => {
    const t = to.rules.find((x) => x.id === r.id);
    return t !== undefined && (t.action.kind === "hide" || same(t.action, r.action));
  });
}

export function destinationsOf(plan: {
  target: { kind: string; name?: string };
  parking?: Parking;
}): Array<{ kind: DestinationKind; queue: string }> {
  const out: Array<{ kind: DestinationKind; queue: string }> = [];
  if (plan.target.kind === "queue" && plan.target.name) out.push({ kind: "target", queue: plan.target.name });
  if (plan.parking?.kind === "queue") out.push({ kind: "parking", queue: plan.parking.name });
  return out;
}

/** Pure: the destinations where some role would see the source's payloads less masked. */
export function compareProtection(
  config: Config,
  connectionId: string,
  source: string,
  destinations: Array<{ kind: DestinationKind; queue: string }>,
): TargetProtection {
  const lessProtected: LessProtected[] = [];
  for (const d of destinations) {
    if (d.queue === source) continue;
    const roles = ROLES.filter(
      (role) =>
        !atLeastAsStrict(
          policyFrom(config, role, connectionId, source, NO_KEY),
          policyFrom(config, role, connectionId, d.queue, NO_KEY),
        ),
    );
    if (roles.length > 0) lessProtected.push({ ...d, roles });
  }
  if (lessProtected.length === 0) return { lessProtected, message: null };
  const sourceSensitive = policyFrom(config, "viewer", connectionId, source, NO_KEY).sensitive;
  const where = lessProtected
    .map((l) => `${l.kind === "target" ? "target" : "parking queue"} ${l.queue} (${l.roles.join(", ")} would see more)`)
    .join("; ");
  const why = sourceSensitive ? `${source} is marked sensitive and ` : `${source} is masked more strictly than `;
  return {
    lessProtected,
    message: `${why}${lessProtected.length === 1 ? "this destination is not" : "these destinations are not"}: ${where}. Choose a destination protected the same way (an admin can mark it sensitive), send the letters back to their origin, or have an admin confirm the move.`,
  };
}

export async function checkTargetProtection(
  connectionId: string,
  source: string,
  plan: { target: { kind: string; name?: string }; parking?: Parking },
): Promise<TargetProtection> {
  const destinations = destinationsOf(plan);
  if (destinations.length === 0) return { lessProtected: [], message: null };
  return compareProtection(await loadMaskingConfig(), connectionId, source, destinations);
}
