import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { randomUUID } from "node:crypto";
import { PGlite } from "@electric-sql/pglite";
import { PrismaPg } from "@prisma/adapter-pg";
import { PrismaPGlite } from "pglite-prisma-adapter";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AuditEntry } from "@/lib/audit";
import type { Role } from "@/lib/auth/permissions";
import { asAppError } from "@/lib/errors";
import { PrismaClient } from "@/lib/generated/prisma/client";
import { applyMigrations } from "@/scripts/lib/migrations";
import { createTestDatabase } from "@/scripts/lib/test-database";
import { actorFromBearer, type BearerOptions } from "./bearer";
import { mintToken } from "./format";
import { tokenRateLimitOf } from "./rate";
import { takeTokenRequest } from "./rate-store";
import { issueToken, revokeToken } from "./store";

/**
 * The token store and bearer resolution on both databases the console runs on: Postgres and the
 * embedded PGlite. Real databases, migrated with the project's migrations; nothing mocked.
 */
type Open = () => Promise<{ db: PrismaClient; second: PrismaClient; close: () => Promise<void> }>;

const DAY = 86_400_000;
const GENERIC = /not valid/;

function suite(name: string, open: Open) {
  describe(name, () => {
    let db: PrismaClient;
    let second: PrismaClient;
    let close: () => Promise<void>;
    const audits: AuditEntry[] = [];
    const opts = (extra: BearerOptions = {}): BearerOptions => ({
      db,
      audit: async (e) => void audits.push(e),
      ...extra,
    });

    beforeAll(async () => {
      ({ db, second, close } = await open());
    });
    afterAll(async () => close?.());

    const user = async (role: Role) =>
      db.user.create({
        data: { email: `tok-${role}-${randomUUID().slice(0, 8)}@store.test`, role },
        select: { id: true, email: true, role: true },
      });
    const mint = async (userId: string, role: Role, opts2: { days?: number; createdAt?: Date; name?: string } = {}) => {
      const createdAt = opts2.createdAt ?? new Date();
      return issueToken(
        {
          userId,
          name: opts2.name ?? "ci pipeline",
          role,
          createdAt,
          expiresAt: new Date(createdAt.getTime() + (opts2.days ?? 30) * DAY),
        },
        db,
      );
    };
    const refusal = async (p: Promise<unknown>) => {
      const e = await p.then(
        () => null,
        (err: unknown) => err,
      );
      const app = asAppError(e);
      expect(app, `expected an AppError, got ${String(e)}`).not.toBeNull();
      return app!;
    };

    it("stores a token hashed: the raw token, and its secret part, appear in no column", async () => {
      const u = await user("operator");
      const { token, record } = await mint(u.id, "operator");
      expect(token).toMatch(/^dlqc_[0-9A-Za-z]{49}$/);
      expect(record.prefix).toBe(token.slice(0, 13));
      await actorFromBearer(`Bearer ${token}`, opts());
      const rows = await db.$queryRawUnsafe<Array<Record<string, unknown>>>(
        `SELECT * FROM api_tokens WHERE id = $1::uuid`,
        record.id,
      );
      expect(rows).toHaveLength(1);
      const columns = Object.keys(rows[0]);
      expect(columns).toEqual(
        expect.arrayContaining([
          "id",
          "user_id",
          "name",
          "prefix",
          "hash",
          "role",
          "created_at",
          "expires_at",
          "last_used_at",
          "revoked_at",
          "revoked_by",
        ]),
      );
      for (const [col, value] of Object.entries(rows[0])) {
        const text = value instanceof Date ? value.toISOString() : String(value);
        expect(text, col).not.toContain(token);
        expect(text, col).not.toContain(token.slice(13));
        expect(text, col).not.toContain(token.slice(5, 30));
      }
      expect(rows[0].hash).toMatch(/^[0-9a-f]{64}$/);
      const windows = await db.$queryRawUnsafe<Array<Record<string, unknown>>>(
        `SELECT * FROM api_token_rates WHERE token_id = $1::uuid`,
        record.id,
      );
      expect(windows).toHaveLength(1);
      for (const value of Object.values(windows[0])) expect(String(value)).not.toContain(token.slice(13));
    });

    it("resolves a token to its user with the token's role and id, and records the use at most once a minute", async () => {
      const u = await user("admin");
      const { token, record } = await mint(u.id, "operator");
      const t0 = new Date();
      const got = await actorFromBearer(`Bearer ${token}`, opts({ now: t0 }));
      expect(got.tokenId).toBe(record.id);
      expect(got.actor).toMatchObject({ id: u.id, email: u.email, role: "operator", tokenId: record.id });
      const used = async () =>
        (await db.apiToken.findUniqueOrThrow({ where: { id: record.id } })).lastUsedAt?.getTime();
      expect(await used()).toBe(t0.getTime());
      await actorFromBearer(`bearer ${token}`, opts({ now: new Date(t0.getTime() + 30_000) }));
      expect(await used()).toBe(t0.getTime());
      const later = new Date(t0.getTime() + 61_000);
      await actorFromBearer(`Bearer ${token}`, opts({ now: later }));
      expect(await used()).toBe(later.getTime());
    });

    it("refuses unknown, malformed, revoked and disabled-user tokens with one and the same answer; names only expiry", async () => {
      // The live token with its last character changed (its checksum's last character is "x" in 1
      // token of 62, so "x" alone once made the live token again: CI, 2026-12-06).
      const otherLast = (t: string) => `${t.slice(0, -1)}${t.endsWith("x") ? "y" : "x"}`;
      const u = await user("operator");
      const live = await mint(u.id, "viewer");
      const revoked = await mint(u.id, "viewer");
      const expired = await mint(u.id, "viewer", { days: 1, createdAt: new Date(Date.now() - 2 * DAY) });
      expect((await revokeToken(revoked.record.id, u.id, new Date(), u.id, db))?.changed).toBe(true);

      const answers = await Promise.all(
        [
          undefined,
          "",
          "Basic abc",
          "Bearer nope",
          `Bearer ${mintToken()}`,
          `Bearer ${otherLast(live.token)}`,
          `Bearer ${revoked.token}`,
        ].map((h) => refusal(actorFromBearer(h, opts()))),
      );
      for (const a of answers) {
        expect(a.code).toBe("unauthorized:token");
        expect(a.userMessage).toMatch(GENERIC);
        expect(a.userMessage).toBe(answers[0].userMessage);
      }
      const exp = await refusal(actorFromBearer(`Bearer ${expired.token}`, opts()));
      expect(exp.code).toBe("unauthorized:token");
      expect(exp.userMessage).toMatch(/expired/);

      await db.user.update({ where: { id: u.id }, data: { disabled: true } });
      const dis = await refusal(actorFromBearer(`Bearer ${live.token}`, opts()));
      expect(dis.code).toBe("unauthorized:token");
      expect(dis.userMessage).toBe(answers[0].userMessage);
      // Disabled means at once: no cache, no grace; and back on when enabled again.
      await db.user.update({ where: { id: u.id }, data: { disabled: false } });
      expect((await actorFromBearer(`Bearer ${live.token}`, opts())).tokenId).toBe(live.record.id);
    });

    it("caps a token by its user's role now: an operator token of a user demoted to viewer acts as viewer, and a promotion does not lift it", async () => {
      const u = await user("operator");
      const { token } = await mint(u.id, "operator");
      expect((await actorFromBearer(`Bearer ${token}`, opts())).actor.role).toBe("operator");
      await db.user.update({ where: { id: u.id }, data: { role: "viewer" } });
      expect((await actorFromBearer(`Bearer ${token}`, opts())).actor.role).toBe("viewer");
      await db.user.update({ where: { id: u.id }, data: { role: "admin" } });
      expect((await actorFromBearer(`Bearer ${token}`, opts())).actor.role).toBe("operator");
    });

    it("records a refused use of a known token (reason, id, name) at most once a minute, never the secret", async () => {
      const u = await user("viewer");
      const { token, record } = await mint(u.id, "viewer", { name: "nightly <script>" });
      await revokeToken(record.id, u.id, new Date(), null, db);
      const before = audits.length;
      const t0 = new Date();
      await refusal(
        actorFromBearer(`Bearer ${token}`, opts({ now: t0, meta: { requestId: "req-refused", ip: "10.0.0.9" } })),
      );
      await refusal(actorFromBearer(`Bearer ${token}`, opts({ now: new Date(t0.getTime() + 10_000) })));
      const mine = audits.slice(before);
      expect(mine).toHaveLength(1);
      expect(mine[0]).toMatchObject({
        action: "token.refused",
        outcome: "denied",
        actor: { id: u.id, email: u.email },
        requestId: "req-refused",
        details: { tokenId: record.id, name: "nightly <script>", reason: "revoked" },
      });
      expect(JSON.stringify(mine[0])).not.toContain(token.slice(13));
      await refusal(actorFromBearer(`Bearer ${token}`, opts({ now: new Date(t0.getTime() + 61_000) })));
      expect(audits.slice(before)).toHaveLength(2);
    });

    it("revokes only the owner's token through the owner path; a second revocation changes nothing", async () => {
      const a = await user("operator");
      const b = await user("operator");
      const { record } = await mint(a.id, "viewer");
      expect(await revokeToken(record.id, b.id, new Date(), b.id, db)).toBeNull();
      const first = await revokeToken(record.id, b.id, new Date(), null, db);
      expect(first?.changed).toBe(true);
      expect(first?.token.revokedBy).toBe(b.id);
      const again = await revokeToken(record.id, a.id, new Date(), a.id, db);
      expect(again?.changed).toBe(false);
      expect(again?.token.revokedBy).toBe(b.id);
    });

    it("shares one rate count between two replicas: of 30 concurrent requests at a limit of 20, exactly 20 pass", async () => {
      const u = await user("viewer");
      const { token, record } = await mint(u.id, "viewer");
      const policy = { limit: 20, windowMs: 60_000 };
      const now = new Date(Math.floor(Date.now() / 60_000) * 60_000 + 1_000);
      const results = await Promise.all(
        Array.from({ length: 30 }, (_, i) =>
          actorFromBearer(`Bearer ${token}`, { ...opts({ now, policy }), db: i % 2 ? second : db }).then(
            () => "ok" as const,
            (e: unknown) => e,
          ),
        ),
      );
      expect(results.filter((r) => r === "ok")).toHaveLength(20);
      for (const r of results.filter((x) => x !== "ok")) {
        expect(asAppError(r)?.code).toBe("too_many_requests:token");
        // A full window 1 s in: 59 s to the next one, where 20 × (60 − t)/60 + 1 ≤ 20 from t = 3 s.
        expect(tokenRateLimitOf(r)).toEqual({ retryAfterSeconds: 62 });
      }
      const row = await second.apiTokenRate.findUniqueOrThrow({ where: { tokenId: record.id } });
      expect(row).toMatchObject({ windowStart: new Date(now.getTime() - 1_000), previous: 0, current: 20 });
      // Half way through the next window half of the previous one still counts: 10 more fit.
      const mid = new Date(now.getTime() - 1_000 + 90_000);
      const next = await Promise.all(
        Array.from({ length: 12 }, (_, i) => takeTokenRequest(record.id, mid, policy, i % 2 ? second : db)),
      );
      expect(next.filter((d) => !d.limited)).toHaveLength(10);
    });
  });
}

let pg: Awaited<ReturnType<typeof createTestDatabase>> | undefined;

suite("API tokens on PostgreSQL (two clients as two replicas)", async () => {
  pg = await createTestDatabase("dlq_tokens");
  await applyMigrations({ databaseUrl: pg.url });
  const db = new PrismaClient({ adapter: new PrismaPg({ connectionString: pg.url }) });
  const second = new PrismaClient({ adapter: new PrismaPg({ connectionString: pg.url }) });
  return {
    db,
    second,
    close: async () => {
      await db.$disconnect();
      await second.$disconnect();
      await pg?.drop();
    },
  };
});

suite("API tokens on PGlite (the first command's default; two clients on one embedded database)", async () => {
  const dir = mkdtempSync(path.join(tmpdir(), "dlq-tokens-pglite-"));
  const dataDir = path.join(dir, "db");
  await applyMigrations({ dataDir });
  const pglite = new PGlite(dataDir);
  const db = new PrismaClient({ adapter: new PrismaPGlite(pglite) });
  const second = new PrismaClient({ adapter: new PrismaPGlite(pglite) });
  return {
    db,
    second,
    close: async () => {
      await db.$disconnect();
      await second.$disconnect();
      await pglite.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
});
