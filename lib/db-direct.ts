import "server-only";
import { Pool, type PoolClient } from "pg";
import { databaseMode, getDb, PG_SESSION_OPTIONS } from "@/lib/db";
import type { PrismaClient } from "@/lib/generated/prisma/client";
import { processState } from "@/lib/process-state";

/**
 * Transactions of raw statements on a small pg pool of its own, beside Prisma's, for the hot batch
 * writes of jobs (a redrive's claims, its outcomes and their audit rows). Through Prisma's driver
 * adapter every parameter of `$queryRawUnsafe` went through Prisma's own JSON encoding and back,
 * and its interactive transactions cost a few round trips of bookkeeping; here a Buffer parameter
 * goes to Postgres as it is, in binary format (lib/pg-binary.ts writes arrays that way).
 *
 * Used only when the caller's client is the process's client on Postgres (so both reach the same
 * database as the same role); on PGlite, or with another client, there is no pool and the caller
 * uses Prisma's transaction as before.
 */
export interface DirectTx {
  $queryRawUnsafe<T = unknown>(sql: string, ...values: unknown[]): Promise<T>;
  $executeRawUnsafe(sql: string, ...values: unknown[]): Promise<number>;
  /**
   * The rows of a statement, each an array of its columns in the statement's order (node-postgres's
   * array row mode: no object built per row). Postgres sends the rows as they are: a ledger claim's
   * 2,000 rows cost its backend about 12 µs per row more when aggregated into one json value, which
   * is what the Prisma path needs to avoid decoding them one by one.
   */
  queryArrays(sql: string, values: unknown[]): Promise<unknown[][]>;
  /** Buffer parameters are sent as they are, in binary format (a Prisma transaction sends them as bytea). */
  readonly binaryParams: true;
}

/** Whether a transaction handle takes binary-format parameters (a DirectTx). */
export function takesBinaryParams(tx: unknown): tx is DirectTx {
  return (tx as Partial<DirectTx>).binaryParams === true;
}

const TIMEOUT_MS = 15_000;
/** Pools by use (each its own few connections: a scan's writes in flight do not hold up a redrive's). */
const direct = processState("db-direct-pools", () => ({ pools: new Map<string, { url: string; pool: Pool }>() }));

/**
 * The pool `use` for `db`'s database, or null when `db` is not the process's client on Postgres.
 * `use` names the pool: "jobs" (the ledgers' fenced writes), "triage-bulk" (a scan's index writes).
 */
export function directPool(db: PrismaClient | object, use = "jobs"): Pool | null {
  const url = process.env.DATABASE_URL;
  if (!url || databaseMode() !== "postgres") return null;
  try {
    if (db !== getDb()) return null;
  } catch {
    return null; // shutting down: let Prisma's error surface
  }
  const open = direct.pools.get(use);
  if (open?.url === url) return open.pool;
  void open?.pool.end().catch(() => {});
  // allowExitOnIdle: scripts and tests exit without closing it; idle clients go after 10 s.
  const pool = new Pool({
    connectionString: url,
    options: PG_SESSION_OPTIONS,
    max: 4,
    idleTimeoutMillis: 10_000,
    connectionTimeoutMillis: TIMEOUT_MS,
    allowExitOnIdle: true,
  });
  // An idle client's connection ended by the server (restart, dropped database): the pool
  // replaces it on next use; without a listener the error would crash the process.
  pool.on("error", (e) => console.warn(`[db] ${use} connection lost: ${e.message}`));
  direct.pools.set(use, { url, pool });
  return pool;
}

/** Closes the pools (scripts before dropping their database; a later use reopens them). */
export async function closeDirectPools(): Promise<void> {
  const open = [...direct.pools.values()];
  direct.pools.clear();
  await Promise.all(open.map((o) => o.pool.end()));
}

function txOf(client: PoolClient): DirectTx {
  return {
    binaryParams: true,
    async $queryRawUnsafe<T>(sql: string, ...values: unknown[]) {
      return (await client.query(sql, values)).rows as T;
    },
    async $executeRawUnsafe(sql: string, ...values: unknown[]) {
      return (await client.query(sql, values)).rowCount ?? 0;
    },
    async queryArrays(sql: string, values: unknown[]) {
      return (await client.query<unknown[]>({ text: sql, values, rowMode: "array" })).rows;
    },
  };
}

/**
 * `change` in one transaction on a pooled connection: committed when it resolves, rolled back when
 * it throws. As Prisma's transactions here (maxWait and timeout 15 s): a connection is waited for
 * at most 15 s, and each statement may take at most 15 s (a lock waited for included).
 */
export async function directTransaction<T>(pool: Pool, change: (tx: DirectTx) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  let broken: Error | undefined;
  try {
    await client.query(`BEGIN; SET LOCAL statement_timeout = ${TIMEOUT_MS}`);
    const out = await change(txOf(client));
    await client.query("COMMIT");
    return out;
  } catch (e) {
    try {
      await client.query("ROLLBACK");
    } catch (r) {
      broken = r as Error; // the connection is gone: the pool drops it
    }
    throw e;
  } finally {
    client.release(broken);
  }
}
