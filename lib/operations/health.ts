import "server-only";
import { queryAudit } from "@/lib/audit";
import { listAdapters } from "@/lib/connections/registry";
import { asAppError } from "@/lib/use-case/app-error";
import { withTimeout } from "@/lib/use-case/connection";

export interface Health {
  status: "ok" | "degraded" | "down";
  database: { ok: boolean };
  brokers: Array<{ connectionId: string; kind: string; ok: boolean; error: string | null }>;
  checkedAt: string;
}

/** Reachability of the database and every broker. No URLs, hosts or messages: codes only. */
export async function checkHealth(): Promise<Health> {
  const db = await withTimeout(queryAudit({}, { limit: 1 }), 5_000, "database")
    .then(() => true)
    .catch((e) => {
      console.error("health: database check failed", e);
      return false;
    });
  const brokers = await Promise.all(
    listAdapters().map(async (a) => {
      try {
        await withTimeout(a.ping(), 5_000, "ping");
        return { connectionId: a.connectionId, kind: a.kind, ok: true, error: null };
      } catch (e) {
        return { connectionId: a.connectionId, kind: a.kind, ok: false, error: asAppError(e)?.code ?? "internal:broker" };
      }
    }),
  );
  const status = !db ? "down" : brokers.every((b) => b.ok) ? "ok" : "degraded";
  return { status, database: { ok: db }, brokers, checkedAt: new Date().toISOString() };
}
