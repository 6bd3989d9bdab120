import { randomUUID } from "node:crypto";
import { beforeAll, describe, expect, it } from "vitest";
import { recordAuditBatch } from "@/lib/audit";
import type { Actor } from "@/lib/auth/session";
import { createUser } from "@/lib/auth/users";
import { parseAuditFilter, viewAudit } from "./use-cases";

/**
 * The audit page's category and action filters on the real Postgres log: served by the database
 * (per action, newest first, paged), never by trimming a page in memory.
 */
const queue = `audit-cat-${randomUUID().slice(0, 8)}`;
const meta = () => ({ requestId: `ac-${randomUUID()}`, ip: "127.0.0.1" });
let admin: Actor;

beforeAll(async () => {
  const u = await createUser({
    email: `admin-${randomUUID().slice(0, 8)}@audit-cat.test`,
    role: "admin",
    password: "a-long-enough-password",
  });
  admin = { id: u.id, email: u.email, name: null, role: "admin" };
  const actor = { id: u.id, email: u.email, role: "admin" };
  // Oldest first: one redrive, then many letter views on top of it, a rule change, more views.
  const entry = (action: string, target: string) => ({
    actor,
    action,
    outcome: "success" as const,
    queue,
    connectionId: "c1",
    target,
  });
  await recordAuditBatch([
    entry("redrive.start", "r1"),
    ...Array.from({ length: 30 }, (_, i) => entry("letter.view", `v${i}`)),
    entry("masking.save", "m1"),
    ...Array.from({ length: 30 }, (_, i) => entry("letter.view", `w${i}`)),
    entry("auth.sign_in", "s1"),
  ]);
});

const view = (params: Record<string, string>, opts = { defaultCategories: true }, before?: string, limit?: number) =>
  viewAudit(admin, meta(), { filter: parseAuditFilter({ queue, ...params }, opts), before, limit });

describe("audit categories", () => {
  it("opens on operations and administration, newest first, under the letter views", async () => {
    const page = await view({});
    expect(page.rows.map((r) => r.action)).toEqual(["masking.save", "redrive.start"]);
    expect(page.actions).toEqual(
      expect.arrayContaining(["letter.view", "redrive.start", "masking.save", "auth.sign_in"]),
    );
  });

  it("shows access entries on their own, paged by the database", async () => {
    const first = await view({ category: "access" }, undefined, undefined, 25);
    expect(first.rows).toHaveLength(25);
    expect(first.rows[0].action).toBe("auth.sign_in");
    expect(new Set(first.rows.slice(1).map((r) => r.action))).toEqual(new Set(["letter.view"]));
    const rest = await view({ category: "access" }, undefined, first.nextCursor!, 100);
    expect(rest.rows).toHaveLength(61 - 25);
    expect(rest.nextCursor).toBeNull();
    expect(new Set([...first.rows, ...rest.rows].map((r) => r.target)).size).toBe(61);
  });

  it("an action chosen wins over the category; 'all' and an export link without a category show everything", async () => {
    const page = await view({ action: "letter.view", category: "operations" });
    expect(page.rows).toHaveLength(60);
    expect((await view({ category: "all" })).rows).toHaveLength(63);
    expect((await view({}, { defaultCategories: false })).rows).toHaveLength(63);
    expect((await view({ category: "administration" })).rows.map((r) => r.action)).toEqual(["masking.save"]);
  });

  it("combines the category with the other filters on the server", async () => {
    expect((await view({ category: "operations", outcome: "denied" })).rows).toEqual([]);
    expect((await view({ category: "operations", actor: "ADMIN-" })).rows.map((r) => r.action)).toEqual([
      "redrive.start",
    ]);
    expect((await view({ category: "operations", actor: "_%" })).rows).toEqual([]); // LIKE wildcards are text
  });
});
