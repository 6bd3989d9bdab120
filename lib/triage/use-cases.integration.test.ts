import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { queryAudit } from "@/lib/audit";
import { createUser } from "@/lib/auth/users";
import type { Actor } from "@/lib/auth/session";
import { RabbitKit } from "@/lib/brokers/rabbitmq/test-kit";
import { getDb } from "@/lib/db";
import { DEFAULT_CLASSIFICATION_RULES } from "@/lib/triage";
import { upsertLetters, refreshGroupSummary } from "./index-store";
import { indexRow } from "./test-kit";
import type { IndexRow } from "./index-row";
import {
  cancelScan,
  exportLetters,
  getScan,
  listGroups,
  listLetters,
  listRules,
  saveRules,
  startScan,
} from "./use-cases";

/** The use cases through their authorize → act → audit path (the registry's local-rabbitmq connection). */
const meta = () => ({ requestId: `uc-${randomUUID()}`, ip: "127.0.0.1" });
const actors: Record<"viewer" | "operator" | "admin", Actor> = {} as never;
const kit = new RabbitKit();

beforeAll(async () => {
  for (const role of ["viewer", "operator", "admin"] as const) {
    const u = await createUser({
      email: `${role}-${randomUUID().slice(0, 8)}@triage.test`,
      role,
      password: "a-long-enough-password",
    });
    actors[role] = { id: u.id, email: u.email, name: null, role };
  }
});
afterAll(async () => {
  await kit.cleanup();
  const { closeAllAdapters } = await import("@/lib/connections/registry");
  await closeAllAdapters();
});

function row(i: number, over: Partial<IndexRow> = {}): IndexRow {
  return indexRow(i, {
    exception_class: "com.acme.FlakyThing",
    group_key: "g-flaky",
    group_label: "FlakyThing: thing <n> failed",
    headers: { "x-tenant": "acme" },
    ...over,
  });
}

describe("triage use cases", () => {
  it("startScan queues one scan per DLQ (audited), a second start returns it, cancel cancels it", async () => {
    const { dlq } = await kit.dlqByReject([{ body: new TextEncoder().encode("x"), messageId: "a" }]);
    const dlqRef = { connectionId: "local-rabbitmq", queue: dlq };
    const m = meta();
    const first = await startScan(actors.operator, m, dlqRef);
    expect(first.alreadyActive).toBe(false);
    expect(first.scan.state).toBe("queued");
    const again = await startScan(actors.operator, meta(), dlqRef);
    expect(again).toMatchObject({ alreadyActive: true, scan: { id: first.scan.id } });
    const { rows } = await queryAudit({ action: "triage.scan_start", queue: dlq }, { limit: 10 });
    expect(rows.find((r) => r.requestId === m.requestId)).toMatchObject({
      outcome: "success",
      actorEmail: actors.operator.email,
    });
    expect((await getScan(actors.viewer, meta(), { jobId: first.scan.id })).id).toBe(first.scan.id);
    const cancelled = await cancelScan(actors.operator, meta(), { jobId: first.scan.id });
    expect(cancelled.state).toBe("cancelled");
  });

  it("startScan of a missing DLQ fails in operator words and is audited as a failure", async () => {
    const m = meta();
    await expect(
      startScan(actors.operator, m, { connectionId: "local-rabbitmq", queue: `missing-${randomUUID()}` }),
    ).rejects.toMatchObject({ code: "not_found:queue" });
    const { rows } = await queryAudit({ action: "triage.scan_start" }, { limit: 20 });
    expect(rows.find((r) => r.requestId === m.requestId)).toMatchObject({ outcome: "failure" });
  });

  it("saving rules re-labels groups on the next read; invalid rules are refused", async () => {
    const queue = `uc-rules-${randomUUID().slice(0, 8)}`;
    await upsertLetters(
      "uc-conn",
      queue,
      randomUUID(),
      Array.from({ length: 3 }, (_, i) => row(i)),
      getDb(),
    );
    await refreshGroupSummary("uc-conn", queue);
    const before = await listGroups(actors.viewer, meta(), { connectionId: "uc-conn", queue });
    expect(before.by === "group" && before.groups[0].disposition).toBe("unknown");

    const current = await listRules(actors.viewer, meta());
    await expect(saveRules(actors.admin, meta(), { rules: [{ id: "bad" }] })).rejects.toMatchObject({
      code: "bad_request:rules",
    });
    const saved = await saveRules(actors.admin, meta(), {
      rules: [
        {
          id: "local.flaky",
          disposition: "transient",
          field: "class",
          pattern: "FlakyThing",
          description: "Our flaky dependency",
        },
        ...DEFAULT_CLASSIFICATION_RULES,
      ],
      expectedVersion: current.version,
    });
    expect(saved.version).toBe(current.version + 1);
    await expect(
      saveRules(actors.admin, meta(), { rules: DEFAULT_CLASSIFICATION_RULES, expectedVersion: current.version }),
    ).rejects.toMatchObject({ code: "conflict:rules" });
    const after = await listGroups(actors.viewer, meta(), { connectionId: "uc-conn", queue });
    expect(after.by === "group" && after.groups[0]).toMatchObject({
      disposition: "transient",
      ruleId: "local.flaky",
      count: 3,
    });
    await saveRules(actors.admin, meta(), { rules: DEFAULT_CLASSIFICATION_RULES });

    const page = await listLetters(actors.viewer, meta(), {
      filter: { connectionId: "uc-conn", queue, header: { name: "x-tenant", value: "acme" } },
      limit: 2,
    });
    expect(page.count).toBe(3);
    expect(page.letters).toHaveLength(2);
    expect(page.nextCursor).not.toBeNull();
  });

  it("a viewer exports metadata (audited with the filter and count) but not payloads", async () => {
    const queue = `uc-export-${randomUUID().slice(0, 8)}`;
    await upsertLetters(
      "uc-conn",
      queue,
      randomUUID(),
      Array.from({ length: 5 }, (_, i) => row(i)),
      getDb(),
    );
    const m = meta();
    const out = await exportLetters(actors.viewer, m, { filter: { connectionId: "uc-conn", queue }, format: "csv" });
    expect(out.count).toBe(5);
    const rows = [];
    for await (const r of out.rows) rows.push(r);
    expect(rows).toHaveLength(5);
    expect(rows[0]).not.toHaveProperty("payloadBase64");
    const audit = await queryAudit({ action: "triage.export", queue }, { limit: 5 });
    expect(audit.rows.find((r) => r.requestId === m.requestId)).toMatchObject({
      outcome: "success",
      details: expect.objectContaining({ count: 5, includePayload: false }),
    });
    await expect(
      exportLetters(actors.viewer, meta(), {
        filter: { connectionId: "uc-conn", queue },
        format: "json",
        includePayload: true,
      }),
    ).rejects.toMatchObject({ code: "forbidden:letter:read-payload" });
  });
});

describe("triage results pass through the masking rules", () => {
  it("a viewer's letter list and groups never carry the e-mail or card number quoted by an exception", async () => {
    const queue = `uc-mask-${randomUUID().slice(0, 8)}`;
    const secretMail = "jane.doe@example.com";
    const secretCard = "4111 1111 1111 1111";
    const rows = [0, 1].map((i) =>
      row(i, {
        exception_message: `card ${secretCard} of ${secretMail} declined`,
        group_label: `PaymentDeclined: card ${secretCard} of ${secretMail} declined`,
        headers: { "x-customer-email": secretMail },
      }),
    );
    await upsertLetters("uc-conn", queue, randomUUID(), rows, getDb());
    await refreshGroupSummary("uc-conn", queue);

    const letters = await listLetters(actors.viewer, meta(), { filter: { connectionId: "uc-conn", queue } });
    const groups = await listGroups(actors.viewer, meta(), { connectionId: "uc-conn", queue });
    const byHeader = await listGroups(actors.viewer, meta(), {
      connectionId: "uc-conn",
      queue,
      by: "header:x-customer-email",
    });
    const seen = JSON.stringify({ letters, groups, byHeader });
    expect(letters.letters).toHaveLength(2);
    expect(seen).not.toContain(secretMail);
    expect(seen).not.toContain(secretCard);
    expect(seen).not.toContain(secretCard.replace(/ /g, ""));
  });
});
