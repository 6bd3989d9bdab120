import { spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import path from "node:path";
import amqp from "amqplib";
import { afterAll, describe, expect, it } from "vitest";
import { runRedriveContract, collectMoves, markersFor } from "@/lib/brokers/contract-suite/redrive";
import { runRemoveContract } from "@/lib/brokers/contract-suite/remove";
import { REDRIVE_HEADERS } from "@/lib/brokers/contract/markers";
import { BrokerError } from "@/lib/brokers/contract/errors";
import type { Letter } from "@/lib/brokers/contract/letter";
import { RabbitMqAdapter } from "@/lib/brokers/rabbitmq/adapter";
import { AMQP_URL, RabbitKit, testConfig } from "@/lib/brokers/rabbitmq/test-kit";
import { rawPropertiesOf } from "@/lib/brokers/rabbitmq/raw-headers";
import { arrived, contractFixtureWith, peek } from "@/lib/brokers/rabbitmq/contract-fixture";
import { int32Entry, longstrEntry, parseProperties, tableEntries } from "@/lib/brokers/rabbitmq/amqp-properties";
import { installRawPublish, publishRaw } from "@/lib/brokers/rabbitmq/raw-publish";
import { MANAGED_HEADERS } from "@/lib/connections/managed-headers";

const text = (s: string) => new TextEncoder().encode(s);

const contractFixture = contractFixtureWith({ allManagedHeaders: MANAGED_HEADERS });
runRedriveContract("rabbitmq", contractFixture);
runRemoveContract("rabbitmq", contractFixture);

describe("rabbitmq redrive: routes, failures, exact headers, crash", () => {
  const kit = new RabbitKit();
  const adapter = new RabbitMqAdapter(testConfig(), { allManagedHeaders: MANAGED_HEADERS, idleMs: 500 });
  afterAll(async () => {
    await adapter.close();
    await kit.cleanup();
  });
  const browseAll = async (dlq: string) => (await adapter.browse(dlq, { offset: 0, limit: 1000 })).letters;
  const req = (l: Letter, target: { kind: "origin" } | { kind: "queue"; name: string }, job = randomUUID()) => ({
    letterId: l.id,
    sha256: l.sha256,
    target,
    markers: markersFor(job, 1, l.messageId),
  });

  /** A DLQ whose letters died in `work`, which they reached through exchange `ex` with routing key `key`. */
  async function dlqThroughExchange(bodies: string[]) {
    const ex = await kit.exchange(kit.name("orders-x"), "direct");
    const dlq = await kit.queue(kit.name("dlq"));
    const work = await kit.queue(kit.name("work"), { "x-dead-letter-exchange": "", "x-dead-letter-routing-key": dlq });
    const key = `${kit.prefix}.orders`;
    const ch = await kit.channel();
    await ch.bindQueue(work, ex, key);
    for (const b of bodies) {
      ch.publish(ex, key, Buffer.from(b), { persistent: true, messageId: `${b}-${randomUUID()}` });
      await ch.waitForConfirms();
    }
    await kit.rejectAll(work, bodies.length);
    await kit.waitDepth(dlq, bodies.length);
    return { ex, dlq, work, key };
  }

  it("origin is the queue the letter died in, never a fan-out to the other queues bound on its exchange", async () => {
    const { ex, dlq, work, key } = await dlqThroughExchange(["via-x-0", "via-x-1"]);
    // Another consumer's queue on the same exchange and key: it already got the original message.
    const bystander = await kit.queue(kit.name("bystander"));
    await (await kit.channel()).bindQueue(bystander, ex, key);
    const letters = await browseAll(dlq);
    const results = await collectMoves(adapter.moveLetters(dlq, [req(letters[0], { kind: "origin" })]));
    expect(results).toEqual([
      {
        letterId: letters[0].id,
        outcome: "moved",
        destination: `default exchange, routing key "${work}" (queue "${work}")`,
        target: work,
        reason: null,
        orderingKey: null,
      },
    ]);
    await kit.waitDepth(work, 1);
    expect(await kit.depth(dlq)).toBe(1);
    expect(await kit.depth(bystander)).toBe(0);
  });

  it("an origin queue that was deleted: unroutable with mandatory, failed with the reason, the letters stay in order", async () => {
    const { dlq, work } = await dlqThroughExchange(["unroutable-0", "unroutable-1"]);
    // Another source keeps the DLQ discoverable once the origin queue is gone.
    await kit.queue(kit.name("other-source"), { "x-dead-letter-exchange": "", "x-dead-letter-routing-key": dlq });
    await (await kit.channel()).deleteQueue(work);
    const letters = await browseAll(dlq);
    const results = await collectMoves(
      adapter.moveLetters(
        dlq,
        letters.map((l) => req(l, { kind: "origin" })),
      ),
    );
    expect(results).toHaveLength(2);
    for (const r of results) {
      expect(r.outcome).toBe("failed");
      expect(r.reason).toMatch(/unroutable.*NO_ROUTE/);
      expect(r.destination).toContain(work);
    }
    expect((await browseAll(dlq)).map((l) => l.id)).toEqual(letters.map((l) => l.id));
  });

  it("a Spring-republished letter whose x-original exchange was deleted: failed with the reason, nothing lost, the channel survives", async () => {
    const ex = await kit.exchange(kit.name("spring-x"), "direct");
    const dlq = await kit.queue(kit.name("dlq"));
    // The listener's queue names the DLQ as its dead-letter target, which is how the console finds it.
    await kit.queue(kit.name("work"), { "x-dead-letter-exchange": "", "x-dead-letter-routing-key": dlq });
    const ch = await kit.channel();
    // Spring AMQP's RepublishMessageRecoverer: the failed message goes straight to the DLQ with x-original-* headers.
    for (const b of ["gone-x-0", "gone-x-1"]) {
      ch.sendToQueue(dlq, Buffer.from(b), {
        persistent: true,
        messageId: `${b}-${randomUUID()}`,
        headers: { "x-original-exchange": ex, "x-original-routingKey": "orders", "x-exception-message": "boom" },
      });
      await ch.waitForConfirms();
    }
    await kit.waitDepth(dlq, 2);
    await ch.deleteExchange(ex);
    const target = await kit.queue(kit.name("target"));
    const letters = await browseAll(dlq);
    const results = await collectMoves(
      adapter.moveLetters(dlq, [req(letters[0], { kind: "origin" }), req(letters[1], { kind: "queue", name: target })]),
    );
    const by = new Map(results.map((r) => [r.letterId, r]));
    expect(by.get(letters[0].id)).toMatchObject({
      outcome: "failed",
      destination: `exchange "${ex}", routing key "orders"`,
    });
    expect(by.get(letters[0].id)!.reason).toMatch(/no longer exists/);
    expect(by.get(letters[1].id)).toMatchObject({
      outcome: "moved",
      destination: `default exchange, routing key "${target}" (queue "${target}")`,
    });
    expect(await kit.depth(dlq)).toBe(1);
    expect(await kit.depth(target)).toBe(1);
  });

  it("a sparse selection deep in the DLQ is found (read windows chained past the skipped letters); a second call finds the next ones; the rest keep their order", async () => {
    const dlq = await kit.queue(kit.name("sparse"));
    const target = await kit.queue(kit.name("sparse-target"));
    const n = 700;
    for (let i = 0; i < n; i++) await kit.publish(dlq, { body: text(`sparse-${i}`), messageId: `sparse-${i}` });
    const own = new RabbitMqAdapter(testConfig({ dlqs: [{ name: dlq }], discover: false }), {
      allManagedHeaders: MANAGED_HEADERS,
      idleMs: 500,
    });
    try {
      const all = (await own.browse(dlq, { offset: 0, limit: 1000 })).letters;
      expect(all).toHaveLength(n);
      const job = randomUUID();
      const first = await collectMoves(
        own.moveLetters(
          dlq,
          [all[5], all[650]].map((l) => req(l, { kind: "queue", name: target }, job)),
        ),
      );
      expect(first.map((r) => r.outcome)).toEqual(["moved", "moved"]);
      const second = await collectMoves(
        own.moveLetters(
          dlq,
          [all[6], all[699]].map((l) => req(l, { kind: "queue", name: target }, job)),
        ),
      );
      expect(second.map((r) => r.outcome)).toEqual(["moved", "moved"]);
      expect(await kit.depth(target)).toBe(4);
      const left = (await own.browse(dlq, { offset: 0, limit: 1000 })).letters.map((l) => l.messageId);
      expect(left).toEqual(all.filter((_, i) => ![5, 6, 650, 699].includes(i)).map((l) => l.messageId));
    } finally {
      await own.close();
    }
  });

  it("a missing target queue is not_found before anything moves", async () => {
    const { dlq } = await kit.dlqByReject([0, 1, 2].map((i) => ({ body: text(`t-${i}`) })));
    const letters = await browseAll(dlq);
    const missing = `${kit.prefix}.no-such-queue`;
    const e = await collectMoves(
      adapter.moveLetters(dlq, [
        req(letters[0], { kind: "origin" }),
        req(letters[1], { kind: "queue", name: missing }),
      ]),
    ).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(BrokerError);
    expect((e as BrokerError).kind).toBe("not_found");
    expect((e as BrokerError).userMessage).toContain(missing);
    expect((e as BrokerError).userMessage).toMatch(/Nothing was moved/);
    expect(await kit.depth(dlq)).toBe(3);
    expect((await browseAll(dlq)).map((l) => l.id)).toEqual(letters.map((l) => l.id));
  });

  it("headers round-trip byte-exact: 300 entries, x-death, 64-bit, invalid UTF-8, every type tag, all properties", async () => {
    const dlq = await kit.queue(kit.name("dlq"));
    const work = await kit.queue(kit.name("work"), { "x-dead-letter-exchange": "", "x-dead-letter-routing-key": dlq });
    const u32 = (n: number) => {
      const b = Buffer.alloc(4);
      b.writeUInt32BE(n);
      return b;
    };
    const e = (name: string, tag: string, payload: Buffer) =>
      Buffer.concat([Buffer.from([Buffer.byteLength(name)]), Buffer.from(name), Buffer.from(tag), payload]);
    const big = Buffer.alloc(8);
    big.writeBigInt64BE(9007199254740993n);
    const ts = Buffer.alloc(8);
    ts.writeBigUInt64BE(1700000000n);
    const bad = Buffer.from([0xc3, 0x28, 0xff, 0xfe]);
    const inner = e("deep", "S", Buffer.concat([u32(bad.length), bad]));
    const exotic = [
      e("x-big", "l", big),
      e("x-bad-utf8", "S", Buffer.concat([u32(bad.length), bad])),
      e("123", "S", Buffer.concat([u32(1), Buffer.from("n")])), // an integer-like key: a JS object would move it first
      e("x-byte", "b", Buffer.from([0xfe])),
      e("x-short", "s", Buffer.from([0x80, 0x00])),
      e("x-ts", "T", ts),
      e("x-dec", "D", Buffer.from([2, 0, 0, 0x30, 0x39])),
      e("x-float", "f", Buffer.from([0x3f, 0xc0, 0, 0])),
      e("x-bool", "t", Buffer.from([1])),
      e("x-void", "V", Buffer.alloc(0)),
      e("x-bytes", "x", Buffer.concat([u32(3), Buffer.from([0, 1, 2])])),
      e("x-table", "F", Buffer.concat([u32(inner.length), inner])),
      e(
        "x-array",
        "A",
        Buffer.concat([
          u32(7),
          Buffer.from("I"),
          Buffer.from([0xff, 0xff, 0xff, 0xff]),
          Buffer.from("t"),
          Buffer.from([0]),
        ]),
      ),
      // Markers from an earlier cycle: count and ids replaced, the original message id kept.
      int32Entry(REDRIVE_HEADERS.redriveCount, 1),
      longstrEntry(REDRIVE_HEADERS.originalMessageId, "first-id"),
      longstrEntry(REDRIVE_HEADERS.replayId, "old-replay"),
    ];
    const many = Array.from({ length: 300 - exotic.length }, (_, i) => longstrEntry(`x-h-${i}`, `value ${i}`));
    const table = Buffer.concat([...exotic, ...many]);
    const sstr = (s: string) => Buffer.concat([Buffer.from([Buffer.byteLength(s)]), Buffer.from(s)]);
    const tsProp = Buffer.alloc(8);
    tsProp.writeBigUInt64BE(1700000123n);
    // content-type, content-encoding, headers, delivery-mode 1 (made persistent on redrive), priority, correlation-id, reply-to, message-id, timestamp, type, app-id, cluster-id
    const flags =
      0x8000 | 0x4000 | 0x2000 | 0x1000 | 0x0800 | 0x0400 | 0x0200 | 0x0080 | 0x0040 | 0x0020 | 0x0008 | 0x0004;
    const props = Buffer.concat([
      Buffer.from([flags >> 8, flags & 0xff]),
      sstr("application/x-custom"),
      sstr("gzip"),
      u32(table.length),
      table,
      Buffer.from([1]),
      Buffer.from([7]),
      sstr("corr-1"),
      sstr("reply.q"),
      sstr("msg-exact-1"),
      tsProp,
      sstr("order.created"),
      sstr("orders-app"),
      sstr("cluster-a"),
    ]);
    const body = Buffer.from(Array.from({ length: 256 }, (_, i) => i));
    const pub = await (async () => {
      const conn = await amqp.connect(AMQP_URL);
      const ch = await conn.createConfirmChannel();
      expect(installRawPublish(ch)).toBe(true);
      await new Promise<void>((res, rej) => publishRaw(ch, "", work, body, props, (err) => (err ? rej(err) : res())));
      await ch.close();
      await conn.close();
      return true;
    })();
    expect(pub).toBe(true);
    await kit.rejectAll(work, 1);
    await kit.waitDepth(dlq, 1);
    const [before] = await peek(dlq);
    const rawBefore = parseProperties(rawPropertiesOf(before.properties)!);
    const beforeEntries = tableEntries(rawBefore.fields.get(0x2000)!.subarray(4));
    expect(beforeEntries.map((x) => x.name)).toContain("x-death");
    expect(beforeEntries.length).toBeGreaterThanOrEqual(300);

    const [letter] = await browseAll(dlq);
    const target = await kit.queue(kit.name("target"));
    const job = randomUUID();
    const markers = markersFor(job, 2, "ignored-because-present");
    const results = await collectMoves(
      adapter.moveLetters(dlq, [
        { letterId: letter.id, sha256: letter.sha256, target: { kind: "queue", name: target }, markers },
      ]),
    );
    expect(results[0]).toMatchObject({ outcome: "moved" });
    const [after] = await peek(target);
    expect(Buffer.compare(after.content, body)).toBe(0);
    const rawAfter = parseProperties(rawPropertiesOf(after.properties)!);
    // Every property byte-exact but delivery-mode (now 2, persistent) and headers.
    for (const [flag, bytes] of rawBefore.fields) {
      if (flag === 0x2000) continue;
      if (flag === 0x1000) expect([...rawAfter.fields.get(flag)!]).toEqual([2]);
      else expect(rawAfter.fields.get(flag)?.equals(bytes), `property 0x${flag.toString(16)}`).toBe(true);
    }
    expect(rawAfter.flags).toBe(rawBefore.flags | 0x1000);
    const afterEntries = tableEntries(rawAfter.fields.get(0x2000)!.subarray(4));
    const changed = new Set<string>([
      REDRIVE_HEADERS.redriveId,
      REDRIVE_HEADERS.replayId,
      REDRIVE_HEADERS.redriveCount,
    ]);
    // Same entries in the same order, byte for byte, except the markers replaced in place; the new redrive id appended.
    const keep = (xs: typeof beforeEntries) => xs.filter((x) => !changed.has(x.name));
    expect(keep(afterEntries).map((x) => x.bytes.toString("hex"))).toEqual(
      keep(beforeEntries).map((x) => x.bytes.toString("hex")),
    );
    expect(afterEntries.map((x) => x.name)).toEqual([...beforeEntries.map((x) => x.name), REDRIVE_HEADERS.redriveId]);
    const h = arrived(after).headers;
    expect(h[REDRIVE_HEADERS.redriveCount]).toBe("2");
    expect(h[REDRIVE_HEADERS.replayId]).toBe(markers.replayId);
    expect(h[REDRIVE_HEADERS.redriveId]).toBe(job);
    expect(h[REDRIVE_HEADERS.originalMessageId]).toBe("first-id");
    expect(afterEntries.filter((x) => x.name === REDRIVE_HEADERS.redriveCount)).toHaveLength(1);
  });

  it("conservation under SIGKILL mid-move: none lost; duplicates only in the in-flight window, all tagged", async () => {
    const N = 200;
    const { dlq, source } = await kit.dlqByReject(
      Array.from({ length: N }, (_, i) => ({ body: text(`crash-${i}`), messageId: `crash-${i}` })),
    );
    const job = randomUUID();
    // tsx as a loader in this very process (its CLI would run the script in a grandchild that SIGKILL does not reach).
    const child = spawn(
      process.execPath,
      [
        "--conditions=react-server",
        "--import",
        "tsx",
        path.resolve("lib/brokers/rabbitmq/redrive-crash-child.ts"),
        dlq,
        job,
        JSON.stringify(MANAGED_HEADERS),
      ],
      { stdio: ["ignore", "pipe", "pipe"] },
    );
    let out = "";
    let err = "";
    child.stderr.on("data", (d) => (err += d));
    const exited = new Promise<number | null>((res) => child.on("exit", (code) => res(code)));
    await new Promise<void>((resolve) => {
      child.stdout.on("data", (d) => {
        out += d;
        if ((out.match(/^moved /gm) ?? []).length >= 60) resolve();
      });
      void exited.then(() => resolve());
    });
    child.kill("SIGKILL");
    await exited;
    const movedReported = (out.match(/^moved /gm) ?? []).length;
    expect(movedReported, err).toBeGreaterThanOrEqual(60);
    expect(out).not.toMatch(/^done$/m);

    // The broker returns the killed connection's unacked letters; wait until the counts settle.
    // (the killed reader was the DLQ's only consumer: its letters are back once it is gone).
    const ch = await kit.channel();
    for (let i = 0; i < 200 && (await ch.checkQueue(dlq)).consumerCount > 0; i++)
      await new Promise((r) => setTimeout(r, 50));
    expect((await ch.checkQueue(dlq)).consumerCount).toBe(0);
    const inDlq = await peek(dlq);
    const inOrigin = await peek(source);
    const seen = new Map<string, number>();
    for (const m of [...inDlq, ...inOrigin]) seen.set(m.content.toString(), (seen.get(m.content.toString()) ?? 0) + 1);
    for (let i = 0; i < N; i++) expect(seen.get(`crash-${i}`) ?? 0, `crash-${i} lost`).toBeGreaterThanOrEqual(1);
    const duplicates = [...seen.values()].filter((n) => n > 1).length;
    for (const m of inOrigin) {
      const h = (m.properties.headers ?? {}) as Record<string, unknown>;
      expect(typeof h[REDRIVE_HEADERS.replayId]).toBe("string");
      expect(h[REDRIVE_HEADERS.redriveId]).toBe(job);
    }
    // A duplicate is a letter confirmed in the origin whose ack had not reached the broker: at most the in-flight window (64) plus the letters the slow consumer held.
    expect(duplicates).toBeLessThanOrEqual(64 + 2);
    expect(inOrigin.length).toBeGreaterThanOrEqual(movedReported);
    // No letter is in the origin twice.
    expect(new Set(inOrigin.map((m) => m.content.toString())).size).toBe(inOrigin.length);
    console.info(
      `crash: ${movedReported} reported moved before SIGKILL; origin ${inOrigin.length}, DLQ ${inDlq.length}, duplicates ${duplicates}`,
    );
  });
});
