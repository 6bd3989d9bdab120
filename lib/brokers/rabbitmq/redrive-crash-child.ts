/**
 * Child process for the crash test in redrive.integration.test.ts (never used by the app): moves
 * every letter of a DLQ back to its origin, printing one line per settled letter, slowly enough
 * that the parent can SIGKILL it mid-way. Usage: tsx --conditions=react-server redrive-crash-child.ts <dlq> <redriveId> <managed headers>
 * The managed header names (every adapter's declarations, as JSON) come from the parent: this file,
 * in a broker's folder, may import no other broker's (lib/layout.test.ts).
 */
import { randomUUID } from "node:crypto";
import type { ManagedHeaders } from "@/lib/brokers/contract/markers";
import { RabbitMqAdapter } from "@/lib/brokers/rabbitmq/adapter";
import { testConfig } from "@/lib/brokers/rabbitmq/test-kit";

async function main() {
  const [dlq, redriveId, managed] = process.argv.slice(2);
  const allManagedHeaders = JSON.parse(managed) as ManagedHeaders[];
  const adapter = new RabbitMqAdapter(testConfig(), { allManagedHeaders, idleMs: 500 });
  const letters = [];
  for await (const l of adapter.stream(dlq)) letters.push(l);
  process.stdout.write(`read ${letters.length}\n`);
  const reqs = letters.map((l) => ({
    letterId: l.id,
    sha256: l.sha256,
    target: { kind: "origin" as const },
    markers: { redriveId, replayId: randomUUID(), redriveCount: 1, originalMessageId: l.messageId },
  }));
  for await (const r of adapter.moveLetters(dlq, reqs)) {
    process.stdout.write(`${r.outcome} ${r.letterId}\n`);
    await new Promise((res) => setTimeout(res, 5));
  }
  process.stdout.write("done\n");
  await adapter.close();
}

main().catch((e) => {
  process.stderr.write(`${(e as Error).stack ?? e}\n`);
  process.exit(1);
});
