import { randomUUID } from "node:crypto";
import type { ConsumeMessage } from "amqplib";
import { afterAll, describe, expect, it } from "vitest";
import { collectMoves, markersFor } from "@/lib/brokers/contract-redrive";
import { runRepairContract } from "@/lib/brokers/contract-repair";
import { REDRIVE_HEADERS, REPAIR_HEADER, type LetterCopy, type LetterRepair } from "@/lib/brokers/types";
import { RabbitMqAdapter } from "@/lib/brokers/rabbitmq/adapter";
import { RabbitKit, testConfig } from "@/lib/brokers/rabbitmq/test-kit";
import { rawPropertiesOf } from "@/lib/brokers/rabbitmq/raw-headers";
import { contractFixture, peek } from "@/lib/brokers/rabbitmq/contract-fixture";
import { parseProperties, tableEntries } from "@/lib/brokers/rabbitmq/mover";

runRepairContract("rabbitmq", contractFixture);

/** The exact bytes of the header entry `name` (name, type tag and value) as the broker delivered it. */
function rawEntry(m: ConsumeMessage, name: string): Buffer | null {
  const table = parseProperties(rawPropertiesOf(m.properties)!).fields.get(0x2000);
  return table ? (tableEntries(table.subarray(4)).find((e) => e.name === name)?.bytes ?? null) : null;
}

describe("rabbitmq repair: AMQP properties and broker history", () => {
  const kit = new RabbitKit();
  const adapter = new RabbitMqAdapter(testConfig(), { idleMs: 500 });
  afterAll(async () => {
    await adapter.close();
    await kit.cleanup();
  });

  /** A DLQ whose two letters carry a correlation id and died (rejected) in `source`. */
  async function dlqWithCorrelation() {
    const dlq = await kit.queue(kit.name("dlq"));
    const source = await kit.queue(kit.name("work"), { "x-dead-letter-exchange": "", "x-dead-letter-routing-key": dlq });
    for (const i of [0, 1]) await kit.publish(source, { body: new TextEncoder().encode(`corr-${i}`), messageId: `corr-${i}-${randomUUID()}`, props: { correlationId: `order-${i}` } });
    await kit.rejectAll(source, 2);
    await kit.waitDepth(dlq, 2);
    return { dlq, source };
  }

  it("sets correlation_id only where the repair gives one, gives the copy a new message_id, and carries x-death unchanged", async () => {
    const { dlq, source } = await dlqWithCorrelation();
    const before = await peek(dlq);
    const letters = (await adapter.browse(dlq, { offset: 0, limit: 10 })).letters;
    expect(letters.map((l) => l.correlationId)).toEqual(["order-0", "order-1"]);
    const operationId = randomUUID();
    const repairs: Array<Omit<LetterRepair, "operationId">> = [{ correlationId: "order-0-retry", setHeaders: { "x-fixed": "yes" } }, { setHeaders: { "x-fixed": "yes" } }];
    const reqs = letters.map((l, i) => ({ letterId: l.id, sha256: l.sha256, target: { kind: "origin" as const }, markers: markersFor(operationId, 1, l.messageId), repair: { ...repairs[i], operationId } }));
    const archived: LetterCopy[] = [];
    const results = await collectMoves(
      adapter.moveLetters(dlq, reqs, {
        beforeRemove: async (c) => {
          archived.push(c);
        },
      }),
    );
    expect(results.map((r) => [r.outcome, r.copyId])).toEqual(reqs.map((r) => ["moved", r.markers.replayId]));
    expect(archived.map((c) => c.letter.correlationId)).toEqual(["order-0", "order-1"]);

    await kit.waitDepth(source, 2);
    const copies = await peek(source);
    expect(copies.map((m) => m.properties.correlationId)).toEqual(["order-0-retry", "order-1"]);
    expect(copies.map((m) => m.properties.messageId)).toEqual(reqs.map((r) => r.markers.replayId));
    for (const [i, copy] of copies.entries()) {
      const h = copy.properties.headers as Record<string, unknown>;
      expect(String(h[REPAIR_HEADER])).toBe(operationId);
      expect(String(h[REDRIVE_HEADERS.originalMessageId])).toBe(letters[i].messageId);
      // Broker history travels byte for byte: the same x-death entry the DLQ held.
      const death = rawEntry(before[i], "x-death");
      expect(death).not.toBeNull();
      expect(rawEntry(copy, "x-death")!.equals(death!)).toBe(true);
      expect(rawEntry(copy, "x-first-death-queue")!.equals(rawEntry(before[i], "x-first-death-queue")!)).toBe(true);
    }
    await kit.waitDepth(dlq, 0);
  });
});
