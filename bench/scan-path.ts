/**
 * The triage scan's own work per letter, in process and warmed up, without a broker or a write:
 * Kafka records as the scan bench seeds them (Spring Kafka's `kafka_dlt-*` headers, ~1 KB payloads,
 * four exception classes, every message unique) through `toLetter` (lib/brokers/kafka/letter.ts),
 * `toIndexRow` under the default classification and masking rules (lib/triage/index-row.ts) and
 * the batch's column arrays (`prepareLetters`, 500 rows a batch).
 *   npm run bench:scan-path       (BENCH_SCAN_PATH_LETTERS, default 20,000; smoke 1,000)
 *
 * bench:triage-scan measures the whole scan against its floor, but its run-to-run noise on a shared
 * machine (±10 µs per letter) hides a change of 1–3 µs, the size of what is left to cut in the
 * scan's path (docs/benchmarks.md, 2026-12-06, second session). This prints each stage's µs per
 * letter, the best of 5 passes over every letter after one pass to warm the process, and that first
 * pass apart: V8's warm-up of the path, which a long-lived console pays once.
 *
 * `prepareLetters` takes the pg path (binary column arrays) when DATABASE_URL names a Postgres
 * server, as the console's scan does; nothing connects to it. Without one the stage is skipped.
 */
import { GCProfiler, getHeapStatistics } from "node:v8";
import { bestUs, report, size } from "./report";
import { CLASSES } from "./scan-brokers";

const LETTERS = size("BENCH_SCAN_PATH_LETTERS", 20_000, 1_000);
process.env.DLQ_INDEX_KEY ??= Buffer.alloc(32, 7).toString("base64");

const PARTITIONS = 3;

const int = (n: number, width: 4 | 8) => {
  const b = Buffer.alloc(width);
  if (width === 4) b.writeInt32BE(n);
  else b.writeBigInt64BE(BigInt(n));
  return b;
};

/** A record as kafkajs decodes it: Buffers for key, value and each header value. */
function record(j: number, now: number, value: Buffer) {
  const [cls, messageOf] = CLASSES[j % CLASSES.length];
  const message = messageOf(j);
  const stack = `${cls}: ${message}\n\tat com.acme.orders.OrderListener.onOrder(OrderListener.java:42)\n\tat org.springframework.amqp.rabbit.listener.AbstractMessageListenerContainer.doInvokeListener(AbstractMessageListenerContainer.java:1662)`;
  const t = (s: string) => Buffer.from(s, "utf8");
  return {
    offset: String(Math.floor(j / PARTITIONS)),
    timestamp: String(now),
    key: t(`order-${j}`),
    value: Buffer.from(value),
    headers: {
      "kafka_dlt-exception-fqcn": t(cls),
      "kafka_dlt-exception-message": t(message),
      "kafka_dlt-exception-stacktrace": t(stack),
      "kafka_dlt-original-topic": t("orders"),
      "kafka_dlt-original-partition": int(j % PARTITIONS, 4),
      "kafka_dlt-original-offset": int(Math.floor(j / PARTITIONS), 8),
      "kafka_dlt-original-timestamp": int(now - 60_000, 8),
      "kafka_dlt-original-timestamp-type": t("CreateTime"),
      "kafka_dlt-original-consumer-group": t("orders-service"),
      "x-app-version": t("orders-2.3.1"),
    },
    batchContext: { timestampType: 0 },
  };
}

async function main() {
  const { toLetter } = await import("../lib/brokers/kafka/letter");
  const { PAYLOAD_CAP_BYTES, toIndexRow } = await import("../lib/triage/index-row");
  const { prepareLetters } = await import("../lib/triage/index-store");
  const { DEFAULT_CLASSIFICATION_RULES } = await import("../lib/triage/classify");
  const { DEFAULT_MASKING_RULES } = await import("../lib/masking/defaults");
  const { searchMaskingFor } = await import("../lib/triage/masked-search");
  const { maskingHashKey } = await import("../lib/masking/key");
  const { keyring } = await import("../lib/crypto/payload-cipher");
  const { closeDb, databaseMode, getDb } = await import("../lib/db");
  const topic = "bench.scan-path.DLT";
  const ctx = {
    connectionId: "bench-scan-path",
    queue: topic,
    // Copies: the failure cache is per rule list, as a scan's freshly loaded rules are.
    rules: DEFAULT_CLASSIFICATION_RULES.map((r) => ({ ...r })),
    ring: keyring(),
    randomAccess: true,
    search: searchMaskingFor(
      { rules: DEFAULT_MASKING_RULES, sensitive: [], version: 1 },
      "bench-scan-path",
      topic,
      maskingHashKey(),
    ),
  };
  const now = Date.now();
  const value = Buffer.alloc(1024, "x");
  const records = Array.from({ length: LETTERS }, (_, j) => record(j, now, value));
  const pg = Boolean(process.env.DATABASE_URL) && databaseMode() === "postgres";
  const db = pg ? getDb() : null;

  type Letter = ReturnType<typeof toLetter>;
  type Row = ReturnType<typeof toIndexRow>;
  let letters: Letter[] = [];
  let rows: Row[] = [];
  const letterPass = () => {
    letters = records.map((r, j) =>
      toLetter(topic, j % PARTITIONS, r, j, { maxBodyBytes: PAYLOAD_CAP_BYTES, configOrigin: null }),
    );
  };
  const rowPass = () => {
    rows = letters.map((l) => toIndexRow(l, ctx));
  };
  const encodePass = () => {
    if (!db) return;
    for (let i = 0; i < rows.length; i += 500) {
      const p = prepareLetters(rows.slice(i, i + 500), db);
      if (p.via !== "pg") throw new Error(`prepareLetters took the ${p.via} path`);
    }
  };
  const timed = (f: () => void) => {
    const t0 = performance.now();
    f();
    return ((performance.now() - t0) * 1000) / LETTERS;
  };
  /**
   * V8 heap bytes a pass allocates per letter: the heap's growth over the pass plus what each
   * collection during it freed (GCProfiler's before/after figures). Garbage the pass leaves for
   * a later collection counts too, as it should: the scan pays for it in scavenges.
   */
  const allocatedPerLetter = (f: () => void) => {
    const gc = new GCProfiler();
    gc.start();
    const before = getHeapStatistics().used_heap_size;
    f();
    const after = getHeapStatistics().used_heap_size;
    const freed = (gc.stop()?.statistics ?? []).reduce(
      (s, e) => s + e.beforeGC.heapStatistics.usedHeapSize - e.afterGC.heapStatistics.usedHeapSize,
      0,
    );
    return (after - before + freed) / LETTERS;
  };
  // The first pass of a fresh process: what the console pays once.
  const first = timed(letterPass) + timed(rowPass) + timed(encodePass);
  const stage = (name: string, f: () => void) => ({ name, us: bestUs(f) / LETTERS, bytes: allocatedPerLetter(f) });
  const stages = [
    stage("toLetter (Kafka record → letter)", letterPass),
    stage("toIndexRow (resolve, classify, seal, mask)", rowPass),
    ...(db ? [stage("column arrays (prepareLetters, 500 a batch)", encodePass)] : []),
  ];
  const total = stages.reduce((s, x) => s + x.us, 0);
  const bytes = stages.reduce((s, x) => s + x.bytes, 0);
  console.log(
    `The scan's path, ${LETTERS} Kafka letters in process (µs per letter, best of 5 after a first pass; V8 heap bytes allocated per letter)`,
  );
  for (const s of stages) {
    console.log(`  ${s.name.padEnd(45)} ${s.us.toFixed(2).padStart(6)} µs ${s.bytes.toFixed(0).padStart(7)} B`);
    report({ operation: `scan path per letter: ${s.name}`, rate: { value: s.us, unit: "µs" } });
    report({ operation: `scan path heap per letter: ${s.name}`, rate: { value: s.bytes, unit: "B" } });
  }
  console.log(`  ${"together".padEnd(45)} ${total.toFixed(2).padStart(6)} µs ${bytes.toFixed(0).padStart(7)} B`);
  console.log(`  ${"the first pass of this process, together".padEnd(45)} ${first.toFixed(2)}`);
  if (!db) console.log("  (no Postgres DATABASE_URL: the column arrays were not timed)");
  report({
    operation: "scan path per letter: together, warmed up",
    rate: { value: total, unit: "µs" },
    anchor: { name: "the first pass of a fresh process", value: first, unit: "µs" },
  });
  if (db) await closeDb();
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
