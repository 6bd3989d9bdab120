import "server-only";
import { getDb } from "@/lib/db";
import type { PrismaClient } from "@/lib/generated/prisma/client";

/**
 * A lease on a periodic task that must run in one replica at a time. The holder renews it each
 * time it runs; when the holder dies the lease lapses after `ttlMs` and another replica takes over.
 * One statement: the insert wins for the first replica, the update only for the holder or once the
 * lease has expired, so two replicas racing can never both hold it.
 */
export async function holdTaskLease(
  name: string,
  owner: string,
  ttlMs: number,
  db: PrismaClient = getDb(),
): Promise<boolean> {
  const rows = await db.$queryRawUnsafe<Array<{ owner: string }>>(
    `INSERT INTO task_leases (name, owner, expires_at) VALUES ($1, $2, now() + ($3::int * interval '1 millisecond'))
     ON CONFLICT (name) DO UPDATE SET owner = EXCLUDED.owner, expires_at = EXCLUDED.expires_at
       WHERE task_leases.owner = EXCLUDED.owner OR task_leases.expires_at < now()
     RETURNING owner`,
    name,
    owner,
    Math.max(1, Math.round(ttlMs)),
  );
  return rows.length === 1 && rows[0].owner === owner;
}

/** Gives the lease up at once (at shutdown), so another replica need not wait for it to lapse. */
export async function releaseTaskLease(name: string, owner: string, db: PrismaClient = getDb()): Promise<void> {
  await db.$executeRawUnsafe(`DELETE FROM task_leases WHERE name = $1 AND owner = $2`, name, owner);
}
