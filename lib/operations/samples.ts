import "server-only";
import { getDb } from "@/lib/db";
import type { PrismaClient } from "@/lib/generated/prisma/client";

/**
 * DLQ vitals over time, downsampled as they are written: each round adds into the current bucket
 * of every resolution, so no rollup job exists and no raw samples pile up. Each resolution is kept
 * as long as the chart that reads it needs it; with 1,000 DLQs that is about 650 rows per DLQ
 * (120 + 192 + 336 at the defaults) whatever the sampling interval.
 */
export const RESOLUTIONS = [
  { seconds: 60, keepMs: 2 * 3600_000 },
  { seconds: 900, keepMs: 2 * 86400_000 },
  { seconds: 3600, keepMs: null }, // operations.sampleRetentionDays
] as const;

export type ChartRange = "hour" | "day" | "week";

/** The resolution each chart reads and the span it shows. */
export const CHART_RANGES: Record<ChartRange, { resolution: number; spanMs: number }> = {
  hour: { resolution: 60, spanMs: 3600_000 },
  day: { resolution: 900, spanMs: 86400_000 },
  week: { resolution: 3600, spanMs: 7 * 86400_000 },
};

export interface SampleInput {
  connectionId: string;
  queue: string;
  depth: number | null;
  inflow: number | null;
  oldestAt: Date | null;
  deadlineAt: Date | null;
}

/** One statement for a whole round: every DLQ × every resolution. */
export async function writeSamples(at: Date, rows: SampleInput[], db: PrismaClient = getDb()): Promise<void> {
  if (rows.length === 0) return;
  await db.$executeRawUnsafe(
    `INSERT INTO dlq_samples (connection_id, queue, resolution, bucket_at, depth, depth_max, inflow, oldest_at, deadline_at, samples)
     SELECT r.connection_id, r.queue, res.s, to_timestamp(floor(extract(epoch FROM $1::timestamptz) / res.s) * res.s),
            r.depth, r.depth, r.inflow, r.oldest_at, r.deadline_at, 1
       FROM json_to_recordset($2::json) AS r(connection_id text, queue text, depth int, inflow int, oldest_at timestamptz, deadline_at timestamptz)
       CROSS JOIN unnest($3::int[]) AS res(s)
     ON CONFLICT (connection_id, queue, resolution, bucket_at) DO UPDATE SET
       depth = EXCLUDED.depth,
       depth_max = GREATEST(dlq_samples.depth_max, EXCLUDED.depth_max),
       inflow = CASE WHEN dlq_samples.inflow IS NULL AND EXCLUDED.inflow IS NULL THEN NULL
                     ELSE COALESCE(dlq_samples.inflow, 0) + COALESCE(EXCLUDED.inflow, 0) END,
       oldest_at = EXCLUDED.oldest_at,
       deadline_at = EXCLUDED.deadline_at,
       samples = dlq_samples.samples + 1`,
    at.toISOString(),
    JSON.stringify(
      rows.map((r) => ({
        connection_id: r.connectionId,
        queue: r.queue,
        depth: r.depth,
        inflow: r.inflow,
        oldest_at: r.oldestAt?.toISOString() ?? null,
        deadline_at: r.deadlineAt?.toISOString() ?? null,
      })),
    ),
    RESOLUTIONS.map((r) => r.seconds),
  );
}

/** Deletes buckets past their resolution's span; returns how many. Uses the (resolution, bucket_at) index. */
export async function pruneSamples(
  retentionDays: number,
  now = new Date(),
  db: PrismaClient = getDb(),
): Promise<number> {
  let n = 0;
  for (const r of RESOLUTIONS) {
    const keep = r.keepMs ?? retentionDays * 86400_000;
    n += await db.$executeRawUnsafe(
      `DELETE FROM dlq_samples WHERE resolution = $1 AND bucket_at < $2::timestamptz`,
      r.seconds,
      new Date(now.getTime() - keep).toISOString(),
    );
  }
  return n;
}

export interface SeriesPoint {
  /** Bucket start, epoch seconds. */
  t: number;
  depth: number | null;
  depthMax: number | null;
  /** Letters per minute entering during the bucket (null where unknown). */
  inflowPerMin: number | null;
}

/** One DLQ's chart data for a range, oldest first. */
export async function dlqSeries(
  connectionId: string,
  queue: string,
  range: ChartRange,
  now = new Date(),
  db: PrismaClient = getDb(),
): Promise<SeriesPoint[]> {
  const { resolution, spanMs } = CHART_RANGES[range];
  const rows = await db.$queryRawUnsafe<
    Array<{ t: number; depth: number | null; depth_max: number | null; inflow: number | null }>
  >(
    `SELECT extract(epoch FROM bucket_at)::float8 AS t, depth, depth_max, inflow
       FROM dlq_samples
      WHERE connection_id = $1 AND queue = $2 AND resolution = $3 AND bucket_at >= $4::timestamptz
      ORDER BY bucket_at`,
    connectionId,
    queue,
    resolution,
    new Date(now.getTime() - spanMs).toISOString(),
  );
  return rows.map((r) => ({
    t: Number(r.t),
    depth: r.depth,
    depthMax: r.depth_max,
    inflowPerMin: r.inflow === null ? null : Math.round((r.inflow / (resolution / 60)) * 100) / 100,
  }));
}
