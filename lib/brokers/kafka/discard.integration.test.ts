import { randomUUID } from "node:crypto";
import { afterAll, describe, expect, it } from "vitest";
import { collect } from "@/lib/brokers/contract-suite/redrive";
import type { LetterCopy } from "@/lib/brokers/contract/letter";
import type { RemoveResult, RepublishResult } from "@/lib/brokers/contract/remove";
import { KafkaAdapter } from "@/lib/brokers/kafka/adapter";
import { KafkaKit, testConfig } from "@/lib/brokers/kafka/test-kit";
import { closeDb } from "@/lib/db";
import { prismaHandledStore } from "@/lib/connections/kafka-handled-store";
import { MANAGED_HEADERS } from "@/lib/connections/managed-headers";

const text = (s: string) => new TextEncoder().encode(s);

describe("kafka discard undo when the record is gone from the log", () => {
  const kit = new KafkaKit();
  const adapter = new KafkaAdapter(testConfig({ id: `discard-gone-${randomUUID().slice(0, 8)}` }), {
    allManagedHeaders: MANAGED_HEADERS,
    handledStore: prismaHandledStore(),
  });
  afterAll(async () => {
    await adapter.close();
    await kit.cleanup();
    await closeDb();
  });

  it("produces it again with its key, value and headers (new offset, new letter id); a record still there is restored", async () => {
    const { dlt } = await kit.springDlt([
      { body: text("gone-0"), key: "k-0", messageId: `gone-0-${randomUUID()}`, headers: { "x-app": "a0" } },
      { body: text("kept-1"), key: "k-1", messageId: `kept-1-${randomUUID()}`, headers: { "x-app": "a1" } },
    ]);
    const before = (await adapter.browse(dlt, { offset: 0, limit: 10 })).letters;
    expect(before.map((l) => l.id)).toEqual(["0-0", "0-1"]);
    const copies: LetterCopy[] = [];
    const operationId = randomUUID();
    const removed = await collect<RemoveResult>(
      adapter.removeLetters(
        dlt,
        before.map((l) => ({ letterId: l.id, sha256: l.sha256 })),
        { operationId, beforeRemove: async (c) => void copies.push(c) },
      ),
    );
    expect(removed.map((r) => r.outcome)).toEqual(["removed", "removed"]);

    // Retention (simulated): the first record is deleted from the log.
    const admin = await kit.getAdmin();
    await admin.fetchTopicMetadata({ topics: [dlt] }); // kafkajs finds the partition leader only for topics it has metadata of
    await admin.deleteTopicRecords({ topic: dlt, partitions: [{ partition: 0, offset: "1" }] });
    const results = await collect<RepublishResult>(
      adapter.republish(
        dlt,
        copies.map((c) => ({ id: c.letterId, envelope: c.envelope, body: c.letter.body })),
        { operationId },
      ),
    );
    const by = new Map(results.map((r) => [r.id, r]));
    expect(by.get("0-0")).toMatchObject({ outcome: "published", how: "published", letterId: "0-2", reason: null });
    expect(by.get("0-1")).toMatchObject({ outcome: "published", how: "restored", letterId: "0-1", reason: null });

    const after = (await adapter.browse(dlt, { offset: 0, limit: 10 })).letters;
    expect(after.map((l) => [l.id, l.handled?.outcome ?? null])).toEqual([
      ["0-1", null],
      ["0-2", null],
    ]);
    const again = after.find((l) => l.id === "0-2")!;
    expect(Buffer.from(again.body).toString()).toBe("gone-0");
    expect(again.orderingKey).toBe("k-0");
    expect(again.headers).toEqual(copies[0].letter.headers);
    expect(again.messageId).toBe(copies[0].letter.messageId);
  });

  it("refuses to restore a record another operation marked", async () => {
    const { dlt } = await kit.springDlt([{ body: text("other-op"), key: null }]);
    const [l] = (await adapter.browse(dlt, { offset: 0, limit: 10 })).letters;
    const copies: LetterCopy[] = [];
    await collect(
      adapter.removeLetters(dlt, [{ letterId: l.id, sha256: l.sha256 }], {
        operationId: randomUUID(),
        beforeRemove: async (c) => void copies.push(c),
      }),
    );
    const results = await collect<RepublishResult>(
      adapter.republish(dlt, [{ id: "x", envelope: copies[0].envelope, body: copies[0].letter.body }], {
        operationId: randomUUID(),
      }),
    );
    expect(results).toEqual([expect.objectContaining({ id: "x", outcome: "failed", how: null })]);
    expect(results[0].reason).toMatch(/another operation/);
    expect((await adapter.browse(dlt, { offset: 0, limit: 10 })).letters[0].handled?.outcome).toBe("discarded");
  });
});
