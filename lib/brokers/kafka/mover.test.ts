import { randomUUID } from "node:crypto";
import type { Message } from "kafkajs";
import { describe, expect, it } from "vitest";
import { isManagedHeader } from "@/lib/connections/managed-headers";
import { BrokerError } from "@/lib/brokers/contract/errors";
import { REDRIVE_HEADERS, REPAIR_HEADER } from "@/lib/brokers/contract/markers";
import type { MoveRequest, MoveResult } from "@/lib/brokers/contract/move";
import type { InternalRecord } from "@/lib/brokers/kafka/client";
import type { HandledMark, HandledStore } from "@/lib/brokers/kafka/handled-store";
import { sha256Of } from "@/lib/brokers/kafka/letter";
import { expectMissingReason } from "@/lib/brokers/contract-suite/redrive";
import { moveWords } from "@/lib/brokers/move-rules";
import { moveKafkaLetters, removeKafkaLetters, type MoverDeps } from "@/lib/brokers/kafka/mover";
import { redriveHeaders } from "@/lib/brokers/kafka/record-copy";
import { laneOf, planRuns } from "@/lib/brokers/kafka/walk";

const DLT = "orders.DLT";
const b = (s: string) => Buffer.from(s);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function record(
  offset: number,
  key: string | null,
  value: string,
  headers: Record<string, unknown> = { "kafka_dlt-original-topic": b("orders") },
): InternalRecord {
  return {
    offset: String(offset),
    timestamp: "1700000000000",
    key: key === null ? null : b(key),
    value: b(value),
    headers,
  };
}

interface Fake {
  deps: MoverDeps;
  produced: Array<{ topic: string; message: Message; at: number }>;
  marked: string[];
  maxConcurrent: number;
  events: string[];
}

function fake(
  records: InternalRecord[],
  over: Partial<MoverDeps> & {
    handled?: Map<string, HandledMark>;
    produceDelay?: (m: Message) => number;
    produceError?: (m: Message) => unknown;
    markError?: () => unknown;
  } = {},
): Fake {
  const f: Fake = { deps: null as unknown as MoverDeps, produced: [], marked: [], maxConcurrent: 0, events: [] };
  let concurrent = 0;
  const handled = over.handled ?? new Map<string, HandledMark>();
  const store: HandledStore = {
    async markHandled(_c, _t, refs) {
      const e = over.markError?.();
      if (e) throw e;
      for (const r of refs) {
        f.marked.push(`${r.partition}-${r.offset}`);
        f.events.push(`mark ${r.partition}-${r.offset}`);
      }
      return refs.length;
    },
    async handledAmong() {
      return handled;
    },
    async handledBetween() {
      return handled;
    },
    async handledCounts() {
      return new Map();
    },
    async firstUnhandled() {
      return new Map();
    },
  };
  f.deps = {
    connectionId: "c",
    endpoint: "127.0.0.1:9092",
    store,
    assertDlq: async (d) => {
      if (d !== DLT) throw new BrokerError("not_found", { userMessage: `Topic "${d}" was not found.` });
    },
    partitions: async () => [{ partition: 0, start: 0n, end: BigInt(records.length) }],
    readRecords: async function* (_d, _p, from, to) {
      for (const r of records) if (BigInt(r.offset) >= from && BigInt(r.offset) < to) yield r;
    },
    topicExists: async (t) => t === "orders" || t === "other",
    produce: async (topic, message) => {
      concurrent++;
      f.maxConcurrent = Math.max(f.maxConcurrent, concurrent);
      f.events.push(`start ${message.value}`);
      try {
        await sleep(over.produceDelay?.(message) ?? 1);
        const e = over.produceError?.(message);
        if (e) throw e;
        f.produced.push({ topic, message, at: Date.now() });
        f.events.push(`ack ${message.value}`);
        return { partition: 0, offset: String(f.produced.length - 1) };
      } finally {
        concurrent--;
      }
    },
    configOrigin: () => null,
    isManagedHeader,
    mapError: (e) =>
      e instanceof BrokerError
        ? e
        : new BrokerError(/ECONNREFUSED/.test(String((e as Error).message)) ? "unreachable" : "protocol", {
            message: String(e),
            userMessage: "Kafka did not answer.",
          }),
    ...over,
  };
  return f;
}

const job = randomUUID();
const reqOf = (r: InternalRecord, over: Partial<MoveRequest> = {}): MoveRequest => ({
  letterId: `0-${r.offset}`,
  sha256: sha256Of(r.value!),
  target: { kind: "origin" },
  markers: { redriveId: job, replayId: randomUUID(), redriveCount: 1, originalMessageId: null },
  ...over,
});
async function all<T = MoveResult>(it: AsyncIterable<T>) {
  const out: T[] = [];
  for await (const r of it) out.push(r);
  return out;
}

describe("redriveHeaders", () => {
  const markers = { redriveId: "job", replayId: "replay", redriveCount: 1, originalMessageId: "msg-1" };
  const self = { topic: DLT, partition: 2, offset: "7" };

  it("keeps every header (repeats and binary values) and sets the four markers once each, at the end", () => {
    const part = Buffer.from([0, 0, 0, 3]);
    const h = redriveHeaders(
      {
        a: b("1"),
        "kafka_dlt-original-partition": part,
        "kafka_dlt-exception-fqcn": [b("E1"), b("E2")],
        [REDRIVE_HEADERS.replayId]: b("old-replay"),
      },
      markers,
      self,
    );
    expect(Object.keys(h)).toEqual([
      "a",
      "kafka_dlt-original-partition",
      "kafka_dlt-exception-fqcn",
      ...Object.values(REDRIVE_HEADERS),
    ]);
    expect(h["kafka_dlt-original-partition"]).toBe(part);
    expect(h["kafka_dlt-exception-fqcn"]).toEqual([b("E1"), b("E2")]);
    expect(h[REDRIVE_HEADERS.replayId]).toBe("replay");
    expect(h[REDRIVE_HEADERS.redriveCount]).toBe("1");
    expect(h[REDRIVE_HEADERS.originalMessageId]).toBe("msg-1");
  });

  it("count: the record's own count + 1 or the caller's, whichever is larger; replaced, not appended", () => {
    expect(
      redriveHeaders({ [REDRIVE_HEADERS.redriveCount]: b("2") }, markers, self)[REDRIVE_HEADERS.redriveCount],
    ).toBe("3");
    expect(
      redriveHeaders({ [REDRIVE_HEADERS.redriveCount]: [b("1"), b("4")] }, markers, self)[REDRIVE_HEADERS.redriveCount],
    ).toBe("5");
    expect(
      redriveHeaders({ [REDRIVE_HEADERS.redriveCount]: b("x") }, { ...markers, redriveCount: 3 }, self)[
        REDRIVE_HEADERS.redriveCount
      ],
    ).toBe("3");
  });

  it("original message id: the record's earlier marker, else the caller's, else the DLT record's coordinates", () => {
    expect(
      redriveHeaders({ [REDRIVE_HEADERS.originalMessageId]: b("first") }, markers, self)[
        REDRIVE_HEADERS.originalMessageId
      ],
    ).toBe("first");
    expect(redriveHeaders({}, markers, self)[REDRIVE_HEADERS.originalMessageId]).toBe("msg-1");
    expect(
      redriveHeaders(undefined, { ...markers, originalMessageId: null }, self)[REDRIVE_HEADERS.originalMessageId],
    ).toBe(`${DLT}-2-7`);
  });

  it("refuses a header without value (kafkajs cannot write one)", () => {
    expect(() => redriveHeaders({ "__streams.errors.message": null }, markers, self)).toThrow(
      /__streams.errors.message/,
    );
  });
});

describe("planRuns and lanes", () => {
  it("groups near offsets of one partition, splits on gaps, partitions and length", () => {
    const p = (partition: number, offset: number) => ({ req: {} as MoveRequest, partition, offset: BigInt(offset) });
    const runs = planRuns([p(0, 0), p(0, 1), p(0, 5), p(0, 40), p(1, 41), p(1, 42), p(1, 43)], 8, 3);
    expect(runs.map((r) => r.map((x) => `${x.partition}-${x.offset}`))).toEqual([
      ["0-0", "0-1"],
      ["0-5"],
      ["0-40"],
      ["1-41", "1-42", "1-43"],
    ]);
  });
  it("keys by exact bytes; keyless records by DLT partition", () => {
    expect(laneOf(0, b("k"))).toBe(laneOf(3, b("k")));
    expect(laneOf(0, null)).not.toBe(laneOf(1, null));
    expect(laneOf(0, Buffer.from([0xff]))).not.toBe(laneOf(0, Buffer.from([0xfe])));
  });
});

describe("moveKafkaLetters (fake broker)", () => {
  it("same key one at a time in offset order, different keys in parallel; marks only after the ack", async () => {
    const records = Array.from({ length: 30 }, (_, i) => record(i, ["a", "b", "c"][i % 3], `v${i}`));
    const f = fake(records, { produceDelay: () => 2 + Math.floor(Math.random() * 8) });
    const results = await all(
      moveKafkaLetters(
        f.deps,
        DLT,
        [...records].reverse().map((r) => reqOf(r)),
      ),
    );
    expect(results.every((r) => r.outcome === "moved" && r.destination === "topic orders")).toBe(true);
    expect(f.maxConcurrent).toBeGreaterThan(1);
    for (const k of ["a", "b", "c"]) {
      const mine = f.produced
        .filter((p) => String(p.message.key) === k)
        .map((p) => Number(String(p.message.value).slice(1)));
      expect(mine).toEqual(records.filter((_, i) => ["a", "b", "c"][i % 3] === k).map((r) => Number(r.offset)));
      // Never two of one key in flight: each start follows the previous one's ack.
      const seq = f.events.filter((e) => /^(start|ack) /.test(e) && mine.map((n) => `v${n}`).includes(e.split(" ")[1]));
      for (let i = 0; i < seq.length; i += 2)
        expect([seq[i].split(" ")[0], seq[i + 1].split(" ")[0]]).toEqual(["start", "ack"]);
    }
    for (const r of records)
      expect(f.events.indexOf(`mark 0-${r.offset}`)).toBeGreaterThan(f.events.indexOf(`ack v${r.offset}`));
  });

  it("bounds the letters in flight", async () => {
    const records = Array.from({ length: 40 }, (_, i) => record(i, `k${i}`, `v${i}`));
    const f = fake(records, { concurrency: 4, produceDelay: () => 5 });
    await all(
      moveKafkaLetters(
        f.deps,
        DLT,
        records.map((r) => reqOf(r)),
      ),
    );
    expect(f.maxConcurrent).toBeLessThanOrEqual(4);
    expect(f.produced).toHaveLength(40);
  });

  it("MoveOptions.maxInFlight overrides the adapter's window for one call", async () => {
    const records = Array.from({ length: 40 }, (_, i) => record(i, `k${i}`, `v${i}`));
    const f = fake(records, { concurrency: 16, produceDelay: () => 5 });
    await all(
      moveKafkaLetters(
        f.deps,
        DLT,
        records.map((r) => reqOf(r)),
        { maxInFlight: 2 },
      ),
    );
    expect(f.maxConcurrent).toBeLessThanOrEqual(2);
    expect(f.maxConcurrent).toBe(2);
    expect(f.produced).toHaveLength(40);
  });

  it("already handled → missing with its own reason, not produced; bad and out-of-range ids → missing in the shared words", async () => {
    const records = [record(0, "k", "v0"), record(1, "k", "v1")];
    const f = fake(records, {
      handled: new Map([
        ["0-0", { at: new Date("2026-01-02T03:04:05Z"), outcome: "redriven" as const, operationId: "op" }],
      ]),
    });
    const results = await all(
      moveKafkaLetters(f.deps, DLT, [
        reqOf(records[0]),
        reqOf(records[1]),
        { ...reqOf(records[1]), letterId: "nope" },
        { ...reqOf(records[1]), letterId: "0-01" },
        { ...reqOf(records[1]), letterId: "0-9" },
        { ...reqOf(records[1]), letterId: "3-0" },
      ]),
    );
    const by = new Map(results.map((r) => [r.letterId, r]));
    expect(results.map((r) => [r.letterId, r.outcome]).sort()).toEqual([
      ["0-0", "missing"],
      ["0-01", "missing"],
      ["0-1", "moved"],
      ["0-9", "missing"],
      ["3-0", "missing"],
      ["nope", "missing"],
    ]);
    expect(by.get("0-0")!.reason).toMatch(/^Already handled at 2026-01-02T03:04:05.000Z \(redriven, operation op\)/);
    for (const [id, fact] of [
      ["nope", /nope is not a Kafka letter id/],
      ["0-01", /0-01 is not a Kafka letter id/],
      ["0-9", /partition 0: it has no offset 9 \(its next offset is 2\)/],
      ["3-0", /the topic has no partition 3/],
    ] as const) {
      const reason = by.get(id)!.reason!;
      expectMissingReason(reason, "move", DLT);
      expect(reason).toMatch(fact);
      expect(by.get(id)).toMatchObject({ destination: null, target: null });
    }
    expect(f.produced.map((p) => String(p.message.value))).toEqual(["v1"]);
    expect(f.marked).toEqual(["0-1"]);
  });

  it("a letter id requested twice is one request: one result, produced once, whatever the repeat carries", async () => {
    const records = [record(0, "k", "v0"), record(1, "j", "v1")];
    const f = fake(records);
    const first = reqOf(records[0]);
    const results = await all(
      moveKafkaLetters(f.deps, DLT, [
        first,
        { ...reqOf(records[0]), sha256: "f".repeat(64) },
        reqOf(records[1]),
        reqOf(records[0]),
      ]),
    );
    expect(results.map((r) => [r.letterId, r.outcome]).sort()).toEqual([
      ["0-0", "moved"],
      ["0-1", "moved"],
    ]);
    expect(f.produced.map((p) => String(p.message.value)).sort()).toEqual(["v0", "v1"]);
    const copy = f.produced.find((p) => String(p.message.value) === "v0")!;
    expect(String(copy.message.headers![REDRIVE_HEADERS.replayId])).toBe(first.markers.replayId);
    // The same on a discard.
    const g = fake(records);
    const removed = await all(
      removeKafkaLetters(
        g.deps,
        DLT,
        [reqOf(records[1]), reqOf(records[1])].map((r) => ({ letterId: r.letterId, sha256: r.sha256 })),
        { operationId: randomUUID(), beforeRemove: async () => undefined },
      ),
    );
    expect(removed.map((r) => [r.letterId, r.outcome])).toEqual([["0-1", "removed"]]);
    expect(g.marked).toEqual(["0-1"]);
  });

  it("a checksum recorded in upper case (or with spaces around it) matches: the letter moves", async () => {
    const records = [record(0, "k", "v0"), record(1, "j", "v1")];
    const f = fake(records);
    const results = await all(
      moveKafkaLetters(f.deps, DLT, [
        { ...reqOf(records[0]), sha256: sha256Of(records[0].value!).toUpperCase() },
        { ...reqOf(records[1]), sha256: ` ${sha256Of(records[1].value!)}\n` },
      ]),
    );
    expect(results.map((r) => [r.letterId, r.outcome, r.reason])).toEqual([
      ["0-0", "moved", null],
      ["0-1", "moved", null],
    ]);
    expect(f.marked).toEqual(["0-0", "0-1"]);
  });

  it("target: the topic the copy was produced to; null when nothing was produced", async () => {
    const records = [record(0, "a", "v0"), record(1, "b", "v1", {}), record(2, "c", "v2")];
    const f = fake(records, {
      produceError: (m) =>
        String(m.value) === "v2" ? Object.assign(new Error("no"), { type: "INVALID_RECORD" }) : null,
    });
    const results = await all(
      moveKafkaLetters(f.deps, DLT, [
        reqOf(records[0], { target: { kind: "queue", name: "other" } }),
        reqOf(records[1]),
        reqOf(records[2]),
        { ...reqOf(records[2]), letterId: "0-7" },
      ]),
    );
    expect(results.map((r) => [r.letterId, r.outcome, r.target]).sort()).toEqual([
      ["0-0", "moved", "other"],
      ["0-1", "failed", null],
      ["0-2", "failed", null],
      ["0-7", "missing", null],
    ]);
  });

  describe("missing only after a look at the offset", () => {
    const expectMissing = (r: MoveResult | undefined, fact: RegExp) => {
      expect(r).toMatchObject({ outcome: "missing", destination: null, target: null });
      expectMissingReason(r!.reason, "move", DLT);
      expect(r!.reason).toMatch(fact);
    };
    const outOfRange = () =>
      Object.assign(new Error("The requested offset is not within the range of offsets maintained by the server"), {
        name: "KafkaJSOffsetOutOfRange",
        type: "OFFSET_OUT_OF_RANGE",
      });

    it("below the log start when the call began (retention, deleteRecords): missing, saying so; nothing read for it", async () => {
      const records = [0, 1, 2].map((i) => record(i, `k${i}`, `v${i}`));
      const reads: bigint[] = [];
      const f = fake(records, {
        partitions: async () => [{ partition: 0, start: 2n, end: 3n }],
        readRecords: async function* (_d, _p, from, to) {
          reads.push(from);
          for (const r of records) if (BigInt(r.offset) >= from && BigInt(r.offset) < to) yield r;
        },
      });
      const results = await all(
        moveKafkaLetters(
          f.deps,
          DLT,
          records.map((r) => reqOf(r)),
        ),
      );
      const by = new Map(results.map((r) => [r.letterId, r]));
      for (const id of ["0-0", "0-1"])
        expectMissing(
          by.get(id),
          /partition 0: offset \d is below the partition's log start \(now 2\), deleted by retention or by deleteRecords/,
        );
      expect(by.get("0-2")!.outcome).toBe("moved");
      expect(reads).toEqual([2n]);
      expect(f.marked).toEqual(["0-2"]);
    });

    it("records deleted under the read (OFFSET_OUT_OF_RANGE): a fresh look says which are gone; the rest is read on and moves", async () => {
      const records = [0, 1, 2, 3].map((i) => record(i, `k${i}`, `v${i}`));
      let start = 0n;
      let looks = 0;
      const f = fake(records, {
        partitions: async () => {
          // Someone deletes records up to offset 2 right after the walk's first look.
          if (looks++ === 1) start = 2n;
          return [{ partition: 0, start, end: 4n }];
        },
        readRecords: async function* (_d, _p, from, to) {
          if (looks === 1) start = 2n;
          if (from < start) throw outOfRange();
          for (const r of records) if (BigInt(r.offset) >= from && BigInt(r.offset) < to) yield r;
        },
      });
      const results = await all(
        moveKafkaLetters(
          f.deps,
          DLT,
          records.map((r) => reqOf(r)),
        ),
      );
      const by = new Map(results.map((r) => [r.letterId, r]));
      expectMissing(by.get("0-0"), /offset 0 is below the partition's log start \(now 2\)/);
      expectMissing(by.get("0-1"), /offset 1 is below the partition's log start \(now 2\)/);
      expect([by.get("0-2")!.outcome, by.get("0-3")!.outcome]).toEqual(["moved", "moved"]);
      expect(f.produced.map((p) => String(p.message.value))).toEqual(["v2", "v3"]);
      expect(results).toHaveLength(4);
    });

    it("the topic deleted during the move: its letters not yet read are missing, saying the topic is gone", async () => {
      const records = [record(0, "a", "v0"), record(20, "b", "v20")];
      let deleted = false;
      const gone = () => new BrokerError("not_found", { userMessage: `Topic "${DLT}" does not exist.` });
      const f = fake(records, {
        maxGap: 2,
        partitions: async () => {
          if (deleted) throw gone();
          return [{ partition: 0, start: 0n, end: 21n }];
        },
        readRecords: async function* (_d, _p, from, to) {
          if (deleted) throw gone();
          for (const r of records) if (BigInt(r.offset) >= from && BigInt(r.offset) < to) yield r;
          deleted = true;
        },
      });
      const results = await all(
        moveKafkaLetters(
          f.deps,
          DLT,
          records.map((r) => reqOf(r)),
        ),
      );
      const by = new Map(results.map((r) => [r.letterId, r]));
      expect(by.get("0-0")!.outcome).toBe("moved");
      expectMissing(by.get("0-20"), /: the topic no longer exists on 127.0.0.1:9092/);
    });

    it("an offset inside the log the read went past (compacted away): missing only after reading from it found a later record", async () => {
      const records = [record(0, "a", "v0"), record(3, "b", "v3"), record(4, "c", "v4")];
      const reads: Array<[bigint, bigint]> = [];
      const f = fake(records, {
        partitions: async () => [{ partition: 0, start: 0n, end: 5n }],
        readRecords: async function* (_d, _p, from, to) {
          reads.push([from, to]);
          for (const r of records) if (BigInt(r.offset) >= from && BigInt(r.offset) < to) yield r;
        },
      });
      const reqs = [records[0], { ...records[0], offset: "1" }, { ...records[0], offset: "2" }, records[2]].map((r) =>
        reqOf(r),
      );
      const results = await all(moveKafkaLetters(f.deps, DLT, reqs));
      const by = new Map(results.map((r) => [r.letterId, r]));
      for (const id of ["0-1", "0-2"])
        expectMissing(by.get(id), /partition 0: read at offset \d, and no record is there \(compacted away/);
      expect([by.get("0-0")!.outcome, by.get("0-4")!.outcome]).toEqual(["moved", "moved"]);
      // The run, then one read from offset 1 on: it found offset 3, so offset 2 needs no read of its own.
      expect(reads).toEqual([
        [0n, 5n],
        [1n, 5n],
      ]);
    });

    it("offsets inside the log that nothing could be read from (an open transaction): failed, still in the DLT, never missing", async () => {
      const records = [record(0, "a", "v0"), record(1, "b", "v1"), record(2, "c", "v2")];
      const reads: bigint[] = [];
      const f = fake(records, {
        partitions: async () => [{ partition: 0, start: 0n, end: 3n }],
        // Offset 1 and after are not readable yet.
        readRecords: async function* (_d, _p, from, to) {
          reads.push(from);
          for (const r of records) if (BigInt(r.offset) >= from && BigInt(r.offset) < to && r.offset === "0") yield r;
        },
      });
      const results = await all(
        moveKafkaLetters(
          f.deps,
          DLT,
          records.map((r) => reqOf(r)),
        ),
      );
      const by = new Map(results.map((r) => [r.letterId, r]));
      expect(by.get("0-0")!.outcome).toBe("moved");
      for (const id of ["0-1", "0-2"]) {
        expect(by.get(id)).toMatchObject({ outcome: "failed", target: null });
        expect(by.get(id)!.reason).toMatch(/could not be read in this call.*It was not moved and stays in the DLT/);
      }
      // The run, then one read from offset 1: offset 2 lies behind it and is not read again.
      expect(reads).toEqual([0n, 1n]);
      expect(f.marked).toEqual(["0-0"]);
    });

    it("a record the run's read did not return but the last look finds is moved", async () => {
      const records = [record(0, "a", "v0"), record(1, "b", "v1")];
      let reads = 0;
      const f = fake(records, {
        readRecords: async function* (_d, _p, from, to) {
          const first = reads++ === 0;
          for (const r of records)
            if (BigInt(r.offset) >= from && BigInt(r.offset) < to && !(first && r.offset === "1")) yield r;
        },
      });
      const results = await all(
        moveKafkaLetters(
          f.deps,
          DLT,
          records.map((r) => reqOf(r)),
        ),
      );
      expect(results.map((r) => [r.letterId, r.outcome])).toEqual([
        ["0-0", "moved"],
        ["0-1", "moved"],
      ]);
      expect(f.marked).toEqual(["0-0", "0-1"]);
    });
  });

  it("a plain move with an archive hook: each original archived one at a time after its produce and before its mark; a throw leaves it, its copy a duplicate", async () => {
    const records = Array.from({ length: 6 }, (_, i) => record(i, `key-${i}`, `v${i}`));
    const f = fake(records, { produceDelay: () => 5 });
    let archiving = 0;
    let most = 0;
    const results = await all(
      moveKafkaLetters(
        f.deps,
        DLT,
        records.map((r) => reqOf(r)),
        {
          beforeRemove: async (copy) => {
            archiving++;
            most = Math.max(most, archiving);
            f.events.push(`archive ${copy.letterId}`);
            await sleep(3);
            archiving--;
            if (copy.letterId === "0-2") throw new Error("disk full at /secret");
          },
        },
      ),
    );
    expect(most).toBe(1);
    expect(f.maxConcurrent).toBeGreaterThan(1);
    const by = new Map(results.map((r) => [r.letterId, r]));
    expect(by.get("0-2")).toMatchObject({ outcome: "failed", target: "orders", destination: "topic orders" });
    expect(by.get("0-2")!.reason).toMatch(
      /^The copy was published to topic "orders" and confirmed, but the original was not removed/,
    );
    expect(by.get("0-2")!.reason).not.toContain("secret");
    expect(by.get("0-2")).not.toHaveProperty("copyId");
    for (const id of ["0-0", "0-1", "0-3", "0-4", "0-5"])
      expect(by.get(id)).toMatchObject({ outcome: "moved", target: "orders" });
    expect(f.marked.sort()).toEqual(["0-0", "0-1", "0-3", "0-4", "0-5"]);
    for (const id of f.marked)
      expect(f.events.indexOf(`mark ${id}`)).toBeGreaterThan(f.events.indexOf(`archive ${id}`));
  });

  it("checksum mismatch and a failed produce: not marked, and later letters of the same key are held back", async () => {
    const records = [
      record(0, "k", "v0"),
      record(1, "k", "v1"),
      record(2, "other", "v2"),
      record(3, "big", "v3"),
      record(4, "big", "v4"),
    ];
    const tooLarge = Object.assign(
      new Error("The request included a message larger than the max message size the server will accept"),
      { type: "MESSAGE_TOO_LARGE" },
    );
    const f = fake(records, { produceError: (m) => (String(m.value) === "v3" ? tooLarge : null) });
    const results = await all(
      moveKafkaLetters(f.deps, DLT, [
        { ...reqOf(records[0]), sha256: "0".repeat(64) },
        ...records.slice(1).map((r) => reqOf(r)),
      ]),
    );
    const by = new Map(results.map((r) => [r.letterId, r]));
    expect(by.get("0-0")).toMatchObject({ outcome: "checksum_mismatch", orderingKey: "k", target: null });
    expect(by.get("0-0")!.reason).toBe(moveWords("move", "DLT").mismatch);
    expect(by.get("0-1")!.outcome).toBe("failed");
    expect(by.get("0-1")!.reason).toBe(moveWords("move", "DLT").laneBlocked("0-0"));
    expect(by.get("0-2")!.outcome).toBe("moved");
    expect(by.get("0-3")!.outcome).toBe("failed");
    expect(by.get("0-3")!.reason).toMatch(/too large/);
    expect(by.get("0-4")!.reason).toMatch(/Held back.*0-3/);
    expect(f.marked).toEqual(["0-2"]);
  });

  it("a letter without a key is never held back by an earlier failure in its partition, as on every broker", async () => {
    const records = [record(0, null, "v0"), record(1, null, "v1")];
    const f = fake(records);
    const results = await all(
      moveKafkaLetters(f.deps, DLT, [{ ...reqOf(records[0]), sha256: "0".repeat(64) }, reqOf(records[1])]),
    );
    const by = new Map(results.map((r) => [r.letterId, r]));
    expect(by.get("0-0")).toMatchObject({ outcome: "checksum_mismatch", orderingKey: null });
    expect(by.get("0-1")).toMatchObject({ outcome: "moved", orderingKey: null });
    expect(f.marked).toEqual(["0-1"]);
  });

  it("heldKeys (an earlier call's failure): letters of those keys are held back, not produced or marked; other and keyless letters move", async () => {
    const records = [record(0, "k", "v0"), record(1, "other", "v1"), record(2, "k", "v2"), record(3, null, "v3")];
    const f = fake(records);
    const results = await all(
      moveKafkaLetters(
        f.deps,
        DLT,
        records.map((r) => reqOf(r)),
        { heldKeys: ["k"] },
      ),
    );
    const by = new Map(results.map((r) => [r.letterId, r]));
    for (const id of ["0-0", "0-2"]) {
      expect(by.get(id)).toMatchObject({ outcome: "failed", orderingKey: "k" });
      expect(by.get(id)!.reason).toBe(moveWords("move", "DLT").heldBack("k"));
    }
    expect(by.get("0-1")!.outcome).toBe("moved");
    expect(by.get("0-3")!.outcome).toBe("moved");
    expect(f.produced.map((p) => String(p.message.value))).toEqual(expect.arrayContaining(["v1", "v3"]));
    expect(f.produced).toHaveLength(2);
    expect(f.marked.sort()).toEqual(["0-1", "0-3"]);
  });

  it("targets: no origin → failed; a missing explicit target or the DLT itself → typed error before anything moves", async () => {
    const records = [
      record(0, "k", "v0", {}),
      record(1, "j", "v1", { "__connect.errors.topic": b("gone") }),
      record(2, "i", "v2", { "__connect.errors.topic": b("other") }),
    ];
    const f = fake(records);
    const results = await all(
      moveKafkaLetters(
        f.deps,
        DLT,
        records.map((r) => reqOf(r)),
      ),
    );
    expect(results.map((r) => [r.letterId, r.outcome, r.destination])).toEqual(
      expect.arrayContaining([
        ["0-0", "failed", null],
        ["0-1", "failed", null],
        ["0-2", "moved", "topic other"],
      ]),
    );
    expect(results.find((r) => r.letterId === "0-0")!.reason).toMatch(/no original topic/);
    expect(results.find((r) => r.letterId === "0-1")!.reason).toMatch(/"gone" does not exist/);

    const g = fake(records, { configOrigin: () => "orders" });
    expect((await all(moveKafkaLetters(g.deps, DLT, [reqOf(records[0])])))[0]).toMatchObject({
      outcome: "moved",
      destination: "topic orders",
    });

    const h = fake(records);
    await expect(
      all(
        moveKafkaLetters(h.deps, DLT, [
          reqOf(records[2]),
          reqOf(records[0], { target: { kind: "queue", name: "missing" } }),
        ]),
      ),
    ).rejects.toMatchObject({ kind: "not_found" });
    await expect(
      all(moveKafkaLetters(h.deps, DLT, [reqOf(records[0], { target: { kind: "queue", name: DLT } })])),
    ).rejects.toMatchObject({ kind: "bad_request" });
    await expect(all(moveKafkaLetters(h.deps, "nope.DLT", []))).rejects.toMatchObject({ kind: "not_found" });
    expect(h.produced).toHaveLength(0);
  });

  it("refuses without a handled store or with a redrive id that is not a UUID", async () => {
    const records = [record(0, "k", "v0")];
    await expect(
      all(moveKafkaLetters({ ...fake(records).deps, store: null }, DLT, [reqOf(records[0])])),
    ).rejects.toMatchObject({ kind: "bad_request" });
    const bad = reqOf(records[0]);
    bad.markers.redriveId = "job-1";
    await expect(all(moveKafkaLetters(fake(records).deps, DLT, [bad]))).rejects.toMatchObject({ kind: "bad_request" });
  });

  it("a header without value → failed, nothing produced", async () => {
    const records = [record(0, "k", "v0", { "__streams.errors.topic": b("orders"), "__streams.errors.message": null })];
    const f = fake(records);
    const [r] = await all(moveKafkaLetters(f.deps, DLT, [reqOf(records[0])]));
    expect(r.outcome).toBe("failed");
    expect(r.reason).toMatch(/has no value/);
    expect(f.produced).toHaveLength(0);
  });

  it("produce acked but the mark fails → failed with a reason that says it was published", async () => {
    const records = [record(0, "k", "v0")];
    const f = fake(records, { markError: () => new Error("database down") });
    const [r] = await all(moveKafkaLetters(f.deps, DLT, [reqOf(records[0])]));
    expect(r.outcome).toBe("failed");
    expect(r.reason).toMatch(/Published to topic "orders".*recording it as handled failed/);
    expect(f.produced).toHaveLength(1);
  }, 10_000);

  it("an unreachable broker stops the move after the letters in flight settle", async () => {
    const records = Array.from({ length: 10 }, (_, i) => record(i, "k", `v${i}`));
    const f = fake(records, {
      produceError: (m) => (String(m.value) === "v2" ? new Error("connect ECONNREFUSED 127.0.0.1:9092") : null),
    });
    const got: MoveResult[] = [];
    await expect(
      (async () => {
        for await (const r of moveKafkaLetters(
          f.deps,
          DLT,
          records.map((r) => reqOf(r)),
        ))
          got.push(r);
      })(),
    ).rejects.toMatchObject({ kind: "unreachable" });
    expect(got.map((r) => r.outcome)).toEqual(["moved", "moved", "failed"]);
    expect(f.marked).toEqual(["0-0", "0-1"]);
  });

  it("stops between letters on abort: letters not started get no result and stay unhandled", async () => {
    const records = Array.from({ length: 10 }, (_, i) => record(i, "k", `v${i}`));
    const f = fake(records, { produceDelay: () => 3 });
    const ac = new AbortController();
    const got: MoveResult[] = [];
    for await (const r of moveKafkaLetters(
      f.deps,
      DLT,
      records.map((r) => reqOf(r)),
      { signal: ac.signal },
    )) {
      got.push(r);
      if (got.length === 2) ac.abort();
    }
    expect(got.map((r) => r.letterId)).toEqual(["0-0", "0-1"]);
    expect(f.marked).toEqual(["0-0", "0-1"]);
  });

  it("breaking off the iteration lets the letter in flight settle and starts no other", async () => {
    const records = Array.from({ length: 5 }, (_, i) => record(i, `k${i}`, `v${i}`));
    const f = fake(records, { concurrency: 1, produceDelay: () => 3 });
    for await (const r of moveKafkaLetters(
      f.deps,
      DLT,
      records.map((r) => reqOf(r)),
    )) {
      expect(r.letterId).toBe("0-0");
      break;
    }
    expect(f.produced.length).toBeLessThanOrEqual(2);
    expect(f.marked.length).toBe(f.produced.length);
  });
});

describe("moveKafkaLetters with a repair", () => {
  const op = randomUUID();
  const repairReq = (r: InternalRecord, repair: Partial<NonNullable<MoveRequest["repair"]>> = {}) =>
    reqOf(r, { repair: { operationId: op, ...repair } });

  it("produces the repaired copy, then archives the original, then marks it handled; the result links to the copy", async () => {
    const recs = [
      record(0, "k", "old", { "kafka_dlt-original-topic": b("orders"), "x-tenant": b("acme"), "message-id": b("m-0") }),
    ];
    const f = fake(recs);
    const archived: string[] = [];
    const req = repairReq(recs[0], { body: b("new"), setHeaders: { "x-tenant": "acme-eu" }, correlationId: "c-9" });
    const results = await all(
      moveKafkaLetters(f.deps, DLT, [req], {
        beforeRemove: async (copy) => {
          f.events.push(`archive ${copy.letterId}`);
          archived.push(Buffer.from(copy.letter.body).toString());
        },
      }),
    );
    expect(results).toEqual([
      {
        letterId: "0-0",
        outcome: "moved",
        destination: "topic orders",
        target: "orders",
        reason: null,
        orderingKey: "k",
        copyId: "orders/0/0",
      },
    ]);
    expect(f.events).toEqual(["start new", "ack new", "archive 0-0", "mark 0-0"]);
    // The archive gets the original, not the copy.
    expect(archived).toEqual(["old"]);
    const { message } = f.produced[0];
    expect(String(message.key)).toBe("k");
    const h = message.headers!;
    expect(String(h["x-tenant"])).toBe("acme-eu");
    expect(String(h["message-id"])).toBe(req.markers.replayId);
    expect(String(h["correlation-id"])).toBe("c-9");
    expect(h[REPAIR_HEADER]).toBe(op);
    expect(Object.keys(h).at(-1)).toBe(REPAIR_HEADER);
    expect(h[REDRIVE_HEADERS.originalMessageId]).toBe(`${DLT}-0-0`);
  });

  it("keeps the value byte for byte without a new body, and replaces an earlier repair's marker", async () => {
    const bytes = Buffer.from([0x00, 0xff, 0xc3, 0x28]);
    const rec: InternalRecord = {
      offset: "0",
      timestamp: "1",
      key: null,
      value: bytes,
      headers: { "kafka_dlt-original-topic": b("orders"), [REPAIR_HEADER]: b("earlier-op") },
    };
    const f = fake([rec]);
    await all(
      moveKafkaLetters(f.deps, DLT, [repairReq(rec, { setHeaders: { "x-schema": "v2" } })], {
        beforeRemove: async () => undefined,
      }),
    );
    const { message } = f.produced[0];
    expect(Buffer.compare(message.value as Buffer, bytes)).toBe(0);
    expect(message.headers![REPAIR_HEADER]).toBe(op);
  });

  it("a failing archive: the copy is out, the original not marked; the reason says so without the error's text", async () => {
    const recs = [record(0, "k", "a"), record(1, "k", "b"), record(2, "other", "c")];
    const f = fake(recs);
    const results = await all(
      moveKafkaLetters(f.deps, DLT, [repairReq(recs[0]), repairReq(recs[1]), repairReq(recs[2])], {
        beforeRemove: async (copy) => {
          if (copy.letterId === "0-0") throw new Error("archive password=secret");
        },
      }),
    );
    const byId = new Map(results.map((r) => [r.letterId, r]));
    expect(byId.get("0-0")).toMatchObject({ outcome: "failed", destination: "topic orders", target: "orders" });
    expect(byId.get("0-0")!.reason).toMatch(
      /^The repaired copy \(orders\/0\/\d\) was published to topic "orders" and confirmed/,
    );
    expect(byId.get("0-0")!.reason).not.toContain("secret");
    expect(byId.get("0-0")).not.toHaveProperty("copyId");
    // The same key's next letter is held back (it would overtake the one still waiting); another key goes.
    expect(byId.get("0-1")).toMatchObject({ outcome: "failed" });
    expect(byId.get("0-2")).toMatchObject({ outcome: "moved" });
    expect(f.marked).toEqual(["0-2"]);
  });

  it("an edit of a managed header fails that letter before anything is produced or archived", async () => {
    const recs = [record(0, "k1", "a"), record(1, "k2", "b")];
    const f = fake(recs);
    let archived = 0;
    const results = await all(
      moveKafkaLetters(
        f.deps,
        DLT,
        [
          repairReq(recs[0], { removeHeaders: ["kafka_dlt-original-topic"] }),
          repairReq(recs[1], { setHeaders: { "x-ok": "1" } }),
        ],
        {
          beforeRemove: async () => {
            archived++;
          },
        },
      ),
    );
    expect(results[0]).toMatchObject({ letterId: "0-0", outcome: "failed" });
    expect(results[0]).not.toHaveProperty("copyId");
    expect(results[0].reason).toMatch(/"kafka_dlt-original-topic" is kept by Kafka or the console.*cannot be changed/);
    expect(f.produced.map((p) => String(p.message.value))).toEqual(["b"]);
    expect(archived).toBe(1);
    expect(f.marked).toEqual(["0-1"]);
  });

  it("refuses a repair without an archive hook, or with an operation id that is not a UUID, before anything is read", async () => {
    const rec = record(0, "k", "a");
    let reads = 0;
    const f = fake([rec], {
      partitions: async () => {
        reads++;
        return [{ partition: 0, start: 0n, end: 1n }];
      },
    });
    await expect(all(moveKafkaLetters(f.deps, DLT, [reqOf(rec), repairReq(rec)]))).rejects.toMatchObject({
      kind: "bad_request",
      userMessage: expect.stringMatching(/archive/),
    });
    await expect(
      all(
        moveKafkaLetters(f.deps, DLT, [repairReq(rec, { operationId: "op-1" })], {
          beforeRemove: async () => undefined,
        }),
      ),
    ).rejects.toMatchObject({ kind: "bad_request" });
    expect(reads).toBe(0);
    expect(f.produced).toHaveLength(0);
  });

  it("archives one letter at a time while produces of different keys are pipelined", async () => {
    const recs = Array.from({ length: 6 }, (_, i) => record(i, `key-${i}`, `v${i}`));
    const f = fake(recs, { produceDelay: () => 5 });
    let archiving = 0;
    let most = 0;
    const results = await all(
      moveKafkaLetters(
        f.deps,
        DLT,
        recs.map((r) => repairReq(r)),
        {
          beforeRemove: async () => {
            archiving++;
            most = Math.max(most, archiving);
            await sleep(5);
            archiving--;
          },
        },
      ),
    );
    expect(results.every((r) => r.outcome === "moved")).toBe(true);
    expect(f.maxConcurrent).toBeGreaterThan(1);
    expect(most).toBe(1);
    expect(new Set(results.map((r) => r.copyId)).size).toBe(6);
  });

  it("a plain redrive in the same call carries no repair marker and no copyId", async () => {
    const recs = [
      record(0, "k1", "a", { "kafka_dlt-original-topic": b("orders"), "message-id": b("m") }),
      record(1, "k2", "b"),
    ];
    const f = fake(recs);
    const results = await all(
      moveKafkaLetters(f.deps, DLT, [reqOf(recs[0]), repairReq(recs[1])], { beforeRemove: async () => undefined }),
    );
    const plain = results.find((r) => r.letterId === "0-0")!;
    expect(plain).not.toHaveProperty("copyId");
    const produced = f.produced.find((p) => String(p.message.value) === "a")!;
    expect(produced.message.headers).not.toHaveProperty(REPAIR_HEADER);
    expect(String(produced.message.headers!["message-id"])).toBe("m");
  });
});
