/**
 * Pulsar mover alone (no engine, no database), one run: the same number of letters moved by
 * PulsarAdapter.moveLetters with one copy in flight (the baseline: publish, wait for Pulsar's
 * confirmation, acknowledge, next) and with a window of copies in flight (one per ordering key at
 * most), plus the adapter's read rate. Compare the ratios, not the rates across runs.
 *   npx tsx --conditions=react-server bench/pulsar-mover.ts
 *   (BENCH_COUNT, default 2,000; BENCH_INFLIGHT, default "1,32"; BENCH_KEYS, default 50 distinct keys;
 *   smoke 200 letters)
 */
import { randomUUID } from "node:crypto";
import { PulsarAdapter } from "../lib/brokers/pulsar/adapter";
import { PulsarKit, testConfig } from "../lib/brokers/pulsar/test-kit";
import { shortName, type TopicName } from "../lib/brokers/pulsar/client";
import type { Letter } from "../lib/brokers/contract/letter";
import type { MoveRequest } from "../lib/brokers/contract/move";
import { cpuNow, cpuSince, measureBroker } from "./cpu";
import { report, size, sizes } from "./report";
import { MANAGED_HEADERS } from "../lib/connections/managed-headers";

const COUNT = size("BENCH_COUNT", 2_000, 200);
const IN_FLIGHT = sizes("BENCH_INFLIGHT", "1,32", "1,32").map(Number);
measureBroker("pulsar");
const KEYS = Number(process.env.BENCH_KEYS ?? 50);
const BODY = new TextEncoder().encode(JSON.stringify({ orderId: "o-1", note: "x".repeat(900) }));

async function filledDlq(kit: PulsarKit, label: string): Promise<{ dlq: TopicName; target: TopicName }> {
  const dlq = await kit.createTopic(`${label}-sub-DLQ`);
  const target = await kit.createTopic(`${label}-target`);
  await kit.produce(
    dlq,
    Array.from({ length: COUNT }, (_, i) => ({ body: BODY, key: `k-${i % KEYS}`, properties: { i: String(i) } })),
  );
  return { dlq, target };
}

async function main() {
  const kit = new PulsarKit();
  try {
    await kit.ensureNamespace();
    const adapter = new PulsarAdapter(testConfig({ id: "bench-pulsar", namespaces: [kit.ns] }), {
      allManagedHeaders: MANAGED_HEADERS,
    });
    const rates = new Map<number, number>();
    for (const window of IN_FLIGHT) {
      const { dlq, target } = await filledDlq(kit, `w${window}`);
      const letters: Letter[] = [];
      const r0 = performance.now();
      let c0 = cpuNow();
      for await (const l of adapter.stream(shortName(dlq))) letters.push({ ...l, body: new Uint8Array(0) });
      const readRate = letters.length / ((performance.now() - r0) / 1000);
      const readCpu = await cpuSince(c0);
      if (letters.length !== COUNT) throw new Error(`read ${letters.length} letters, expected ${COUNT}`);
      const job = randomUUID();
      const reqs: MoveRequest[] = letters.map((l) => ({
        letterId: l.id,
        sha256: l.sha256,
        target: { kind: "queue", name: shortName(target) },
        markers: { redriveId: job, replayId: randomUUID(), redriveCount: 1, originalMessageId: l.messageId },
      }));
      const t0 = performance.now();
      c0 = cpuNow();
      let moved = 0;
      for await (const r of adapter.moveLetters(shortName(dlq), reqs, { maxInFlight: window })) {
        if (r.outcome !== "moved") throw new Error(`${r.letterId}: ${r.outcome} ${r.reason}`);
        moved++;
      }
      const rate = moved / ((performance.now() - t0) / 1000);
      const moveCpu = await cpuSince(c0);
      if (moved !== COUNT) throw new Error(`moved ${moved} letters, expected ${COUNT}`);
      rates.set(window, rate);
      const base = rates.get(IN_FLIGHT[0])!;
      console.log(
        `read ${letters.length} letters: ${readRate.toFixed(0)}/s; moveLetters, ${window} in flight: ${rate.toFixed(0)}/s (${(rate / base).toFixed(2)} of ${IN_FLIGHT[0]} in flight)`,
      );
      report({
        operation: `Pulsar read, adapter.stream(), ${COUNT} letters (before ${window} in flight)`,
        rate: { value: readRate, unit: "letters/s" },
        cpu: { reading: readCpu, letters: COUNT, broker: "pulsar" },
      });
      report({
        operation: `Pulsar moveLetters, ${window} in flight, ${COUNT} letters`,
        rate: { value: rate, unit: "letters/s" },
        anchor:
          window === IN_FLIGHT[0] ? undefined : { name: `${IN_FLIGHT[0]} in flight`, value: base, unit: "letters/s" },
        cpu: { reading: moveCpu, letters: COUNT, broker: "pulsar" },
      });
    }
    await adapter.close();
  } finally {
    await kit.cleanup();
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
