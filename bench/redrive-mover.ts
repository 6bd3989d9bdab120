/**
 * RabbitMQ mover alone (no engine, no database), one run: the same letters moved by
 * RabbitMqAdapter.moveLetters in successive calls of BENCH_BATCH letters (the engine's batch size at
 * 1,000/s is 500; unthrottled 2,000) vs a bare consume → confirm-publish → ack loop, with the mean
 * cost of one call. Separates the adapter's share of a redrive from the engine's (ledger, audit).
 *   npx tsx --conditions=react-server bench/redrive-mover.ts
 *   (BENCH_COUNT, default 20,000; BENCH_BATCH, default "500,2000"; BENCH_INFLIGHT, default "64";
 *   smoke 2,000 letters)
 */
import { randomUUID } from "node:crypto";
import amqp from "amqplib";
import { RabbitMqAdapter } from "../lib/brokers/rabbitmq/adapter";
import { baseLetterId } from "../lib/brokers/rabbitmq/identity";
import { AMQP_URL, testConfig } from "../lib/brokers/rabbitmq/test-kit";
import { sha256Hex } from "../lib/brokers/display";
import type { MoveRequest } from "../lib/brokers/contract/move";
import { asConsole } from "./console-options";
import { cpuNow, cpuSince } from "./cpu";
import { BENCH_BODY, bareMove, fill } from "./redrive-common";
import { report, size, sizes } from "./report";
import { MANAGED_HEADERS } from "../lib/connections/managed-headers";

/** The machine's RabbitMQ, or another local node (DLQ_TEST_AMQP_PORT, see test-kit). */
const AMQP = AMQP_URL;
const COUNT = size("BENCH_COUNT", 20_000, 2_000);
const BATCHES = sizes("BENCH_BATCH", "500,2000", "500,2000").map(Number);
const IN_FLIGHT = sizes("BENCH_INFLIGHT", "64", "64").map(Number);

async function mover(dlq: string, batch: number, moveInFlight: number): Promise<{ rate: number; perCallMs: number }> {
  const adapter = new RabbitMqAdapter(testConfig({ id: "bench-mover", dlqs: [{ name: dlq }], discover: false }), {
    allManagedHeaders: MANAGED_HEADERS,
    moveInFlight,
  });
  const sha256 = sha256Hex(BENCH_BODY);
  const job = randomUUID();
  const t0 = performance.now();
  let moved = 0;
  let calls = 0;
  for (let i = 0; i < COUNT; i += batch) {
    const reqs: MoveRequest[] = [];
    for (let j = i; j < Math.min(COUNT, i + batch); j++) {
      reqs.push({
        letterId: baseLetterId(`b-${j}`, () => ""),
        sha256,
        target: { kind: "queue", name: `${dlq}.target` },
        markers: { redriveId: job, replayId: randomUUID(), redriveCount: 1, originalMessageId: `b-${j}` },
      });
    }
    calls++;
    for await (const r of adapter.moveLetters(dlq, reqs)) {
      if (r.outcome !== "moved") throw new Error(`${r.letterId}: ${r.outcome} ${r.reason}`);
      moved++;
    }
  }
  const ms = performance.now() - t0;
  await adapter.close();
  return { rate: moved / (ms / 1000), perCallMs: ms / calls };
}

async function main() {
  // The whole run (anchors and the console's code alike) in a process with the console's Node options.
  if (await asConsole("bench/redrive-mover.ts")) return;
  const conn = await amqp.connect(AMQP);
  const ch = await conn.createConfirmChannel();
  const base = `bench.mover.${randomUUID().slice(0, 6)}`;
  await fill(ch, base, COUNT);
  let c0 = cpuNow();
  const bareRate = await bareMove(conn, ch, base, COUNT);
  const bareCpu = await cpuSince(c0);
  console.log(`bare consume → confirm-publish → ack: ${bareRate.toFixed(0)}/s`);
  report({
    operation: `redrive mover: bare consume → confirm-publish → ack, ${COUNT} letters`,
    rate: { value: bareRate, unit: "letters/s" },
    cpu: { reading: bareCpu, letters: COUNT, broker: "rabbitmq" },
  });
  for (const inFlight of IN_FLIGHT) {
    for (const batch of BATCHES) {
      const dlq = `${base}.b${batch}.w${inFlight}`;
      await fill(ch, dlq, COUNT);
      await ch.assertQueue(`${dlq}.target`, { durable: true });
      c0 = cpuNow();
      const r = await mover(dlq, batch, inFlight);
      report({
        operation: `redrive mover: moveLetters, calls of ${batch}, ${inFlight} in flight`,
        rate: { value: r.rate, unit: "letters/s" },
        anchor: { name: "bare loop", value: bareRate, unit: "letters/s" },
        cpu: { reading: await cpuSince(c0), letters: COUNT, broker: "rabbitmq" },
      });
      console.log(
        `moveLetters, calls of ${batch}, ${inFlight} in flight: ${r.rate.toFixed(0)}/s (${(r.rate / bareRate).toFixed(2)} of bare), ${r.perCallMs.toFixed(0)} ms per call`,
      );
      await ch.deleteQueue(dlq);
      await ch.deleteQueue(`${dlq}.target`);
    }
  }
  await ch.deleteQueue(base);
  await ch.deleteQueue(`${base}.target`);
  await conn.close();
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
