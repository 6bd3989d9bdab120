/**
 * A real outage: RabbitMQ's application is stopped under a connected adapter and started again.
 * While it is down every call fails fast with `unavailable:broker`; once it is back the same adapter
 * reconnects by itself and every letter is still there (durable queue, persistent letters).
 * Runs rabbitmqctl, so it needs the privileges the test machine's CI has (root). Runs in the faults
 * project, alone; scripts/test.sh points it (DLQ_TEST_RABBITMQ_NODE and the kit's ports) at a private
 * node, so stopping it disturbs no other test.
 */
import { execFileSync } from "node:child_process";
import { afterAll, describe, expect, it } from "vitest";
import { RabbitMqAdapter } from "@/lib/brokers/rabbitmq/adapter";
import { RabbitKit, testConfig } from "@/lib/brokers/rabbitmq/test-kit";
import { BrokerError } from "@/lib/brokers/contract/errors";
import { MANAGED_HEADERS } from "@/lib/connections/managed-headers";

const rabbitmqctl = (...args: string[]) =>
  execFileSync(
    "rabbitmqctl",
    [...(process.env.DLQ_TEST_RABBITMQ_NODE ? ["-n", process.env.DLQ_TEST_RABBITMQ_NODE] : []), ...args],
    { stdio: "pipe", timeout: 120_000 },
  );

async function until<T>(f: () => Promise<T>, ms: number): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    try {
      return await f();
    } catch (e) {
      if (Date.now() > end) throw e;
      await new Promise((r) => setTimeout(r, 500));
    }
  }
}

describe("RabbitMQ outage", () => {
  const kit = new RabbitKit();
  const adapter = new RabbitMqAdapter(testConfig(), {
    allManagedHeaders: MANAGED_HEADERS,
    idleMs: 300,
    connectTimeoutMs: 2000,
  });
  afterAll(async () => {
    await adapter.close();
    await kit.cleanup();
  });

  it("reports the broker unreachable while it is stopped, then recovers with every letter kept", async () => {
    const bodies = ["one", "two", "three"].map((s) => ({ body: new TextEncoder().encode(s) }));
    const { dlq } = await kit.dlqByReject(bodies);
    const before = await adapter.browse(dlq, { offset: 0, limit: 10 });
    expect(before.letters).toHaveLength(3);

    rabbitmqctl("stop_app");
    try {
      const started = Date.now();
      const errors = await Promise.all([
        adapter.describeDlq(dlq).catch((e: unknown) => e),
        adapter.browse(dlq, { offset: 0, limit: 10 }).catch((e: unknown) => e),
        adapter.ping().catch((e: unknown) => e),
      ]);
      for (const e of errors) {
        expect(e).toBeInstanceOf(BrokerError);
        expect((e as BrokerError).code).toBe("unavailable:broker");
        expect((e as BrokerError).userMessage).toMatch(/cannot be reached/);
      }
      expect(Date.now() - started).toBeLessThan(15_000);
    } finally {
      rabbitmqctl("start_app");
      rabbitmqctl("await_startup");
    }

    const after = await until(() => adapter.browse(dlq, { offset: 0, limit: 10 }), 30_000);
    expect(after.letters.map((l) => l.id)).toEqual(before.letters.map((l) => l.id));
    expect(after.letters.map((l) => Buffer.from(l.body).toString())).toEqual(["one", "two", "three"]);
    expect((await adapter.describeDlq(dlq)).depth).toBe(3);
  });
});
