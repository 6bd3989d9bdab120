import "server-only";
import type { BrokerAdapter } from "@/lib/brokers/contract/adapter";
import { listAdapters } from "@/lib/connections/registry";
import { getDb } from "@/lib/db";
import type { PrismaClient } from "@/lib/generated/prisma/client";
import { asAppError } from "@/lib/errors";
import { withTimeout } from "@/lib/use-case/connection";

/**
 * Readiness (GET /api/ready): can this process serve the console? The database is required; a
 * broker that does not answer is reported but does not make the process unready, because the
 * console keeps serving every other broker and explains the one that is down (pulling every
 * replica out of the load balancer over one broker would take the console away mid-incident).
 * Liveness (GET /api/health) checks nothing here: it only shows that the process answers.
 */
export interface Readiness {
  /** ok: everything answered; degraded: the database did, some broker did not; down: the database did not (HTTP 503). */
  status: "ok" | "degraded" | "down";
  database: { ok: boolean; error: string | null };
  /** Codes only: never a host, URL or error text. */
  brokers: Array<{ connectionId: string; kind: string; ok: boolean; error: string | null }>;
  checkedAt: string;
}

/**
 * Each check's limit. Checks run in parallel, so an answer comes within about this long whatever
 * hangs: give the orchestrator's probe a timeout of 3 s or more.
 */
export const READY_CHECK_TIMEOUT_MS = 2_000;

export interface ReadinessDeps {
  db?: Pick<PrismaClient, "$queryRawUnsafe">;
  adapters?: BrokerAdapter[];
  timeoutMs?: number;
}

export async function checkReadiness(deps: ReadinessDeps = {}): Promise<Readiness> {
  const ms = deps.timeoutMs ?? READY_CHECK_TIMEOUT_MS;
  const database = (async () => {
    try {
      await withTimeout((deps.db ?? getDb()).$queryRawUnsafe("SELECT 1"), ms, "database");
      return { ok: true, error: null };
    } catch (e) {
      // The server log may say why (the query is SELECT 1: its error quotes no data); the answer says only the code.
      console.error(`ready: the database did not answer: ${e instanceof Error ? e.message : String(e)}`);
      return { ok: false, error: "unavailable:database" };
    }
  })();
  const brokers = Promise.all(
    (deps.adapters ?? listAdapters()).map(async (a) => {
      try {
        await withTimeout(a.ping(), ms, "ping");
        return { connectionId: a.connectionId, kind: a.kind, ok: true, error: null };
      } catch (e) {
        return {
          connectionId: a.connectionId,
          kind: a.kind,
          ok: false,
          error: asAppError(e)?.code ?? "internal:broker",
        };
      }
    }),
  );
  const [db, b] = await Promise.all([database, brokers]);
  const status = !db.ok ? "down" : b.every((x) => x.ok) ? "ok" : "degraded";
  return { status, database: db, brokers: b, checkedAt: new Date().toISOString() };
}

let inFlight: Promise<Readiness> | null = null;

/**
 * The process's readiness, one check at a time: probes that arrive while a check runs share its
 * answer, so a hung broker cannot pile up pings however often the orchestrator asks.
 */
export function readiness(): Promise<Readiness> {
  inFlight ??= checkReadiness().finally(() => {
    inFlight = null;
  });
  return inFlight;
}
