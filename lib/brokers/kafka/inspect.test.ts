import { describe, expect, it } from "vitest";
import type { InternalRecord } from "@/lib/brokers/kafka/client";
import {
  DAY_MS,
  durationWords,
  kafkaFindings,
  originsOf,
  timeRetentionMs,
  topicConfigOf,
  type DltFacts,
} from "@/lib/brokers/kafka/config-checks";
import type { TopicConfig } from "@/lib/brokers/kafka/retention";
import { dlqNamesOf, logStartOf, vitalsOf, type LogStart } from "@/lib/brokers/kafka/vitals";

/** A DescribeConfigs resource as kafkajs 2.2.4 decodes it from Kafka 4 (captured from the local broker). */
const described = (name: string, entries: Record<string, string>) => ({
  errorCode: 0,
  errorMessage: "",
  resourceType: 2,
  resourceName: name,
  configEntries: Object.entries(entries).map(([configName, configValue]) => ({
    configName,
    configValue,
    readOnly: false,
    isDefault: false,
    configSource: 1,
    isSensitive: false,
    configSynonyms: [],
  })),
});

const cfg = (over: Partial<TopicConfig> = {}): TopicConfig => ({
  retentionMs: 30 * DAY_MS,
  retentionBytes: -1,
  cleanupPolicy: "delete",
  maxMessageBytes: 1048588,
  ...over,
});

/** A record as kafkajs decodes it from a Fetch (record batch v2). */
const rec = (offset: number, timestamp: number, over: Partial<InternalRecord> = {}): InternalRecord => ({
  offset: String(offset),
  timestamp: String(timestamp),
  key: Buffer.from("customer-1"),
  value: Buffer.from('{"order":1}'),
  headers: {},
  isControlRecord: false,
  batchContext: { producerId: "-1", inTransaction: false, timestampType: 0 },
  ...over,
});
const commitMarker = (offset: number, producerId = "7"): InternalRecord =>
  rec(offset, 1_700_000_000_000, {
    isControlRecord: true,
    key: Buffer.from([0, 0, 0, 1]),
    value: Buffer.from([0, 0, 0, 0, 0, 0]),
    batchContext: { producerId, inTransaction: true, timestampType: 0 },
  });

const T0 = Date.UTC(2026, 0, 5, 9, 0, 0);

describe("topic configs", () => {
  it("reads DescribeConfigs answers; retention by time is null for -1 and for compact-only topics", () => {
    const c = topicConfigOf(
      described("orders.DLT", {
        "cleanup.policy": "delete",
        "retention.ms": "604800000",
        "retention.bytes": "-1",
        "max.message.bytes": "1048588",
      }),
    );
    expect(c).toEqual({
      retentionMs: 604800000,
      retentionBytes: -1,
      cleanupPolicy: "delete",
      maxMessageBytes: 1048588,
    });
    expect(timeRetentionMs(c)).toBe(604800000);
    expect(timeRetentionMs(topicConfigOf(described("x", { "retention.ms": "-1" })))).toBeNull();
    expect(timeRetentionMs(cfg({ cleanupPolicy: "compact" }))).toBeNull();
    expect(timeRetentionMs(cfg({ cleanupPolicy: "compact,delete", retentionMs: 3600000 }))).toBe(3600000);
    // A missing cleanup.policy is Kafka's default, delete.
    expect(timeRetentionMs(topicConfigOf(described("x", { "retention.ms": "1000" })))).toBe(1000);
  });

  it("says durations exactly", () => {
    expect(durationWords(7 * DAY_MS)).toBe("7 days");
    expect(durationWords(DAY_MS)).toBe("1 day");
    expect(durationWords(1.5 * DAY_MS)).toBe("1 day 12 hours");
    expect(durationWords(90_000)).toBe("1 minute 30 seconds");
    expect(durationWords(1500)).toBe("1500 ms");
    expect(durationWords(0)).toBe("0 ms");
    expect(durationWords(6 * DAY_MS + 23 * 3_600_000)).toBe("6 days 23 hours");
  });
});

describe("the DLQ set and origins", () => {
  const patterns = ["*.DLT", "*-dlt", "*.dlq", "dlq.*", "*-dead-letter"];

  it("lists configured plus discovered DLTs like listDlqs, internal topics left out", () => {
    const topics = ["orders", "orders.DLT", "payments-dlt", "__consumer_offsets", "dlq.sink", "audit"];
    expect(
      dlqNamesOf({ dlqs: [{ name: "audit" }, { name: "gone.DLT" }], discover: true, dltPatterns: patterns }, topics),
    ).toEqual(["audit", "dlq.sink", "gone.DLT", "orders.DLT", "payments-dlt"]);
    expect(dlqNamesOf({ dlqs: [{ name: "audit" }], discover: false, dltPatterns: patterns }, topics)).toEqual([
      "audit",
    ]);
  });

  it("takes the configured origin, else the letters' headers, else the name under an affix pattern", () => {
    const topics = new Set(["orders", "orders.DLT", "payments", "sink", "dlq.sink", "legacy", "team-x.DLT", "x"]);
    const exists = (t: string) => topics.has(t);
    expect(originsOf("orders.DLT", { configured: "payments", fromHeaders: ["orders"], patterns, exists })).toEqual([
      "payments",
    ]);
    expect(originsOf("orders.DLT", { configured: "deleted", fromHeaders: ["orders"], patterns, exists })).toEqual([]);
    expect(
      originsOf("orders.DLT", {
        fromHeaders: ["payments", "orders", "payments", "orders.DLT", "unknown"],
        patterns,
        exists,
      }),
    ).toEqual(["orders", "payments"]);
    expect(originsOf("orders.DLT", { fromHeaders: [], patterns, exists })).toEqual(["orders"]);
    expect(originsOf("dlq.sink", { fromHeaders: [], patterns, exists })).toEqual(["sink"]);
    // `team-*.DLT` marks its namespace too: no origin guessed from it.
    expect(originsOf("team-x.DLT", { fromHeaders: [], patterns: ["team-*.DLT"], exists })).toEqual([]);
    expect(originsOf("legacy-dead-letter", { fromHeaders: [], patterns, exists })).toEqual(["legacy"]);
    expect(originsOf("nothing.DLT", { fromHeaders: [], patterns, exists })).toEqual([]);
  });
});

describe("the record at a partition's log start", () => {
  it("is the first letter at or after the start, with the origin its Spring headers name", () => {
    const headers = {
      "kafka_dlt-original-topic": Buffer.from("orders"),
      "kafka_dlt-original-partition": Buffer.from([0, 0, 0, 2]),
    };
    // A compressed batch can start before the asked offset.
    const data = { messages: [rec(3, T0 - 1000), rec(4, T0, { headers }), rec(5, T0 + 1000)], abortedTransactions: [] };
    expect(logStartOf(data, 4n, 10n)).toEqual({ found: { kind: "letter", at: T0, origin: "orders" }, next: null });
  });

  it("skips commit markers and aborted records", () => {
    const tx = { producerId: "7", inTransaction: true, timestampType: 0 };
    const data = {
      messages: [
        commitMarker(10),
        rec(11, T0, { batchContext: tx }),
        rec(12, T0 + 1, { isControlRecord: true, key: Buffer.from([0, 0, 0, 0]), batchContext: tx }),
        rec(13, T0 + 2),
      ],
      abortedTransactions: [{ producerId: "7", firstOffset: "11" }],
    };
    expect(logStartOf(data, 10n, 14n).found).toEqual({ kind: "letter", at: T0 + 2, origin: null });
  });

  it("finds no letter when markers reach the end, and asks to read on when the answer stopped short", () => {
    expect(logStartOf({ messages: [commitMarker(7)] }, 7n, 8n)).toEqual({ found: { kind: "none" }, next: null });
    expect(logStartOf({ messages: [commitMarker(7)] }, 7n, 20n)).toEqual({ found: null, next: 8n });
    // Nothing came back (a batch too large for its share of a multi-partition Fetch).
    expect(logStartOf({ messages: [] }, 7n, 20n)).toEqual({ found: null, next: null });
  });

  it("does not trust a record without a timestamp (message format v0)", () => {
    expect(logStartOf({ messages: [rec(0, -1)] }, 0n, 1n).found).toEqual({ kind: "unknown" });
  });
});

describe("vitals", () => {
  const letter = (at: number): LogStart => ({ kind: "letter", at, origin: null });

  it("depth is end - start, the counter the sum of ends, oldestAt the earliest log-start letter", () => {
    const offsets = [
      { partition: 0, start: 3n, end: 10n },
      { partition: 1, start: 0n, end: 4n },
      { partition: 2, start: 5n, end: 5n },
    ];
    const v = vitalsOf(
      "orders.DLT",
      offsets,
      new Map([
        [0, letter(T0)],
        [1, letter(T0 - 60_000)],
      ]),
      cfg({ retentionMs: 7 * DAY_MS }),
    );
    expect(v).toEqual({
      name: "orders.DLT",
      queueType: "topic",
      depth: 11,
      inFlight: null,
      enteredTotal: 19,
      oldestAt: new Date(T0 - 60_000).toISOString(),
      retentionMs: 7 * DAY_MS,
      retentionClock: "arrival",
    });
  });

  it("oldestAt is null when any non-empty partition's start is unknown, or the topic is empty", () => {
    const offsets = [
      { partition: 0, start: 0n, end: 2n },
      { partition: 1, start: 0n, end: 2n },
    ];
    expect(
      vitalsOf(
        "t",
        offsets,
        new Map([
          [0, letter(T0)],
          [1, { kind: "unknown" }],
        ]),
        cfg(),
      ).oldestAt,
    ).toBeNull();
    expect(vitalsOf("t", offsets, new Map([[0, letter(T0)]]), cfg()).oldestAt).toBeNull();
    expect(
      vitalsOf(
        "t",
        offsets,
        new Map<number, LogStart>([
          [0, letter(T0)],
          [1, { kind: "none" }],
        ]),
        cfg(),
      ).oldestAt,
    ).toBe(new Date(T0).toISOString());
    expect(vitalsOf("t", [{ partition: 0, start: 4n, end: 4n }], new Map(), cfg())).toMatchObject({
      depth: 0,
      enteredTotal: 4,
      oldestAt: null,
    });
  });

  it("a missing topic or unknown offsets give nulls, infinite or compact-only retention null", () => {
    expect(vitalsOf("gone.DLT", null, new Map(), null)).toEqual({
      name: "gone.DLT",
      queueType: "topic",
      depth: null,
      inFlight: null,
      enteredTotal: null,
      oldestAt: null,
      retentionMs: null,
      retentionClock: "arrival",
    });
    expect(vitalsOf("t", [], new Map(), cfg({ retentionMs: -1 })).retentionMs).toBeNull();
    expect(vitalsOf("t", [], new Map(), cfg({ cleanupPolicy: "compact" })).retentionMs).toBeNull();
  });
});

describe("findings", () => {
  const opts = { minRetentionMs: 7 * DAY_MS, bootstrap: "kafka-1:9092" };
  const dlt = (over: Partial<DltFacts> = {}): DltFacts => ({
    name: "orders.DLT",
    partitions: 3,
    config: cfg(),
    ordered: false,
    origins: [],
    ...over,
  });
  const codes = (d: DltFacts) => kafkaFindings([d], opts).map((f) => `${f.code}:${f.severity}`);

  it("a well-kept DLT has none", () => {
    expect(
      kafkaFindings(
        [dlt({ origins: [{ name: "orders", partitions: 3, config: cfg({ retentionMs: 7 * DAY_MS }) }] })],
        opts,
      ),
    ).toEqual([]);
    // Unknown configs and unknown origins: nothing is claimed.
    expect(kafkaFindings([dlt({ config: null, partitions: 1 })], opts)).toEqual([]);
  });

  it("retention below the minimum: a warning, critical below a day, in words and with the command", () => {
    const [f] = kafkaFindings([dlt({ config: cfg({ retentionMs: 3 * DAY_MS }) })], opts);
    expect(f).toMatchObject({
      code: "kafka.retention_short",
      severity: "warning",
      object: "topic orders.DLT",
      dlq: "orders.DLT",
    });
    expect(f.why).toContain("keeps letters for 3 days (retention.ms=259200000)");
    expect(f.why).toContain("at least 7 days (operations.kafkaMinRetentionDays)");
    expect(f.fix).toBe(
      "Raise retention.ms to at least 604800000 (7 days): kafka-configs.sh --bootstrap-server kafka-1:9092 --alter --entity-type topics --entity-name orders.DLT --add-config retention.ms=604800000",
    );
    expect(codes(dlt({ config: cfg({ retentionMs: 12 * 3_600_000 }) }))).toEqual(["kafka.retention_short:critical"]);
    expect(codes(dlt({ config: cfg({ retentionMs: DAY_MS }) }))).toEqual(["kafka.retention_short:warning"]);
    expect(codes(dlt({ config: cfg({ retentionMs: -1 }) }))).toEqual([]);
    expect(kafkaFindings([dlt({ config: cfg({ retentionMs: DAY_MS }) })], { ...opts, minRetentionMs: 0 })).toEqual([]);
  });

  it("a compacted DLT is critical, whatever else its policy says", () => {
    for (const policy of ["compact", "compact,delete", "delete, compact"]) {
      const [f] = kafkaFindings([dlt({ config: cfg({ cleanupPolicy: policy }) })], opts);
      expect(f).toMatchObject({ code: "kafka.compacted", severity: "critical", object: "topic orders.DLT" });
      expect(f.why).toContain(`cleanup.policy=${policy}`);
      expect(f.fix).toContain("--add-config cleanup.policy=delete");
    }
  });

  it("fewer partitions than the origin: info, a warning when the DLQ is ordered; only with a known origin", () => {
    const origins = [{ name: "orders", partitions: 6, config: cfg() }];
    const [f] = kafkaFindings([dlt({ partitions: 2, origins })], opts);
    expect(f).toMatchObject({
      code: "kafka.fewer_partitions",
      severity: "info",
      object: "topic orders.DLT",
      dlq: "orders.DLT",
    });
    expect(f.why).toContain("has 2 partitions, its origin orders has 6");
    expect(f.why).toContain("Records of one key keep their order only within one partition");
    expect(f.fix).toContain(
      "kafka-topics.sh --bootstrap-server kafka-1:9092 --alter --topic orders.DLT --partitions 6",
    );
    expect(codes(dlt({ partitions: 2, origins, ordered: true }))).toEqual(["kafka.fewer_partitions:warning"]);
    expect(kafkaFindings([dlt({ partitions: 2, origins, ordered: true })], opts)[0].why).toContain("ordered: true");
    expect(codes(dlt({ partitions: 6, origins }))).toEqual([]);
    expect(codes(dlt({ partitions: 1, origins: [] }))).toEqual([]);
  });

  it("a DLT that keeps letters for less time than its origin keeps records: a warning", () => {
    const [f] = kafkaFindings(
      [
        dlt({
          config: cfg({ retentionMs: 7 * DAY_MS }),
          origins: [{ name: "orders", partitions: 3, config: cfg({ retentionMs: 14 * DAY_MS }) }],
        }),
      ],
      opts,
    );
    expect(f).toMatchObject({ code: "kafka.retention_below_origin", severity: "warning", dlq: "orders.DLT" });
    expect(f.why).toContain("7 days, less than its origin orders keeps records (14 days, retention.ms=1209600000)");
    expect(f.fix).toContain("--add-config retention.ms=1209600000");
    const forever = kafkaFindings(
      [
        dlt({
          config: cfg({ retentionMs: 7 * DAY_MS }),
          origins: [{ name: "orders", partitions: 3, config: cfg({ retentionMs: -1 }) }],
        }),
      ],
      opts,
    )[0];
    expect(forever.fix).toContain("retention.ms=-1");
    // A compact-only origin (a changelog) keeps keys, not time: nothing to compare.
    expect(
      codes(
        dlt({
          config: cfg({ retentionMs: 7 * DAY_MS }),
          origins: [{ name: "orders", partitions: 3, config: cfg({ cleanupPolicy: "compact" }) }],
        }),
      ),
    ).toEqual([]);
    // An unlimited DLT never keeps less.
    expect(
      codes(
        dlt({
          config: cfg({ retentionMs: -1 }),
          origins: [{ name: "orders", partitions: 3, config: cfg({ retentionMs: 14 * DAY_MS }) }],
        }),
      ),
    ).toEqual([]);
  });
});
