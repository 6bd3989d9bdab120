import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { testActors, useConsoleConfig } from "@/test/console-config";
import { openPayload } from "@/lib/archive/store";
import type { Actor } from "@/lib/auth/session";
import { KafkaKit, testConfig } from "@/lib/brokers/kafka/test-kit";
import { REDRIVE_HEADERS, REPAIR_HEADER } from "@/lib/brokers/contract/markers";
import { getDb } from "@/lib/db";
import { repairTrail } from "./trail";
import { repairLetter } from "./use-cases";

/**
 * repairLetter on the real Kafka: the repaired record is produced to the original topic
 * with the edit, the markers and the key; the original is archived and then marked handled (Kafka
 * cannot remove one record), so the DLT shows it as done; a crafted edit of a Spring DLT header is
 * refused with nothing produced.
 */
const CONN = "repair-kafka";
const meta = () => ({ requestId: `rk-${randomUUID()}`, ip: "127.0.0.1" });
const kit = new KafkaKit();
let admin: Actor;
let consoleConfig: Awaited<ReturnType<typeof useConsoleConfig>>;

beforeAll(async () => {
  consoleConfig = await useConsoleConfig({
    connections: [testConfig({ id: CONN })],
    repair: [{ connection: CONN, queue: `${kit.prefix}*` }],
  });
  ({ admin } = await testActors("repair-kafka.test", ["admin"]));
});

afterAll(async () => {
  await kit.cleanup();
  await consoleConfig.restore();
});

describe("repairLetter on Kafka", () => {
  it("produces the repaired record to the original topic, archives the original, then marks it handled; a DLT header cannot be edited", async () => {
    const enc = (s: string) => new TextEncoder().encode(s);
    const { dlt, source } = await kit.springDlt(
      [0, 1].map((i) => ({ body: enc(`{"order":${i},"status":"PAYED"}`), key: `cust-${i}` })),
      { fails: () => ({ exceptionClass: "com.acme.BadStatus", message: "Unknown status PAYED" }) },
    );
    const { adapterFor } = await import("@/lib/use-case/connection");
    const adapter = adapterFor(CONN);
    const before = (await adapter.browse(dlt, { offset: 0, limit: 10 })).letters;
    const original = before.find((l) => Buffer.from(l.body).toString("utf8").includes('"order":1'))!;
    expect(original).toBeDefined();

    // A crafted request editing a Spring DLT header: refused, nothing produced, nothing handled.
    await expect(
      repairLetter(admin, meta(), {
        connectionId: CONN,
        queue: dlt,
        letterId: original.id,
        setHeaders: { "kafka_dlt-original-topic": "elsewhere" },
        reason: "crafted",
      }),
    ).rejects.toMatchObject({ code: expect.stringMatching(/^bad_request:/) });

    const r = await repairLetter(admin, meta(), {
      connectionId: CONN,
      queue: dlt,
      letterId: original.id,
      body: { kind: "json", text: '{"order":1,"status":"PAID"}' },
      reason: "Status enum typo fixed by hand, INC-79",
    });
    expect(r, JSON.stringify(r)).toMatchObject({ outcome: "moved", reason: null });
    expect(r.copyId).toMatch(new RegExp(`^${source}/\\d+/\\d+$`));

    // The copy at the original topic: the edit, the key, the markers.
    const copies = await kit.readAll(source);
    const copy = copies.find((c) => c.headers[REPAIR_HEADER] === r.operationId);
    expect(copy, "the repaired record at the original topic").toBeDefined();
    expect(copy!.value).toBe('{"order":1,"status":"PAID"}');
    expect(copy!.key).toBe("cust-1");
    expect(copy!.headers[REDRIVE_HEADERS.redriveId]).toBe(r.operationId);

    // The original: archived as it was, and shown as handled in the DLT; the other letter untouched.
    const after = (await adapter.browse(dlt, { offset: 0, limit: 10 })).letters;
    expect(after.find((l) => l.id === original.id)?.handled).toBeTruthy();
    expect(after.filter((l) => !l.handled)).toHaveLength(1);
    const rows = await getDb().$queryRawUnsafe<
      Array<{
        connection_id: string;
        queue: string;
        letter_id: string;
        discard_job_id: string;
        payload_ciphertext: Uint8Array;
        payload_key_id: string;
      }>
    >(
      `SELECT connection_id, queue, letter_id, discard_job_id::text AS discard_job_id, payload_ciphertext, payload_key_id FROM archived_letters WHERE discard_job_id = $1::uuid`,
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
    ).toBe('{"order":1,"status":"PAYED"}');
    // The handled original's page learns from the audit log where its copy went (a new record whose
    // letter id, should it fail again, is not known in advance: no copy link on Kafka).
    const trail = await repairTrail(admin, meta(), { connectionId: CONN, queue: dlt, letterId: original.id });
    expect(trail.repairedAs).toMatchObject({
      operationId: r.operationId,
      copyId: r.copyId,
      copyLetterId: null,
      archiveId: expect.stringMatching(/^[0-9a-f-]{36}$/),
    });
    expect(r.copyLetterId).toBeNull();
  });
});
