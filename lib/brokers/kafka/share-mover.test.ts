import { randomUUID } from "node:crypto";
import type { Message } from "kafkajs";
import { describe, expect, it } from "vitest";
import { isManagedHeader } from "@/lib/connections/managed-headers";
import { BrokerError } from "@/lib/brokers/contract/errors";
import { REDRIVE_HEADERS } from "@/lib/brokers/contract/markers";
import type { MoveRequest, MoveResult } from "@/lib/brokers/contract/move";
import type { InternalRecord } from "@/lib/brokers/kafka/client";
import type { HandledStore } from "@/lib/brokers/kafka/handled-store";
import { sha256Of } from "@/lib/brokers/kafka/letter";
import { moveKafkaLetters, type MoverDeps } from "@/lib/brokers/kafka/mover";
import type { OriginalLookup } from "@/lib/brokers/kafka/share-dlq";

const DLQ = "dlq.orders";
const b = (s: string) => Buffer.from(s);
const shareHeaders = (offset: number) => ({
  "__dlq.errors.topic": b("orders"),
  "__dlq.errors.partition": b("0"),
  "__dlq.errors.offset": b(String(offset)),
  "__dlq.errors.group": b("billing"),
  "__dlq.errors.delivery.count": b("1"),
  "__dlq.errors.message": b("Offset rejected by client."),
});
// Metadata-only DLQ records (key and value null), as the broker writes them by default.
const dlqRecords: InternalRecord[] = [0, 1, 2].map((i) => ({
  offset: String(i),
  timestamp: "2000",
  key: null,
  value: null,
  headers: shareHeaders(10 + i),
}));
const original = (offset: number): InternalRecord => ({
  offset: String(offset),
  timestamp: "1000",
  key: b(`k${offset}`),
  value: b(`v${offset}`),
  headers: { trace: b(`t${offset}`) },
});

function fake(originalOf: (ref: { offset: bigint }) => Promise<OriginalLookup>) {
  const produced: Array<{ topic: string; message: Message }> = [];
  const marked: string[] = [];
  const store = {
    async markHandled(_c: string, _t: unknown, refs: Array<{ partition: number; offset: bigint }>) {
      for (const r of refs) marked.push(`${r.partition}-${r.offset}`);
      return refs.length;
    },
    handledAmong: async () => new Map(),
    handledBetween: async () => new Map(),
    handledCounts: async () => new Map(),
    firstUnhandled: async () => new Map(),
  } as unknown as HandledStore;
  const deps: MoverDeps = {
    connectionId: "c",
    endpoint: "127.0.0.1:9092",
    store,
    assertDlq: async () => undefined,
    partitions: async () => [{ partition: 0, start: 0n, end: 3n }],
    readRecords: async function* (_d, _p, from, to) {
      for (const r of dlqRecords) if (BigInt(r.offset) >= from && BigInt(r.offset) < to) yield r;
    },
    topicExists: async (t) => t === "orders",
    produce: async (topic, message) => {
      produced.push({ topic, message });
      return { partition: 0, offset: String(produced.length - 1) };
    },
    configOrigin: () => null,
    mapError: (e) =>
      e instanceof BrokerError
        ? e
        : new BrokerError("unreachable", { message: String(e), userMessage: "Kafka did not answer." }),
    originalOf: (ref) => originalOf(ref),
    isManagedHeader,
  };
  return { deps, produced, marked };
}

const job = randomUUID();
const req = (offset: number, sha256: string): MoveRequest => ({
  letterId: `0-${offset}`,
  sha256,
  target: { kind: "origin" },
  markers: { redriveId: job, replayId: randomUUID(), redriveCount: 1, originalMessageId: null },
});
async function all(it: AsyncIterable<MoveResult>) {
  const out: MoveResult[] = [];
  for await (const r of it) out.push(r);
  return out;
}
const EMPTY_SHA = sha256Of(new Uint8Array(0));

describe("redrive of share-group dead letters (mover)", () => {
  it("publishes the original's key, value and headers to its topic, with the DLQ record's or the original's checksum; another checksum is a mismatch", async () => {
    const f = fake(async (ref) => ({ kind: "found", record: original(Number(ref.offset)) }));
    const results = await all(
      moveKafkaLetters(f.deps, DLQ, [
        req(0, EMPTY_SHA),
        req(1, sha256Of(b("v11"))),
        req(2, sha256Of(b("something else"))),
      ]),
    );
    expect(results.map((r) => [r.letterId, r.outcome, r.destination])).toEqual([
      ["0-0", "moved", "topic orders"],
      ["0-1", "moved", "topic orders"],
      ["0-2", "checksum_mismatch", null],
    ]);
    expect(
      f.produced.map((p) => [p.topic, String(p.message.key), String(p.message.value), Object.keys(p.message.headers!)]),
    ).toEqual([
      ["orders", "k10", "v10", ["trace", ...Object.values(REDRIVE_HEADERS)]],
      ["orders", "k11", "v11", ["trace", ...Object.values(REDRIVE_HEADERS)]],
    ]);
    expect(f.marked).toEqual(["0-0", "0-1"]);
  });

  it("a metadata-only letter whose original is gone fails with that reason and stays, holding back no other; a failed look-up says so", async () => {
    const f = fake(async (ref) => {
      if (ref.offset === 10n)
        return { kind: "gone", why: "deleted from the topic: partition 0 now starts at offset 11" };
      if (ref.offset === 11n) return { kind: "found", record: { ...original(11), timestamp: "3000" } }; // younger than the dead letter: another record
      throw new Error("ECONNREFUSED");
    });
    const results = await all(
      moveKafkaLetters(
        f.deps,
        DLQ,
        [0, 1, 2].map((i) => req(i, EMPTY_SHA)),
      ),
    );
    expect(results.map((r) => [r.letterId, r.outcome])).toEqual([
      ["0-0", "failed"],
      ["0-1", "failed"],
      ["0-2", "failed"],
    ]);
    expect(results[0].reason).toMatch(
      /no longer retained \(deleted from the topic: partition 0 now starts at offset 11\).*still in the DLQ/,
    );
    expect(results[1].reason).toMatch(/no longer retained \(the record now at that offset is younger/);
    expect(results[2].reason).toMatch(/could not be read: Kafka did not answer/);
    expect(f.produced).toEqual([]);
    expect(f.marked).toEqual([]);
  });
});
