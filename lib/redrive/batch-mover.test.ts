import { describe, expect, it } from "vitest";
import type { BrokerAdapter } from "@/lib/brokers/contract/adapter";
import type { PrismaClient, RedrivePlan } from "@/lib/generated/prisma/client";
import type { JobContext } from "@/lib/jobs/types";
import { BatchMover } from "./batch-mover";
import type { Clock } from "./clock";
import type { LedgerRow, LetterAuditContext } from "./ledger";
import { TokenBucket } from "./token-bucket";

/**
 * The batch claimed ahead (BatchMover.claimAhead) without a database: the claim is the test's own
 * function, and the bucket's clock only moves when the test says so. A run that stops while the
 * claim ahead still waits for the bucket must not wait on with it, and must claim nothing.
 */

/** A clock whose sleeps last until the test wakes them or their signal aborts. */
function heldClock(): Clock & { wake(): void; sleeping(): number } {
  let t = 1_000_000;
  const waiting: Array<() => void> = [];
  return {
    now: () => t,
    sleep: (ms, signal) =>
      new Promise<void>((resolve, reject) => {
        if (signal?.aborted) return reject(signal.reason);
        const done = () => {
          t += ms;
          resolve();
        };
        waiting.push(done);
        signal?.addEventListener("abort", () => reject(signal.reason), { once: true });
      }),
    wake: () => {
      for (const w of waiting.splice(0)) w();
    },
    sleeping: () => waiting.length,
  };
}

const row = (seq: number): LedgerRow => ({
  id: String(seq),
  seq,
  letterId: `m-${seq}`,
  sha256: "a".repeat(64),
  messageId: null,
  originalMessageId: null,
  prevCount: 0,
  orderingKey: null,
  stage: "bulk",
  state: "moving",
  attempts: 1,
  destination: null,
  reason: null,
  replayId: null,
  movedAt: null,
  updatedAt: "2026-12-06T00:00:00.000Z",
  prevState: "pending",
});

function mover() {
  const ctx = { signal: new AbortController().signal, job: { leaseOwner: "run-a" } } as unknown as JobContext;
  const plan = { jobId: "00000000-0000-0000-0000-000000000001" } as RedrivePlan;
  // No database: releaseClaims with no rows returns before it touches one.
  const db = {} as PrismaClient;
  const audit = {} as LetterAuditContext;
  return new BatchMover(
    db,
    ctx,
    { clock: heldClock(), stallMs: 60_000 },
    plan,
    {} as BrokerAdapter,
    audit,
    null,
    async () => undefined,
  );
}

describe("BatchMover.claimAhead", () => {
  it("hands over the rows it claimed once the bucket lets them go", async () => {
    const clock = heldClock();
    const m = mover();
    const asked: Array<[number, number]> = [];
    m.claimAhead(new TokenBucket(2, clock), 2, 5, async (limit, afterSeq) => {
      asked.push([limit, afterSeq]);
      return [row(1), row(2)];
    });
    await new Promise((r) => setImmediate(r));
    expect(clock.sleeping()).toBe(1); // paced: 2 letters at 2 per second wait their second
    expect(asked).toEqual([]);
    clock.wake();
    expect((await m.takeAhead())?.map((r) => r.letterId)).toEqual(["m-1", "m-2"]);
    expect(asked).toEqual([[2, -1]]);
    expect(await m.takeAhead()).toBeNull(); // taken once
  });

  it("a claim that found nothing is handed over as none, so the caller claims again after the batch settled", async () => {
    const clock = heldClock();
    const m = mover();
    m.claimAhead(new TokenBucket(1000, clock), 2, 0, async () => []);
    expect(await m.takeAhead()).toBeNull();
  });

  it("stopped while it waits for the bucket: stops waiting at once and claims nothing", async () => {
    const clock = heldClock();
    const m = mover();
    let claims = 0;
    m.claimAhead(new TokenBucket(0.5, clock), 1, 3, async () => {
      claims++;
      return [row(1)];
    });
    await new Promise((r) => setImmediate(r));
    expect(clock.sleeping()).toBe(1);
    // The clock is never woken: releaseAhead returns only because the wait was aborted.
    await m.releaseAhead();
    clock.wake(); // a late wake changes nothing
    await new Promise((r) => setImmediate(r));
    expect(claims).toBe(0);
    expect(await m.takeAhead()).toBeNull();
  });
});
