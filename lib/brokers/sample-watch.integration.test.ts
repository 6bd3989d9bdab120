/**
 * The sample watch's looks at a redrive target (lib/brokers/target-readers.ts), per broker, on its
 * real server: who reads it, and whether a sample's copies were taken. In each case the copies are
 * published and confirmed first and the mark is taken right after, as the engine does.
 */
import amqp, { type ChannelModel } from "amqplib";
import { afterAll, describe, expect, it } from "vitest";
import { BrokerError } from "@/lib/brokers/types";
import type { SampleEvidence, SampleWatchOps } from "@/lib/brokers/target-readers";
import { RabbitMqAdapter } from "@/lib/brokers/rabbitmq/adapter";
import { AMQP_URL, RabbitKit, testConfig as rabbitConfig } from "@/lib/brokers/rabbitmq/test-kit";

/** Looks until `done` holds or the deadline passes; returns the last evidence either way. */
async function evidenceUntil(
  watch: SampleWatchOps,
  target: string,
  mark: Awaited<ReturnType<SampleWatchOps["mark"]>>,
  done: (e: SampleEvidence) => boolean,
  timeoutMs = 30_000,
): Promise<SampleEvidence> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const e = await watch.evidence(target, mark);
    if (done(e) || Date.now() > until) return e;
    await new Promise((r) => setTimeout(r, 500));
  }
}

async function expectNotFound(p: Promise<unknown>) {
  const e = await p.then(
    () => null,
    (err: unknown) => err,
  );
  expect(e).toBeInstanceOf(BrokerError);
  expect((e as BrokerError).kind).toBe("not_found");
}

describe.concurrent("rabbitmq sample watch", () => {
  const kit = new RabbitKit();
  const adapter = new RabbitMqAdapter(rabbitConfig());
  const watch = adapter.sampleWatch;
  const conns: ChannelModel[] = [];

  afterAll(async () => {
    for (const c of conns) await c.close().catch(() => undefined);
    await adapter.close();
    await kit.cleanup();
  });

  /** A consumer on a connection of its own: `ack` false holds what it gets (prefetch 10) unacknowledged. */
  async function consumer(queue: string, opts: { ack: boolean; prefetch?: number }) {
    const conn = await amqp.connect(AMQP_URL);
    conn.on("error", () => undefined);
    conns.push(conn);
    const ch = await conn.createChannel();
    ch.on("error", () => undefined);
    await ch.prefetch(opts.prefetch ?? 10);
    const got: string[] = [];
    const { consumerTag } = await ch.consume(queue, (m) => {
      if (!m) return;
      got.push(m.content.toString());
      if (opts.ack) ch.ack(m);
    });
    return { consumerTag, got, ch };
  }

  const copies = async (queue: string, n = 2) => {
    for (let i = 0; i < n; i++) await kit.publish(queue, { body: new TextEncoder().encode(`copy-${i}`) });
  };

  it("a queue nobody consumes: 0 readers, and the copies' evidence is no_reader", async () => {
    const q = await kit.queue(kit.name("target"));
    const readers = await watch.readers(q);
    expect(readers).toMatchObject({ target: q, count: 0, names: [] });
    expect(readers.summary).toBe(`No consumer on queue "${q}".`);
    await copies(q);
    const mark = await watch.mark(q);
    const e = await watch.evidence(q, mark);
    expect(e.state).toBe("no_reader");
    expect(e.readers.count).toBe(0);
    expect(e.text).toContain("No consumer");
    expect(e.text).toContain("2 ready");
  });

  it("a consumer that reads and acknowledges the copies: taken", async () => {
    const q = await kit.queue(kit.name("target"));
    const c = await consumer(q, { ack: true });
    const readers = await watch.readers(q);
    expect(readers.count).toBe(1);
    expect(readers.summary).toBe(`1 consumer on queue "${q}".`);
    await copies(q);
    const mark = await watch.mark(q);
    expect(c.got).toEqual(["copy-0", "copy-1"]);
    const e = await evidenceUntil(watch, q, mark, (x) => x.state === "taken");
    expect(e.state).toBe("taken");
    expect(e.readers.names.join(" ")).toContain(c.consumerTag);
    expect(e.text).toContain("empty");
  });

  it("a queue that is never empty (one message held unacknowledged): taken once consumers acknowledged what it held at the mark", async () => {
    const q = await kit.queue(kit.name("target"));
    await kit.publish(q, { body: new TextEncoder().encode("held") });
    const holder = await consumer(q, { ack: false, prefetch: 1 });
    await kit.waitDepth(q, 0);
    await copies(q); // ready: the holder's prefetch is full
    const mark = await watch.mark(q);
    expect(mark).toMatchObject({ ready: 2, unacked: 1 });
    const worker = await consumer(q, { ack: true });
    const early = await evidenceUntil(watch, q, mark, (x) => x.text.includes("acknowledged or took 2 "));
    // 2 acknowledged of the 3 it held (the held one counts: counters do not say which message is which).
    expect(early.state).toBe("waiting");
    expect(early.text).toContain("it held 3 messages");
    await kit.publish(q, { body: new TextEncoder().encode("later") });
    const e = await evidenceUntil(watch, q, mark, (x) => x.state === "taken");
    expect(e.state).toBe("taken");
    expect(e.text).toContain("acknowledged or took 3 messages");
    expect(worker.got).toEqual(["copy-0", "copy-1", "later"]);
    expect(holder.got).toEqual(["held"]);
    expect(e.readers.count).toBe(2);
  });

  it("a consumer that holds the copies without acknowledging them: waiting", async () => {
    const q = await kit.queue(kit.name("target"));
    const c = await consumer(q, { ack: false });
    await copies(q);
    const mark = await watch.mark(q);
    expect(c.got).toHaveLength(2);
    const e = await watch.evidence(q, mark);
    expect(e.state).toBe("waiting");
    expect(e.text).toContain("now 0 ready, 2 delivered but not acknowledged");
    expect(e.readers.names[0]).toContain("prefetch 10, manual ack");
  });

  it("a queue that does not exist: not_found from every look", async () => {
    const q = kit.name("missing");
    await expectNotFound(watch.readers(q));
    await expectNotFound(watch.mark(q));
    await expectNotFound(watch.evidence(q, { queue: q, at: Date.now(), ready: 0 }));
  });
});
