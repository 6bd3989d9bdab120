import { randomUUID } from "node:crypto";
import type { ConsumeMessage } from "amqplib";
import { afterAll, describe, expect, it } from "vitest";
import { collectMoves, markersFor } from "@/lib/brokers/contract-suite/redrive";
import { runRepairContract } from "@/lib/brokers/contract-suite/repair";
import { REDRIVE_HEADERS, REPAIR_HEADER } from "@/lib/brokers/contract/markers";
import type { LetterCopy } from "@/lib/brokers/contract/letter";
import type { LetterRepair } from "@/lib/brokers/contract/move";
import { RabbitMqAdapter } from "@/lib/brokers/rabbitmq/adapter";
import { RabbitKit, testConfig } from "@/lib/brokers/rabbitmq/test-kit";
import { rawPropertiesOf } from "@/lib/brokers/rabbitmq/raw-headers";
import { contractFixtureWith, peek } from "@/lib/brokers/rabbitmq/contract-fixture";
import { parseProperties, tableEntries } from "@/lib/brokers/rabbitmq/amqp-properties";
import { MANAGED_HEADERS } from "@/lib/connections/managed-headers";

runRepairContract("rabbitmq", contractFixtureWith({ allManagedHeaders: MANAGED_HEADERS }));

/** The exact bytes of the header entry `name` (name, type tag and value) as the broker delivered it. */
function rawEntry(m: ConsumeMessage, name: string): Buffer | null {
  const table = parseProperties(rawPropertiesOf(m.properties)!).fields.get(0x2000);
  return table ? (tableEntries(table.subarray(4)).find((e) => e.name === name)?.bytes ?? null) : null;
}

describe("rabbitmq repair: AMQP properties and broker history", () => {
  const kit = new RabbitKit();
  const adapter = new RabbitMqAdapter(testConfig(), { allManagedHeaders: MANAGED_HEADERS, idleMs: 500 });
  afterAll(async () => {
    await adapter.close();
    await kit.cleanup();
  });

  /** A DLQ whose two letters carry a correlation id and died (rejected) in `source`. */
  async function dlqWithCorrelation() {
    const dlq = await kit.queue(kit.name("dlq"));
    const source = await kit.queue(kit.name("work"), {
      "x-dead-letter-exchange": "",
      "x-dead-letter-routing-key": dlq,
    });
    for (const i of [0, 1])
      await kit.publish(source, {
        body: new TextEncoder().encode(`corr-${i}`),
        messageId: `corr-${i}-${randomUUID()}`,
        props: { correlationId: `order-${i}` },
      });
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
    const repairs: Array<Omit<LetterRepair, "operationId">> = [
      { correlationId: "order-0-retry", setHeaders: { "x-fixed": "yes" } },
      { setHeaders: { "x-fixed": "yes" } },
    ];
    const reqs = letters.map((l, i) => ({
      letterId: l.id,
      sha256: l.sha256,
      target: { kind: "origin" as const },
      markers: markersFor(operationId, 1, l.messageId),
      repair: { ...repairs[i], operationId },
    }));
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

  it("hands the archive one original at a time, in DLQ order, while copies are confirmed in a window", async () => {
    const bodies = Array.from({ length: 8 }, (_, i) => `window-${i}`);
    const { dlq, source } = await kit.dlqByReject(
      bodies.map((b) => ({ body: new TextEncoder().encode(b), messageId: `${b}-${randomUUID()}` })),
    );
    const letters = (await adapter.browse(dlq, { offset: 0, limit: 20 })).letters;
    const operationId = randomUUID();
    const reqs = letters.map((l) => ({
      letterId: l.id,
      sha256: l.sha256,
      target: { kind: "origin" as const },
      markers: markersFor(operationId, 1, l.messageId),
      repair: { operationId, setHeaders: { "x-fixed": "yes" } },
    }));
    const order: string[] = [];
    let active = 0;
    let most = 0;
    const results = await collectMoves(
      adapter.moveLetters(dlq, reqs, {
        maxInFlight: 8,
        beforeRemove: async (c) => {
          most = Math.max(most, ++active);
          // Later letters finish sooner: a concurrent archive would reorder them.
          await new Promise((r) => setTimeout(r, 40 - 4 * order.length));
          order.push(Buffer.from(c.letter.body).toString());
          active--;
        },
      }),
    );
    expect(results.map((r) => r.outcome)).toEqual(bodies.map(() => "moved"));
    expect(order).toEqual(bodies);
    expect(most).toBe(1);
    await kit.waitDepth(source, bodies.length);
    await kit.waitDepth(dlq, 0);
  });

  it("a copy RabbitMQ returns as unroutable is not archived, and the original stays with the reason", async () => {
    const { dlq, source } = await kit.dlqByReject([
      { body: new TextEncoder().encode("gone-origin"), messageId: `go-${randomUUID()}` },
    ]);
    // The origin queue is gone, so the default exchange has nowhere to route the copy: a basic.return.
    await (await kit.channel()).deleteQueue(source);
    // Configured: with its source gone, discovery no longer names it a DLQ.
    const own = new RabbitMqAdapter(testConfig({ dlqs: [{ name: dlq }], discover: false }), {
      allManagedHeaders: MANAGED_HEADERS,
      idleMs: 500,
    });
    const [l] = (await own.browse(dlq, { offset: 0, limit: 5 })).letters;
    const operationId = randomUUID();
    let archived = 0;
    const results = await collectMoves(
      own.moveLetters(
        dlq,
        [
          {
            letterId: l.id,
            sha256: l.sha256,
            target: { kind: "origin" },
            markers: markersFor(operationId, 1, l.messageId),
            repair: { operationId, body: new TextEncoder().encode("fixed") },
          },
        ],
        {
          beforeRemove: async () => {
            archived++;
          },
        },
      ),
    );
    expect(results[0]).toMatchObject({
      outcome: "failed",
      reason: expect.stringMatching(/unroutable.*stays in the DLQ/),
    });
    expect(results[0].copyId ?? null).toBeNull();
    await own.close();
    expect(archived).toBe(0);
    const [still] = await peek(dlq);
    expect(still.content.toString()).toBe("gone-origin");
  });
});
