import { createHash, randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { testActors, useConsoleConfig } from "@/test/console-config";
import { openPayload } from "@/lib/archive/store";
import { viewAudit } from "@/lib/audit-log/use-cases";
import type { Actor } from "@/lib/auth/session";
import { RabbitKit, testConfig } from "@/lib/brokers/rabbitmq/test-kit";
import { arrived, peekAll } from "@/lib/brokers/sqs/contract-fixture";
import { ELASTICMQ_ENDPOINT, SqsKit, testConfig as sqsTestConfig } from "@/lib/brokers/sqs/test-kit";
import { REDRIVE_HEADERS, REPAIR_HEADER } from "@/lib/brokers/contract/markers";
import type { Letter } from "@/lib/brokers/contract/letter";
import { getDb } from "@/lib/db";
import { valueText } from "@/lib/text";
import { repairOfArchived, repairTrail } from "./trail";
import { planRepair, repairLetter, type RepairLetterInput } from "./use-cases";

/**
 * Repair and resubmit of one letter on the real RabbitMQ and Postgres: letters dead-lettered by a
 * real rejection, repaired through the use case (copy confirmed at the origin, original archived,
 * then acked), and every refusal (switch off, roles, locked fields, a rejecting target) audited with
 * nothing moved.
 */
const ON = "repair-on";
const SQS = "repair-sqs";
const OFF = "repair-off";
const enc = (s: string) => new TextEncoder().encode(s);
const sha = (b: Uint8Array | string) => createHash("sha256").update(b).digest("hex");
const meta = () => ({ requestId: `rp-${randomUUID()}`, ip: "127.0.0.1" });
const actors: Record<"viewer" | "operator" | "admin", Actor> = {} as never;
const kit = new RabbitKit();
const sqsKit = new SqsKit(ELASTICMQ_ENDPOINT);
let consoleConfig: Awaited<ReturnType<typeof useConsoleConfig>>;

beforeAll(async () => {
  const config = {
    connections: [
      testConfig({ id: ON }),
      testConfig({ id: OFF }),
      sqsTestConfig(ELASTICMQ_ENDPOINT, { id: SQS, queueNamePrefix: sqsKit.prefix }),
    ],
    repair: [
      { connection: "repair-o?", queue: `${kit.prefix}.dlq.*` },
      { connection: SQS, queue: "*" },
    ],
  };
  // The switch covers ON only: OFF's id does not match "repair-o?" ("repair-off" is longer).
  consoleConfig = await useConsoleConfig(config);
  Object.assign(actors, await testActors("repair.test", ["viewer", "operator", "admin"]));
});

afterAll(async () => {
  await kit.cleanup();
  await sqsKit.cleanup();
  await consoleConfig.restore();
});

const peek = (queue: string, expected: number) => kit.peek(queue, expected);

const ORIGINAL = (i: number) => `{"order":${i},"status":"PAYED","token":"tok-old-${i}-s3cr3t"}`;
/** The letters hold a token the default rules mask, for admins too: editing them needs a reveal in the request. */
const REVEAL = { reason: "Fixing the status by hand, the token stays as it is" };

/** A DLQ with two rejected letters (m-0, m-1), and the adapter's id of m-1. */
async function seeded() {
  const { dlq, source } = await kit.dlqByReject(
    [0, 1].map((i) => ({
      body: enc(ORIGINAL(i)),
      messageId: `m-${i}`,
      headers: { "x-tenant": "acme", "x-exception-class": "com.acme.BadStatus" },
    })),
  );
  const { adapterFor } = await import("@/lib/use-case/connection");
  const page = await adapterFor(ON).browse(dlq, { offset: 0, limit: 10 });
  const letter = page.letters.find((l) => l.messageId === "m-1")!;
  return { dlq, source, letterId: letter.id };
}

/** A letter's header as text, or null. */
function headerOf(l: Letter | null, name: string): string | null {
  const h = l?.headers.find((x) => x.name === name);
  return h ? valueText(h.value) : null;
}

const auditRows = (where: { operationId?: string; requestId?: string }) =>
  getDb().auditEvent.findMany({ where, orderBy: { id: "asc" } });

describe("repairLetter on RabbitMQ", () => {
  it("sends the repaired copy to the origin with the edit and markers, archives the original, removes it, and audits both rows (masked diff, hashes)", async () => {
    const { dlq, source, letterId } = await seeded();
    const edited = '{"order":1,"status":"PAID","token":"tok-new-1-s3cr3t"}';
    const input: RepairLetterInput = {
      connectionId: ON,
      queue: dlq,
      letterId,
      body: { kind: "json", text: edited },
      reveal: REVEAL,
      setHeaders: { "x-tenant": "acme-eu" },
      reason: "Status enum typo fixed by hand (PAYED → PAID), INC-42",
    };

    const plan = await planRepair(actors.admin, meta(), input);
    expect(plan.ok, JSON.stringify(plan.problems)).toBe(true);
    expect(plan.locked.map((l) => l.name)).toEqual(expect.arrayContaining(["x-death"]));
    expect(plan.diff.payload).toMatchObject({ kind: "json" });
    expect(await kit.depth(dlq)).toBe(2); // planning moves nothing

    const r = await repairLetter(actors.admin, meta(), input);
    expect(r, JSON.stringify(r)).toMatchObject({ outcome: "moved", reason: null });
    expect(r.copyId).toMatch(/\S/);
    expect(r.destination).toMatch(/\S/);

    // The copy at the origin: the edit, the markers, a new message id; history kept.
    const [copy] = await peek(source, 1);
    expect(copy.content.toString("utf8")).toBe(edited);
    const h = copy.properties.headers ?? {};
    expect(String(h["x-tenant"])).toBe("acme-eu");
    expect(String(h["x-exception-class"])).toBe("com.acme.BadStatus");
    expect(String(h[REPAIR_HEADER])).toBe(r.operationId);
    expect(String(h["x-dlq-original-message-id"])).toBe("m-1");
    expect(String(h["x-dlq-redrive-id"])).toBe(r.operationId);
    expect(h["x-death"]).toBeDefined();
    expect(copy.properties.messageId).not.toBe("m-1");
    expect(copy.properties.messageId).toBe(r.copyId);

    // The original left the DLQ; the other letter did not.
    const left = await peek(dlq, 1);
    expect(left.map((m) => m.properties.messageId)).toEqual(["m-0"]);

    // The original is in the archive under the repair's operation id, decryptable to its bytes.
    const rows = await getDb().$queryRawUnsafe<
      Array<{
        connection_id: string;
        queue: string;
        letter_id: string;
        discard_job_id: string;
        payload_ciphertext: Uint8Array;
        payload_key_id: string;
        discard_reason: string;
        sha256: string;
      }>
    >(
      `SELECT connection_id, queue, letter_id, discard_job_id::text AS discard_job_id, payload_ciphertext, payload_key_id, discard_reason, sha256 FROM archived_letters WHERE discard_job_id = $1::uuid`,
      r.operationId,
    );
    expect(rows).toHaveLength(1);
    const a = rows[0];
    expect(
      openPayload({
        connectionId: a.connection_id,
        queue: a.queue,
        letterId: a.letter_id,
        discardJobId: a.discard_job_id,
        payloadCiphertext: a.payload_ciphertext,
        payloadKeyId: a.payload_key_id,
      }).toString("utf8"),
    ).toBe(ORIGINAL(1));
    expect(a.discard_reason).toContain("INC-42");
    expect(a.sha256).toBe(sha(ORIGINAL(1)));

    // Audit: one operation row and one letter row, linked by the operation id.
    const audit = await auditRows({ operationId: r.operationId });
    expect(audit.map((x) => `${x.scope}:${x.action}:${x.outcome}`)).toEqual([
      "operation:letter.repair:success",
      "letter:letter.repaired:success",
    ]);
    expect(audit[0].details).toMatchObject({
      reason: input.reason,
      target: "origin",
      outcome: "moved",
      copyId: r.copyId,
    });
    const d = audit[1].details as Record<string, unknown>;
    expect(d).toMatchObject({ sha256: sha(ORIGINAL(1)), afterSha256: sha(edited) });
    const diffText = JSON.stringify(d.diff);
    expect(diffText).toContain("/status");
    expect(diffText).toContain("PAID");
    expect(diffText).toContain("acme-eu");
    // The token field is masked by the default rules: its change is recorded, its values are not.
    expect(diffText).toContain("/token");
    expect(diffText).not.toMatch(/tok-(old|new)-1-s3cr3t/);
    // An operator reading the audit log sees this payload masked (its token field), so neither digest
    // is shown raw: a SHA-256 of the before or after bytes would let them confirm a guessed token.
    const viewed = await viewAudit(actors.operator, meta(), { filter: { action: "letter.repaired", queue: dlq } });
    expect(viewed.rows).toHaveLength(1);
    const shown = viewed.rows[0].details as Record<string, unknown>;
    expect(String(shown.sha256)).not.toBe(sha(ORIGINAL(1)));
    expect(String(shown.afterSha256)).not.toBe(sha(edited));
    expect(JSON.stringify(viewed)).not.toContain(sha(edited));
    expect(JSON.stringify(viewed)).not.toContain(sha(ORIGINAL(1)));
  });

  it("links the two ends: the copy's letter id finds it when it fails again, and until then its page knows it from the audit log", async () => {
    const { dlq, source, letterId } = await seeded();
    const r = await repairLetter(actors.admin, meta(), {
      connectionId: ON,
      queue: dlq,
      letterId,
      body: { kind: "json", text: '{"order":1,"status":"PAID"}' },
      reveal: REVEAL,
      reason: "Link both ends, INC-44",
    });
    expect(r.outcome).toBe("moved");
    expect(r.copyLetterId).toMatch(/\S/);
    const { adapterFor } = await import("@/lib/use-case/connection");
    // Not come back yet: the DLQ has no such letter; the audit trail has both ends, for a viewer too.
    expect(await adapterFor(ON).getLetter(dlq, r.copyLetterId!)).toBeNull();
    const ofOriginal = await repairTrail(actors.viewer, meta(), { connectionId: ON, queue: dlq, letterId });
    expect(ofOriginal.repairedAs).toMatchObject({
      operationId: r.operationId,
      copyId: r.copyId,
      copyLetterId: r.copyLetterId,
      destination: r.destination,
      originalLetterId: letterId,
      queue: dlq,
    });
    expect(ofOriginal.repairedAs?.archiveId).toMatch(/^[0-9a-f-]{36}$/);
    expect(ofOriginal.copyOf).toBeNull();
    const ofCopy = await repairTrail(actors.viewer, meta(), {
      connectionId: ON,
      queue: dlq,
      letterId: r.copyLetterId!,
    });
    expect(ofCopy.copyOf).toMatchObject({
      operationId: r.operationId,
      originalLetterId: letterId,
      archiveId: ofOriginal.repairedAs?.archiveId,
    });
    expect(ofCopy.repairedAs).toBeNull();
    // The archived original's page knows its copy by the operation it was archived under.
    const archived = await repairOfArchived(actors.admin, meta(), {
      connectionId: ON,
      queue: dlq,
      letterId,
      operationId: r.operationId,
    });
    expect(archived).toMatchObject({ copyId: r.copyId, copyLetterId: r.copyLetterId });
    // The copy fails again (a real rejection at the origin): it is in the DLQ under that very id, marked.
    await kit.rejectAll(source, 1);
    await kit.waitDepth(dlq, 2);
    const back = await adapterFor(ON).getLetter(dlq, r.copyLetterId!);
    expect(back?.messageId).toBe(r.copyId);
    expect(headerOf(back, REPAIR_HEADER)).toBe(r.operationId);
    // Another connection's letter with the same id is not this repair's copy.
    expect(
      (await repairTrail(actors.viewer, meta(), { connectionId: OFF, queue: dlq, letterId: r.copyLetterId! })).copyOf,
    ).toBeNull();
  });

  it("refuses where the config switch does not cover the DLQ: audited, nothing read or moved", async () => {
    const { dlq, letterId } = await seeded();
    const m = meta();
    await expect(
      repairLetter(actors.admin, m, {
        connectionId: OFF,
        queue: dlq,
        letterId,
        setHeaders: { "x-tenant": "x" },
        reason: "should be refused",
      }),
    ).rejects.toMatchObject({
      code: "forbidden:repair-disabled",
    });
    const rows = await auditRows({ requestId: m.requestId });
    expect(rows.map((x) => `${x.action}:${x.outcome}`)).toEqual(["letter.repair:denied"]);
    expect(await kit.depth(dlq)).toBe(2);
  });

  it("refuses an operator and a viewer, audited, before reading anything", async () => {
    const { dlq, source, letterId } = await seeded();
    for (const role of ["operator", "viewer"] as const) {
      const m = meta();
      await expect(
        repairLetter(actors[role], m, {
          connectionId: ON,
          queue: dlq,
          letterId,
          setHeaders: { "x-tenant": "x" },
          reason: "not allowed",
        }),
      ).rejects.toMatchObject({ code: "forbidden:letter:repair" });
      await expect(planRepair(actors[role], meta(), { connectionId: ON, queue: dlq, letterId })).rejects.toMatchObject({
        code: "forbidden:letter:repair",
      });
      const rows = await auditRows({ requestId: m.requestId });
      expect(rows.map((x) => `${x.action}:${x.outcome}:${x.actorRole}`)).toEqual([`letter.repair:denied:${role}`]);
    }
    expect(await kit.depth(dlq)).toBe(2);
    expect(await kit.depth(source)).toBe(0);
  });

  it("refuses a crafted edit of x-death or a console marker: audited, nothing moves", async () => {
    const { dlq, source, letterId } = await seeded();
    const crafted: Array<Partial<RepairLetterInput>> = [
      { removeHeaders: ["x-death"] },
      { setHeaders: { "x-dlq-redrive-count": "0" } },
      { setHeaders: { "x-first-death-queue": "elsewhere", "x-tenant": "ok" } },
    ];
    for (const edit of crafted) {
      const m = meta();
      await expect(
        repairLetter(actors.admin, m, { connectionId: ON, queue: dlq, letterId, reason: "crafted request", ...edit }),
      ).rejects.toMatchObject({
        code: "bad_request:repair",
        userMessage: expect.stringMatching(/cannot be (set|removed)/),
      });
      const rows = await auditRows({ requestId: m.requestId });
      expect(
        rows.map((x) => `${x.action}:${x.outcome}`),
        JSON.stringify(edit),
      ).toEqual(["letter.repair:failure"]);
    }
    expect(await kit.depth(dlq)).toBe(2);
    expect(await kit.depth(source)).toBe(0);
  });

  it("reports a JSON syntax error with line and column in the plan, and refuses to send it", async () => {
    const { dlq, letterId } = await seeded();
    const input = {
      connectionId: ON,
      queue: dlq,
      letterId,
      body: { kind: "json" as const, text: '{\n  "order": 1,\n  "status": PAID\n}' },
      reveal: REVEAL,
      reason: "typo",
    };
    const plan = await planRepair(actors.admin, meta(), input);
    expect(plan.ok).toBe(false);
    expect(plan.problems[0]).toMatchObject({ field: "payload", line: 3 });
    await expect(repairLetter(actors.admin, meta(), input)).rejects.toMatchObject({
      code: "bad_request:repair",
      userMessage: expect.stringMatching(/line 3, column \d+/),
    });
    expect(await kit.depth(dlq)).toBe(2);
  });

  it("leaves the original in place with the reason when the target rejects the copy", async () => {
    const { dlq, letterId } = await seeded();
    const r = await repairLetter(actors.admin, meta(), {
      connectionId: ON,
      queue: dlq,
      letterId,
      setHeaders: { "x-tenant": "acme-eu" },
      target: { kind: "queue", name: `${kit.prefix}.missing-${randomUUID().slice(0, 6)}` },
      reason: "send it elsewhere",
    });
    expect(r.outcome).toBe("failed");
    expect(r.reason).toMatch(/\S/);
    expect(r.copyId).toBeNull();
    const left = await peek(dlq, 2);
    expect(left.map((m) => m.properties.messageId).sort()).toEqual(["m-0", "m-1"]);
    expect(
      await getDb().$queryRawUnsafe<unknown[]>(
        `SELECT 1 FROM archived_letters WHERE discard_job_id = $1::uuid`,
        r.operationId,
      ),
    ).toHaveLength(0);
    const audit = await auditRows({ operationId: r.operationId });
    expect(audit.map((x) => `${x.scope}:${x.action}:${x.outcome}`)).toEqual([
      "operation:letter.repair:failure",
      "letter:letter.repaired:failure",
    ]);
    expect(audit[0].details).toMatchObject({ outcome: "failed", failure: r.reason });
  });
});

describe("repairLetter on SQS (ElasticMQ)", () => {
  async function seededSqs() {
    const d = await sqsKit.dlqByRedrive(
      [0, 1].map((i) => ({ body: enc(ORIGINAL(i)), headers: { "x-tenant": "acme" } })),
    );
    const { adapterFor } = await import("@/lib/use-case/connection");
    const letters = (await adapterFor(SQS).browse(d.dlq, { offset: 0, limit: 10 })).letters;
    const letter = letters.find((l) => l.messageId === d.messageIds[1])!;
    return { ...d, letterId: letter.id, messageId: letter.messageId };
  }

  it("sends the repaired copy to the origin with the edit and markers, archives the original and deletes it", async () => {
    const { dlq, dlqUrl, sourceUrl, letterId, messageId } = await seededSqs();
    const edited = '{"order":1,"status":"PAID","token":"tok-old-1-s3cr3t"}';
    const r = await repairLetter(actors.admin, meta(), {
      connectionId: SQS,
      queue: dlq,
      letterId,
      body: { kind: "json", text: edited },
      reveal: REVEAL,
      setHeaders: { "x-tenant": "acme-eu" },
      reason: "Status enum typo, INC-43",
    });
    expect(r, JSON.stringify(r)).toMatchObject({ outcome: "moved", reason: null });
    const copies = (await peekAll(sqsKit, sourceUrl)).map(arrived);
    expect(copies).toHaveLength(1);
    expect(Buffer.from(copies[0].body).toString("utf8")).toBe(edited);
    expect(copies[0].headers["x-tenant"]).toBe("acme-eu");
    expect(copies[0].headers[REPAIR_HEADER]).toBe(r.operationId);
    expect(copies[0].headers[REDRIVE_HEADERS.originalMessageId]).toBe(messageId);
    expect(copies[0].messageId).toBe(r.copyId);
    expect(copies[0].messageId).not.toBe(messageId);
    // Only the other letter is left in the DLQ; the original is archived under the operation id.
    const left = (await peekAll(sqsKit, dlqUrl)).map((m) => m.Body);
    expect(left).toEqual([ORIGINAL(0)]);
    const rows = await getDb().$queryRawUnsafe<Array<{ sha256: string }>>(
      `SELECT sha256 FROM archived_letters WHERE discard_job_id = $1::uuid`,
      r.operationId,
    );
    expect(rows).toEqual([{ sha256: sha(ORIGINAL(1)) }]);
    const audit = await auditRows({ operationId: r.operationId });
    expect(audit.map((x) => `${x.scope}:${x.action}:${x.outcome}`)).toEqual([
      "operation:letter.repair:success",
      "letter:letter.repaired:success",
    ]);
  });

  it("the copy's letter id finds it in the DLQ once the redrive policy moves it back", async () => {
    const { dlq, dlqUrl, sourceUrl, letterId } = await seededSqs();
    const r = await repairLetter(actors.admin, meta(), {
      connectionId: SQS,
      queue: dlq,
      letterId,
      body: { kind: "json", text: '{"order":1,"status":"PAID"}' },
      reveal: REVEAL,
      reason: "Link both ends, INC-45",
    });
    expect(r.outcome).toBe("moved");
    expect(r.copyLetterId).toMatch(/\S/);
    const { adapterFor } = await import("@/lib/use-case/connection");
    // Received and not deleted at the origin (maxReceiveCount 1): ElasticMQ moves it to the DLQ.
    await sqsKit.failUntilMoved(sourceUrl, dlqUrl, 2);
    const back = await adapterFor(SQS).getLetter(dlq, r.copyLetterId!);
    expect(back?.messageId).toBe(r.copyId);
    expect(headerOf(back, REPAIR_HEADER)).toBe(r.operationId);
    expect(
      (await repairTrail(actors.viewer, meta(), { connectionId: SQS, queue: dlq, letterId: r.copyLetterId! })).copyOf
        ?.operationId,
    ).toBe(r.operationId);
  });

  it("refuses a crafted edit of a console marker attribute, and nothing moves", async () => {
    const { dlq, dlqUrl, sourceUrl, letterId } = await seededSqs();
    await expect(
      repairLetter(actors.admin, meta(), {
        connectionId: SQS,
        queue: dlq,
        letterId,
        setHeaders: { "x-dlq-redrive": "count=0" },
        reason: "crafted",
      }),
    ).rejects.toMatchObject({ code: "bad_request:repair" });
    expect(await peekAll(sqsKit, dlqUrl)).toHaveLength(2);
    expect(await peekAll(sqsKit, sourceUrl)).toHaveLength(0);
  });
});
