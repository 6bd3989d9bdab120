/**
 * `close()` gives back every broker connection the adapter opened: its admin, its group-less
 * reader and its producer. Counted from this process's own open sockets to the broker (its file
 * descriptors matched against /proc/self/net/tcp*), on a real Kafka.
 */
import { randomUUID } from "node:crypto";
import { readdirSync, readFileSync, readlinkSync } from "node:fs";
import { afterAll, describe, expect, it, vi } from "vitest";
import { collectMoves, markersFor } from "@/lib/brokers/contract-suite/redrive";
import { KafkaAdapter } from "@/lib/brokers/kafka/adapter";
import { KAFKA_BROKERS, KafkaKit, testConfig } from "@/lib/brokers/kafka/test-kit";
import { prismaHandledStore } from "@/lib/connections/kafka-handled-store";
import { MANAGED_HEADERS } from "@/lib/connections/managed-headers";
import { closeDb } from "@/lib/db";

const PORTS = new Set(KAFKA_BROKERS.map((b) => Number(b.slice(b.lastIndexOf(":") + 1))));

/** Inodes of this process's TCP sockets whose remote end is a broker's port. */
function brokerSockets(): Set<string> {
  const mine = new Set<string>();
  for (const fd of readdirSync("/proc/self/fd")) {
    try {
      const m = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/self/fd/${fd}`));
      if (m) mine.add(m[1]);
    } catch {
      // closed between the listing and the look
    }
  }
  const out = new Set<string>();
  for (const file of ["/proc/self/net/tcp", "/proc/self/net/tcp6"]) {
    let text = "";
    try {
      text = readFileSync(file, "utf8");
    } catch {
      continue;
    }
    for (const line of text.split("\n").slice(1)) {
      const cols = line.trim().split(/\s+/);
      if (cols.length < 10) continue;
      const remotePort = Number.parseInt(cols[2].slice(cols[2].lastIndexOf(":") + 1), 16);
      if (PORTS.has(remotePort) && mine.has(cols[9])) out.add(cols[9]);
    }
  }
  return out;
}

describe("Kafka adapter close()", () => {
  const kit = new KafkaKit();
  afterAll(async () => {
    await kit.cleanup();
    await closeDb();
  });

  it("after describing, streaming, browsing and moving letters of a 3-partition topic, no connection it opened is left open", async () => {
    const dlt = await kit.createTopic(`${kit.name("closing")}.DLT`, 3);
    const target = await kit.createTopic(kit.name("closing-target"), 1);
    await (await kit.getProducer()).send({
      topic: dlt,
      acks: -1,
      messages: Array.from({ length: 300 }, (_, i) => ({ partition: i % 3, value: Buffer.from(`letter-${i}`) })),
    });
    // The test kit's own clients are connected now and are not used again until the end.
    const before = brokerSockets();
    const adapter = new KafkaAdapter(
      testConfig({ id: `closing-${randomUUID().slice(0, 8)}`, discover: false, dlqs: [{ name: dlt }] }),
      { allManagedHeaders: MANAGED_HEADERS, handledStore: prismaHandledStore() },
    );
    expect((await adapter.describeDlq(dlt)).depth).toBe(300);
    let streamed = 0;
    for await (const _ of adapter.stream(dlt)) streamed++;
    expect(streamed).toBe(300);
    const page = (await adapter.browse(dlt, { offset: 0, limit: 3 })).letters;
    const moved = await collectMoves(
      adapter.moveLetters(dlt, [
        {
          letterId: page[0].id,
          sha256: page[0].sha256,
          target: { kind: "queue", name: target },
          markers: markersFor(randomUUID()),
        },
      ]),
    );
    expect(moved.map((m) => m.outcome)).toEqual(["moved"]);
    await adapter.consumerGroups!.read();

    const opened = [...brokerSockets()].filter((s) => !before.has(s));
    expect(opened.length).toBeGreaterThan(0);
    await adapter.close();
    // A closed connection ends once the broker has answered its FIN: wait for that, not for a leak.
    await vi.waitFor(
      () => {
        const now = brokerSockets();
        expect(opened.filter((s) => now.has(s))).toEqual([]);
      },
      { timeout: 15_000, interval: 100 },
    );
  });

  it("an open adapter that is not asked anything does not keep waking its process", async () => {
    const dlt = await kit.createTopic(`${kit.name("idle")}.DLT`, 3);
    await (await kit.getProducer()).send({
      topic: dlt,
      acks: -1,
      messages: Array.from({ length: 30 }, (_, i) => ({ partition: i % 3, value: Buffer.from(`letter-${i}`) })),
    });
    const adapter = new KafkaAdapter(
      testConfig({ id: `idle-${randomUUID().slice(0, 8)}`, discover: false, dlqs: [{ name: dlt }] }),
      { allManagedHeaders: MANAGED_HEADERS, handledStore: prismaHandledStore() },
    );
    try {
      // Its admin and its reader have connections open, each of which has had answers.
      expect((await adapter.describeDlq(dlt)).depth).toBe(30);
      let streamed = 0;
      for await (const _ of adapter.stream(dlt)) streamed++;
      expect(streamed).toBe(30);

      // Then half a second of nothing: timers armed meanwhile, by anyone in this process. kafkajs
      // 2.2.4 alone re-armed one per connection about every millisecond (hundreds here).
      const idle = new Promise((r) => setTimeout(r, 500));
      const timeouts = vi.spyOn(globalThis, "setTimeout");
      const intervals = vi.spyOn(globalThis, "setInterval");
      await idle;
      const armed = timeouts.mock.calls.length + intervals.mock.calls.length;
      timeouts.mockRestore();
      intervals.mockRestore();
      expect(armed).toBeLessThan(20);
    } finally {
      await adapter.close();
    }
  });
});
