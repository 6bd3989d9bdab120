import { randomUUID } from "node:crypto";
import { PrismaPg } from "@prisma/adapter-pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { problemResponse } from "@/lib/api/problem";
import { asAppError } from "@/lib/errors";
import { PrismaClient } from "@/lib/generated/prisma/client";
import { actorFromBearer } from "./bearer";
import { tokenRatePolicy, windowCapacity, type TokenRatePolicy } from "./rate";
import { takeTokenRequest } from "./rate-store";
import { issueToken } from "./store";

/**
 * The token rate limit under concurrency, on the console's database (real Postgres): two Prisma
 * clients, each with its own connection pool, play two replicas behind a load balancer. Every call
 * goes through the bearer check, as an API request does, with an injected clock (starting at the
 * current minute, so a token's dates never lie in the past whatever the day), and a refusal is
 * answered by the API's own problemResponse.
 */
const MINUTE = 60_000;
const T0 = Math.floor(Date.now() / MINUTE) * MINUTE + MINUTE;

let replicas: [PrismaClient, PrismaClient];

beforeAll(() => {
  const url = process.env.DATABASE_URL!;
  replicas = [
    new PrismaClient({ adapter: new PrismaPg({ connectionString: url }) }),
    new PrismaClient({ adapter: new PrismaPg({ connectionString: url }) }),
  ];
});
afterAll(async () => {
  await Promise.all(replicas.map((r) => r.$disconnect()));
});

async function newToken() {
  const [db] = replicas;
  const user = await db.user.create({
    data: { email: `rate-${randomUUID().slice(0, 8)}@rate.test`, role: "viewer" },
    select: { id: true },
  });
  return issueToken(
    {
      userId: user.id,
      name: "rate burst",
      role: "viewer",
      createdAt: new Date(T0),
      expiresAt: new Date(T0 + 30 * 86_400_000),
    },
    db,
  );
}

type Outcome = { ok: true } | { ok: false; status: number; retryAfter: string | null; code: unknown };

/** `times.length` simultaneous calls, alternating between the two replicas, each at its own time. */
async function burst(token: string, times: number[], policy: TokenRatePolicy): Promise<Outcome[]> {
  return Promise.all(
    times.map((t, i) =>
      actorFromBearer(`Bearer ${token}`, {
        db: replicas[i % 2],
        now: new Date(t),
        policy,
        audit: async () => undefined,
      }).then(
        (): Outcome => ({ ok: true }),
        async (e: unknown): Promise<Outcome> => {
          expect(asAppError(e)?.code, String(e)).toBe("too_many_requests:token");
          const res = problemResponse(e, "req-rate");
          return {
            ok: false,
            status: res.status,
            retryAfter: res.headers.get("retry-after"),
            code: (await res.json()).code,
          };
        },
      ),
    ),
  );
}

const admitted = (out: Outcome[]) => out.filter((o) => o.ok).length;
const at = (ms: number, n: number) => Array.from({ length: n }, () => ms);

describe("the token rate limit under concurrency", () => {
  it("of 330 simultaneous calls on two replicas at the default 300 a minute, exactly 300 get through and 30 are answered 429 with Retry-After", async () => {
    const policy = tokenRatePolicy({});
    expect(policy.limit).toBe(300);
    const { token, record } = await newToken();
    const out = await burst(token, at(T0 + 1_000, 330), policy);
    expect(admitted(out)).toBe(300);
    const refused = out.filter((o) => !o.ok);
    expect(refused).toHaveLength(30);
    // A full window 1 s in: 59 s to the next, where 300 × (60 − t)/60 + 1 ≤ 300 from t = 0.2 s.
    for (const r of refused)
      expect(r).toEqual({ ok: false, status: 429, retryAfter: "60", code: "too_many_requests:token" });
    const row = await replicas[1].apiTokenRate.findUniqueOrThrow({ where: { tokenId: record.id } });
    expect(row).toMatchObject({ windowStart: new Date(T0), previous: 0, current: 300 });
  });

  it("calls stamped either side of a window boundary, on two replicas, let exactly the limit through (the live review's 303 of 330)", async () => {
    const policy = tokenRatePolicy({});
    const { token } = await newToken();
    // 150 calls in the last 150 ms of a minute, 180 in the first 180 ms of the next, all at once:
    // however the database orders them, the later minute sees the earlier one's whole count.
    const boundary = T0 + 5 * MINUTE;
    const out = await burst(
      token,
      Array.from({ length: 330 }, (_, i) => boundary - 150 + i),
      policy,
    );
    expect(admitted(out)).toBe(300);
    expect(out.filter((o) => !o.ok).every((o) => !o.ok && o.status === 429 && Number(o.retryAfter) >= 1)).toBe(true);
  });

  it("admits again as the previous window fades, and fully after an idle window, by the same count as the pure decision", async () => {
    const policy = tokenRatePolicy({});
    const { token, record } = await newToken();
    const start = T0 + 10 * MINUTE;
    expect(admitted(await burst(token, at(start + 1_000, 330), policy))).toBe(300);

    // At the next window's start the whole previous window still counts: nothing.
    const next = start + MINUTE;
    const none = await burst(token, at(next, 20), policy);
    expect(admitted(none)).toBe(0);
    expect(none[0]).toMatchObject({ status: 429, retryAfter: "1" });

    // Told to wait 60 s at start + 1 s: by then 1/60 of the previous 300 has faded, room for 5.
    expect(windowCapacity(300, 1_000, policy)).toBe(5);
    expect(admitted(await burst(token, at(start + 1_000 + 60_000, 10), policy))).toBe(5);

    // Half way through, half of the previous window counts: 150 in all, 145 more.
    expect(windowCapacity(300, 30_000, policy)).toBe(150);
    expect(admitted(await burst(token, at(next + 30_000, 200), policy))).toBe(145);

    // The window after next begins with the 150 of this one counting in full: 150 more.
    expect(admitted(await burst(token, at(next + MINUTE, 200), policy))).toBe(150);

    // After a window with no calls the previous count is 0: the full limit again.
    const later = next + 3 * MINUTE;
    expect(admitted(await burst(token, at(later + 2_000, 330), policy))).toBe(300);
    const row = await replicas[0].apiTokenRate.findUniqueOrThrow({ where: { tokenId: record.id } });
    expect(row).toMatchObject({ windowStart: new Date(later), previous: 0, current: 300 });
  });

  it("decides a call that arrives after a later one has moved the window in that later window, never in its own", async () => {
    const policy = { limit: 2, windowMs: MINUTE };
    const { record } = await newToken();
    const boundary = T0 + 20 * MINUTE;
    const [a, b] = replicas;
    // The first call stamped after the boundary reaches the database first.
    expect(await takeTokenRequest(record.id, new Date(boundary), policy, a)).toEqual({ limited: false });
    // Two calls stamped 1 ms before it arrive late: they count in the new window, at its start.
    expect(await takeTokenRequest(record.id, new Date(boundary - 1), policy, b)).toEqual({ limited: false });
    const late = await takeTokenRequest(record.id, new Date(boundary - 1), policy, a);
    // 1 ms to the window it was decided in, 60 s to its end, then 2 × (60 − t)/60 + 1 ≤ 2 from t = 30 s.
    expect(late).toEqual({ limited: true, retryAfterMs: 1 + 90_000 });
    const row = await b.apiTokenRate.findUniqueOrThrow({ where: { tokenId: record.id } });
    expect(row).toMatchObject({ windowStart: new Date(boundary), previous: 0, current: 2 });
  });
});
