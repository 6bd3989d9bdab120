// The sampler's look (`inspect`) on real SQS servers: vitals after seeding letters, the DLQ set of
// listDlqs, and each configuration finding produced by a queue set up with the fault and gone once
// SetQueueAttributes fixes it. Every test makes its own queues under a prefix of its own, so the
// request count is exact.
import { describe, expect, it } from "vitest";
import {
  DeleteQueueCommand,
  ReceiveMessageCommand,
  SendMessageCommand,
  SetQueueAttributesCommand,
} from "@aws-sdk/client-sqs";
import { BrokerError } from "@/lib/brokers/contract/errors";
import type { BrokerInspection } from "@/lib/brokers/contract/inspection";
import type { SqsConnectionConfig } from "@/lib/config";
import { SqsAdapter } from "@/lib/brokers/sqs/adapter";
import { ELASTICMQ_ENDPOINT, MOTO_ENDPOINT, SqsKit, testConfig } from "@/lib/brokers/sqs/test-kit";
import { MANAGED_HEADERS } from "@/lib/connections/managed-headers";

const text = (s: string) => new TextEncoder().encode(s);
const policy = (arn: string, maxReceiveCount: number) => JSON.stringify({ deadLetterTargetArn: arn, maxReceiveCount });

const EMULATORS = [
  { server: "ElasticMQ", endpoint: ELASTICMQ_ENDPOINT, over: {} },
  { server: "moto", endpoint: MOTO_ENDPOINT, over: { messageMoveTasks: false } },
] as const;
const MOTO = EMULATORS[1];

/** A fresh prefix, its queues and an adapter limited to them; everything deleted afterwards. */
async function withKit(
  endpoint: string,
  over: Partial<SqsConnectionConfig>,
  fn: (kit: SqsKit, adapter: SqsAdapter) => Promise<void>,
) {
  const kit = new SqsKit(endpoint);
  const adapter = new SqsAdapter(testConfig(endpoint, { queueNamePrefix: kit.prefix, ...over }), {
    allManagedHeaders: MANAGED_HEADERS,
  });
  try {
    await fn(kit, adapter);
  } finally {
    await adapter.close();
    await kit.cleanup();
  }
}

const inspect = (adapter: SqsAdapter) => adapter.inspect({ minRetentionMs: 7 * 86_400_000 });
const found = (r: BrokerInspection, code: string) => r.findings.filter((f) => f.code === code);

describe.each(EMULATORS)("SQS inspect on $server", ({ server, endpoint, over }) => {
  it("vitals: depth counts visible, in-flight and delayed letters; retention and its clock per queue type; one attribute read per queue, no receive", async () => {
    await withKit(endpoint, over, async (kit, adapter) => {
      const dlqRetention: Record<string, string> = server === "moto" ? { MessageRetentionPeriod: "1209600" } : {};
      const { dlq, dlqUrl } = await kit.dlqByRedrive([{ body: text("a") }, { body: text("b") }, { body: text("c") }], {
        maxReceiveCount: 2,
        dlqAttributes: dlqRetention,
      });
      await kit.send(dlqUrl, { body: text("d") });
      await kit.sqs.send(new SendMessageCommand({ QueueUrl: dlqUrl, MessageBody: "delayed", DelaySeconds: 60 }));
      // One letter held in flight by someone else (a consumer): still in the DLQ.
      const held = await kit.sqs.send(
        new ReceiveMessageCommand({ QueueUrl: dlqUrl, MaxNumberOfMessages: 1, VisibilityTimeout: 120 }),
      );
      expect(held.Messages).toHaveLength(1);
      const fifo = await kit.queue(kit.name("dlq", true), {
        FifoQueue: "true",
        ...(server === "moto" ? { MessageRetentionPeriod: "7200" } : {}),
      });
      await kit.queue(kit.name("work", true), { FifoQueue: "true", RedrivePolicy: policy(fifo.arn, 3) });
      for (const i of [1, 2]) await kit.send(fifo.url, { body: text(`f${i}`), groupId: `g${i}` }, true);

      const r = await inspect(adapter);
      expect(r.dlqs.map((d) => d.name)).toEqual((await adapter.listDlqs()).map((d) => d.name));
      expect(r.dlqs.map((d) => d.name)).toEqual([dlq, fifo.name].sort());
      const std = r.dlqs.find((d) => d.name === dlq)!;
      const ff = r.dlqs.find((d) => d.name === fifo.name)!;
      expect(std).toEqual({
        name: dlq,
        queueType: "standard",
        depth: 5,
        // The letter the consumer holds.
        inFlight: 1,
        enteredTotal: null,
        oldestAt: null,
        // ElasticMQ neither reports MessageRetentionPeriod nor expires messages.
        retentionMs: server === "moto" ? 1_209_600_000 : null,
        retentionClock: "enqueue",
      });
      expect(ff).toEqual({
        name: fifo.name,
        queueType: "fifo",
        depth: 2,
        inFlight: 0,
        enteredTotal: null,
        oldestAt: null,
        retentionMs: server === "moto" ? 7_200_000 : null,
        retentionClock: "arrival",
      });
      // ListQueues (one page) and GetQueueAttributes for each of the 4 queues: nothing else, no ReceiveMessage.
      expect(r.calls).toBe(1 + 4);
      expect(r.findings).toEqual([]);
    });
  });

  it("sqs.redrive_target_missing: a redrive policy naming a deleted DLQ is critical (the server drops the letters); gone once the policy names a queue that exists", async () => {
    // Neither emulator accepts a policy naming a missing queue (both answer QueueDoesNotExist), so
    // the fault is made as it happens in life: the DLQ is deleted after the policy was set.
    await withKit(endpoint, over, async (kit, adapter) => {
      const gone = await kit.queue(kit.name("dlq"));
      const source = await kit.queue(kit.name("work"), { RedrivePolicy: policy(gone.arn, 2) });
      await kit.sqs.send(new DeleteQueueCommand({ QueueUrl: gone.url }));

      const r = await inspect(adapter);
      expect(found(r, "sqs.redrive_target_missing")).toEqual([
        expect.objectContaining({ severity: "critical", object: `queue ${source.name}`, dlq: null }),
      ]);
      expect(found(r, "sqs.redrive_target_missing")[0].why).toContain(`"${gone.name}"`);
      // A deleted DLQ is no DLQ for listDlqs either.
      expect(r.dlqs).toEqual([]);
      expect((await adapter.listDlqs()).map((d) => d.name)).toEqual([]);
      // ListQueues, attributes of the source, and one GetQueueUrl proving the target missing.
      expect(r.calls).toBe(1 + 1 + 1);

      // What the server does with a letter past maxReceiveCount: it is gone, in no queue.
      await kit.send(source.url, { body: text("lost") });
      for (let i = 0; i < 4; i++)
        await kit.sqs.send(
          new ReceiveMessageCommand({ QueueUrl: source.url, MaxNumberOfMessages: 10, VisibilityTimeout: 0 }),
        );
      expect(await kit.count(source.url)).toBe(0);

      const dlq = await kit.queue(kit.name("dlq"));
      await kit.sqs.send(
        new SetQueueAttributesCommand({ QueueUrl: source.url, Attributes: { RedrivePolicy: policy(dlq.arn, 2) } }),
      );
      const fixed = await inspect(adapter);
      expect(found(fixed, "sqs.redrive_target_missing")).toEqual([]);
      expect(fixed.dlqs.map((d) => d.name)).toEqual([dlq.name]);
    });
  });

  it("sqs.max_receive_count_one: a source that dead-letters after one receive is a warning; gone at maxReceiveCount 5", async () => {
    await withKit(endpoint, over, async (kit, adapter) => {
      // A DLQ keeping letters longer than its source, so that this is the only fault.
      const dlq = await kit.queue(kit.name("dlq"), { MessageRetentionPeriod: "1209600" });
      const source = await kit.queue(kit.name("work"), { RedrivePolicy: policy(dlq.arn, 1) });

      const r = await inspect(adapter);
      expect(found(r, "sqs.max_receive_count_one")).toEqual([
        expect.objectContaining({ severity: "warning", object: `queue ${source.name}`, dlq: dlq.name }),
      ]);
      expect(found(r, "sqs.max_receive_count_one")[0].fix).toContain(`--queue-url ${source.url}`);

      await kit.sqs.send(
        new SetQueueAttributesCommand({ QueueUrl: source.url, Attributes: { RedrivePolicy: policy(dlq.arn, 5) } }),
      );
      expect((await inspect(adapter)).findings).toEqual([]);
    });
  });
});

// ElasticMQ reports no MessageRetentionPeriod, so only moto can show a retention fault.
describe("SQS inspect on moto (retention)", () => {
  it("sqs.retention_not_longer_than_source: a standard DLQ keeping letters no longer than its source is critical, naming both; gone once the DLQ keeps them 14 days", async () => {
    await withKit(MOTO.endpoint, MOTO.over, async (kit, adapter) => {
      const dlq = await kit.queue(kit.name("dlq"), { MessageRetentionPeriod: "3600" });
      const source = await kit.queue(kit.name("work"), {
        RedrivePolicy: policy(dlq.arn, 3),
        MessageRetentionPeriod: "345600",
      });

      const r = await inspect(adapter);
      const [f] = found(r, "sqs.retention_not_longer_than_source");
      expect(f).toMatchObject({ severity: "critical", object: `queue ${dlq.name}`, dlq: dlq.name });
      expect(f.why).toContain(
        `"${dlq.name}" keeps letters for 1 h (3600 s), no longer than its source "${source.name}" keeps messages (4 days (345600 s))`,
      );
      expect(f.fix).toContain("MessageRetentionPeriod=1209600");

      // Equal retention is still a fault: a letter that spent any time in the source expires early.
      await kit.sqs.send(
        new SetQueueAttributesCommand({ QueueUrl: dlq.url, Attributes: { MessageRetentionPeriod: "345600" } }),
      );
      expect(found(await inspect(adapter), "sqs.retention_not_longer_than_source")).toHaveLength(1);

      await kit.sqs.send(
        new SetQueueAttributesCommand({ QueueUrl: dlq.url, Attributes: { MessageRetentionPeriod: "1209600" } }),
      );
      const fixed = await inspect(adapter);
      expect(fixed.findings).toEqual([]);
      expect(fixed.dlqs).toEqual([expect.objectContaining({ name: dlq.name, retentionMs: 1_209_600_000 })]);
    });
  });

  it("sqs.dlq_has_redrive_policy: a DLQ with a redrive policy of its own is a warning; gone once the policy is removed", async () => {
    // ElasticMQ accepts the fault but refuses to remove a RedrivePolicy (InvalidAttributeValue for
    // "" and "{}"), so the fix, as operators make it on AWS, can only be shown on moto.
    await withKit(MOTO.endpoint, MOTO.over, async (kit, adapter) => {
      const archive = await kit.queue(kit.name("archive"), { MessageRetentionPeriod: "1209600" });
      const dlq = await kit.queue(kit.name("dlq"), {
        RedrivePolicy: policy(archive.arn, 3),
        MessageRetentionPeriod: "1209600",
      });
      await kit.queue(kit.name("work"), { RedrivePolicy: policy(dlq.arn, 4), MessageRetentionPeriod: "345600" });

      const r = await inspect(adapter);
      expect(r.findings.filter((f) => f.code !== "sqs.retention_not_longer_than_source")).toEqual([
        expect.objectContaining({
          code: "sqs.dlq_has_redrive_policy",
          severity: "warning",
          object: `queue ${dlq.name}`,
          dlq: dlq.name,
        }),
      ]);
      expect(found(r, "sqs.dlq_has_redrive_policy")[0].why).toContain(
        `moves a letter on to "${archive.name}" once it has been received more than 3 times`,
      );
      expect(r.dlqs.map((d) => d.name)).toEqual([archive.name, dlq.name].sort());

      await kit.sqs.send(new SetQueueAttributesCommand({ QueueUrl: dlq.url, Attributes: { RedrivePolicy: "" } }));
      const fixed = await inspect(adapter);
      expect(found(fixed, "sqs.dlq_has_redrive_policy")).toEqual([]);
      // The archive is no DLQ once nothing names it.
      expect(fixed.dlqs.map((d) => d.name)).toEqual([dlq.name]);
    });
  });
});

describe("SQS inspect on ElasticMQ (the DLQ set)", () => {
  it("lists what listDlqs lists: configured (missing, or outside the prefix), discovered, and safe copies; looks up only what the listing lacks", async () => {
    const outsideKit = new SqsKit(ELASTICMQ_ENDPOINT);
    const outside = await outsideKit.queue(outsideKit.name("configured-dlq"));
    const kit = new SqsKit(ELASTICMQ_ENDPOINT);
    const missing = `${kit.prefix}-configured-gone`;
    const adapter = new SqsAdapter(
      testConfig(ELASTICMQ_ENDPOINT, {
        queueNamePrefix: kit.prefix,
        dlqs: [{ name: missing }, { name: outside.name }],
      }),
      { allManagedHeaders: MANAGED_HEADERS },
    );
    try {
      const dlq = await kit.queue(kit.name("dlq"));
      await kit.queue(kit.name("work"), { RedrivePolicy: policy(dlq.arn, 3) });
      const safe = await kit.queue(`${dlq.name}-safe`);
      await kit.queue(kit.name("stray-safe"));
      await kit.send(outside.url, { body: text("x") });

      const r = await inspect(adapter);
      const listed = (await adapter.listDlqs()).map((d) => d.name);
      expect(r.dlqs.map((d) => d.name)).toEqual(listed);
      expect(listed).toEqual([dlq.name, safe.name, missing, outside.name].sort());
      expect(r.dlqs.find((d) => d.name === missing)).toMatchObject({ queueType: "unknown", depth: null });
      expect(r.dlqs.find((d) => d.name === outside.name)).toMatchObject({ queueType: "standard", depth: 1 });
      // ListQueues, 4 queues in the prefix, GetQueueUrl for both configured ones, attributes of the one that exists.
      expect(r.calls).toBe(1 + 4 + 2 + 1);
      expect(r.findings).toEqual([]);
    } finally {
      await adapter.close();
      await kit.cleanup();
      await outsideKit.cleanup();
    }
  });
});

describe("SQS inspect on a server that is down", () => {
  it("throws unavailable:broker", async () => {
    const adapter = new SqsAdapter(testConfig("http://127.0.0.1:1"), {
      allManagedHeaders: MANAGED_HEADERS,
      connectTimeoutMs: 1000,
      maxAttempts: 1,
    });
    const e = await inspect(adapter).then(
      () => null,
      (x: unknown) => x,
    );
    await adapter.close();
    expect(e).toBeInstanceOf(BrokerError);
    expect((e as BrokerError).code).toBe("unavailable:broker");
  });
});
