import { describe, expect, it } from "vitest";
import {
  checkConnection,
  dlqNamesOf,
  lookupsNeeded,
  vitalsOf,
  type ConnectionScope,
  type Seen,
  type SeenQueue,
} from "@/lib/brokers/sqs/config-checks";
import type { Attrs } from "@/lib/brokers/sqs/summary";

// Attribute maps as the servers answer GetQueueAttributes "All" (taken from real answers).
const ACCOUNT = "123456789012";
const REGION = "eu-west-1";
const arn = (name: string, account = ACCOUNT, region = REGION) => `arn:aws:sqs:${region}:${account}:${name}`;
const url = (name: string) => `https://sqs.${REGION}.amazonaws.com/${ACCOUNT}/${name}`;
const policy = (target: string, maxReceiveCount: number | string = 5) =>
  JSON.stringify({ deadLetterTargetArn: target, maxReceiveCount });

/** AWS: every attribute, MessageRetentionPeriod always reported. */
function aws(name: string, over: Attrs = {}): SeenQueue {
  return {
    url: url(name),
    attrs: {
      QueueArn: arn(name),
      ApproximateNumberOfMessages: "0",
      ApproximateNumberOfMessagesNotVisible: "0",
      ApproximateNumberOfMessagesDelayed: "0",
      CreatedTimestamp: "1796191595",
      LastModifiedTimestamp: "1796191595",
      VisibilityTimeout: "30",
      MaximumMessageSize: "262144",
      MessageRetentionPeriod: "345600",
      DelaySeconds: "0",
      ReceiveMessageWaitTimeSeconds: "0",
      SqsManagedSseEnabled: "true",
      ...(name.endsWith(".fifo")
        ? {
            FifoQueue: "true",
            ContentBasedDeduplication: "false",
            DeduplicationScope: "queue",
            FifoThroughputLimit: "perQueue",
          }
        : {}),
      ...over,
    },
  };
}

/** ElasticMQ 1.7: no MessageRetentionPeriod, no MaximumMessageSize. */
function elasticmq(name: string, over: Attrs = {}): SeenQueue {
  return {
    url: `http://127.0.0.1:9324/000000000000/${name}`,
    attrs: {
      ApproximateNumberOfMessagesDelayed: "0",
      VisibilityTimeout: "30",
      ApproximateNumberOfMessagesNotVisible: "0",
      LastModifiedTimestamp: "1796191595",
      QueueArn: `arn:aws:sqs:us-east-1:000000000000:${name}`,
      CreatedTimestamp: "1796191595",
      ApproximateNumberOfMessages: "0",
      ReceiveMessageWaitTimeSeconds: "0",
      DelaySeconds: "0",
      ...over,
    },
  };
}

const seen = (listed: SeenQueue[], lookedUp: Array<[string, SeenQueue | null]> = []): Seen => ({
  listed: new Map(listed.map((q) => [q.url.split("/").pop()!, q])),
  lookedUp: new Map(lookedUp),
});
const scope = (over: Partial<ConnectionScope> = {}): ConnectionScope => ({ configured: [], discover: true, ...over });

describe("the DLQ set (the rules of listDlqs)", () => {
  it("takes configured DLQs (even missing), existing redrive targets within the prefix, and safe copies of counted DLQs", () => {
    const s = seen(
      [
        aws("orders"),
        aws("orders-work", { RedrivePolicy: policy(arn("orders-dlq")) }),
        aws("orders-dlq"),
        aws("orders-dlq-safe"),
        aws("orders-pay", { RedrivePolicy: policy(arn("orders-gone")) }),
        aws("orders-out", { RedrivePolicy: policy(arn("billing-dlq")) }),
        aws("orders-stray-safe"),
      ],
      [
        ["orders-gone", null],
        ["billing-dlq", aws("billing-dlq")],
        ["orders-configured", null],
        ["audit-dlq", aws("audit-dlq")],
      ],
    );
    const names = dlqNamesOf(scope({ configured: ["orders-configured", "audit-dlq"], queueNamePrefix: "orders-" }), s);
    // orders-gone does not exist, billing-dlq is outside the prefix, orders-stray is no DLQ.
    expect(names).toEqual(["audit-dlq", "orders-configured", "orders-dlq", "orders-dlq-safe"]);
  });

  it("without discovery, only the configured DLQs", () => {
    const s = seen([aws("work", { RedrivePolicy: policy(arn("dlq")) }), aws("dlq"), aws("dlq-safe"), aws("mine")]);
    expect(dlqNamesOf(scope({ discover: false, configured: ["mine"] }), s)).toEqual(["mine"]);
  });

  it("looks up by name only configured DLQs and same-account redrive targets that the listing did not give", () => {
    const listed = seen([
      aws("app-work", { RedrivePolicy: policy(arn("app-dlq")) }),
      aws("app-dlq"),
      aws("app-pay", { RedrivePolicy: policy(arn("app-missing")) }),
      aws("app-x", { RedrivePolicy: policy(arn("shared-dlq", "999999999999")) }),
      aws("app-y", { RedrivePolicy: policy(arn("west-dlq", ACCOUNT, "us-west-2")) }),
      aws("app-z", { RedrivePolicy: "not json" }),
    ]).listed;
    expect(lookupsNeeded(scope({ configured: ["app-dlq", "elsewhere"] }), listed)).toEqual([
      "app-missing",
      "elsewhere",
    ]);
    expect(lookupsNeeded(scope({ discover: false, configured: ["elsewhere"] }), listed)).toEqual(["elsewhere"]);
  });
});

describe("vitals", () => {
  it("depth counts visible, in-flight and delayed letters; retention from MessageRetentionPeriod; the clock per queue type", () => {
    expect(
      vitalsOf(
        "dlq",
        aws("dlq", {
          ApproximateNumberOfMessages: "7",
          ApproximateNumberOfMessagesNotVisible: "2",
          ApproximateNumberOfMessagesDelayed: "1",
          MessageRetentionPeriod: "1209600",
        }).attrs,
      ),
    ).toEqual({
      name: "dlq",
      queueType: "standard",
      depth: 10,
      inFlight: 2,
      enteredTotal: null,
      oldestAt: null,
      retentionMs: 1_209_600_000,
      retentionClock: "enqueue",
    });
    expect(vitalsOf("dlq.fifo", aws("dlq.fifo", { ApproximateNumberOfMessages: "3" }).attrs)).toMatchObject({
      queueType: "fifo",
      depth: 3,
      retentionMs: 345_600_000,
      retentionClock: "arrival",
    });
  });

  it("a server that reports no retention (ElasticMQ) gives null, and a missing configured DLQ gives nothing but its type from the name", () => {
    expect(vitalsOf("e", elasticmq("e", { ApproximateNumberOfMessages: "4" }).attrs)).toMatchObject({
      depth: 4,
      retentionMs: null,
      retentionClock: "enqueue",
    });
    expect(vitalsOf("gone.fifo", null)).toEqual({
      name: "gone.fifo",
      queueType: "unknown",
      depth: null,
      inFlight: null,
      enteredTotal: null,
      oldestAt: null,
      retentionMs: null,
      retentionClock: "arrival",
    });
    expect(vitalsOf("odd", { ApproximateNumberOfMessagesNotVisible: "3" }).depth).toBeNull();
  });
});

describe("findings", () => {
  const codes = (r: ReturnType<typeof checkConnection>) => r.findings.map((f) => `${f.code} ${f.object} ${f.dlq}`);

  it("a standard DLQ keeping letters no longer than a source: critical, naming both queues and periods", () => {
    const s = seen([
      aws("orders", { RedrivePolicy: policy(arn("orders-dlq")), MessageRetentionPeriod: "1209600" }),
      aws("orders-eu", { RedrivePolicy: policy(arn("orders-dlq")), MessageRetentionPeriod: "345600" }),
      aws("orders-us", { RedrivePolicy: policy(arn("orders-dlq")), MessageRetentionPeriod: "60" }),
      aws("orders-dlq", { MessageRetentionPeriod: "345600" }),
    ]);
    const r = checkConnection(scope(), s);
    expect(codes(r)).toEqual(["sqs.retention_not_longer_than_source queue orders-dlq orders-dlq"]);
    const f = r.findings[0];
    expect(f.severity).toBe("critical");
    expect(f.why).toContain(
      `"orders-dlq" keeps letters for 4 days (345600 s), no longer than its source "orders" keeps messages (14 days (1209600 s)) (and 1 more source: "orders-eu")`,
    );
    expect(f.why).toMatch(/original enqueue time/);
    // The longest source already has the SQS maximum: the DLQ cannot exceed it.
    expect(f.fix).toContain('lower the MessageRetentionPeriod of "orders"');
    expect(f.fix).toContain(
      `aws sqs set-queue-attributes --queue-url ${url("orders-dlq")} --attributes MessageRetentionPeriod=1209600`,
    );
  });

  it("no retention finding for a longer DLQ retention, a FIFO DLQ, or a server that does not report retention", () => {
    const ok = seen([
      aws("a", { RedrivePolicy: policy(arn("a-dlq")), MessageRetentionPeriod: "345600" }),
      aws("a-dlq", { MessageRetentionPeriod: "345601" }),
    ]);
    expect(checkConnection(scope(), ok).findings).toEqual([]);
    const fifo = seen([
      aws("b.fifo", { RedrivePolicy: policy(arn("b-dlq.fifo")), MessageRetentionPeriod: "1209600" }),
      aws("b-dlq.fifo", { MessageRetentionPeriod: "60" }),
    ]);
    expect(checkConnection(scope(), fifo).findings).toEqual([]);
    const e = seen([
      elasticmq("c", {
        RedrivePolicy: JSON.stringify({
          deadLetterTargetArn: "arn:aws:sqs:us-east-1:000000000000:c-dlq",
          maxReceiveCount: 3,
        }),
      }),
      elasticmq("c-dlq"),
    ]);
    expect(checkConnection(scope(), e).findings).toEqual([]);
  });

  it("a DLQ with a redrive policy of its own: warning on the DLQ, naming where letters go", () => {
    const s = seen([
      aws("w", { RedrivePolicy: policy(arn("w-dlq"), 4), MessageRetentionPeriod: "60" }),
      aws("w-dlq", { RedrivePolicy: policy(arn("w-archive"), 3) }),
      aws("w-archive", { MessageRetentionPeriod: "1209600" }),
    ]);
    const r = checkConnection(scope(), s);
    expect(codes(r)).toEqual(["sqs.dlq_has_redrive_policy queue w-dlq w-dlq"]);
    expect(r.findings[0]).toMatchObject({ severity: "warning" });
    expect(r.findings[0].why).toContain(
      `moves a letter on to "w-archive" once it has been received more than 3 times from "w-dlq"`,
    );
    expect(r.findings[0].fix).toContain(
      `aws sqs set-queue-attributes --queue-url ${url("w-dlq")} --attributes RedrivePolicy=""`,
    );
    expect(r.dlqs.map((d) => d.name)).toEqual(["w-archive", "w-dlq"]);
  });

  it("a redrive policy naming a queue that does not exist: critical on the source; the DLQ named only when it is a listed one", () => {
    const s = seen(
      [aws("p", { RedrivePolicy: policy(arn("p-dlq"), "4") }), aws("q", { RedrivePolicy: policy(arn("q-dlq")) })],
      [
        ["p-dlq", null],
        ["q-dlq", null],
      ],
    );
    const r = checkConnection(scope({ configured: ["q-dlq"] }), s);
    expect(codes(r)).toEqual(["sqs.redrive_target_missing queue p null", "sqs.redrive_target_missing queue q q-dlq"]);
    expect(r.findings[0].severity).toBe("critical");
    expect(r.findings[0].why).toContain(`names the DLQ "p-dlq" (${arn("p-dlq")}), which does not exist`);
    expect(r.findings[0].why).toContain("received 4 times");
    expect(r.findings[0].fix).toContain("aws sqs create-queue --queue-name p-dlq");
    expect(r.findings[0].fix).toContain(
      `--queue-url ${url("p")} --attributes '{"RedrivePolicy":"{\\"deadLetterTargetArn\\":\\"<ARN of the DLQ>\\",\\"maxReceiveCount\\":\\"4\\"}"}'`,
    );
    expect(r.dlqs).toEqual([expect.objectContaining({ name: "q-dlq", queueType: "unknown" })]);
  });

  it("no missing-target finding for a target in another account, one not looked up, or (without discovery) one not configured", () => {
    const s = seen(
      [
        aws("x", { RedrivePolicy: policy(arn("x-dlq", "999999999999")) }),
        aws("y", { RedrivePolicy: policy(arn("y-dlq")) }),
      ],
      [["y-dlq", null]],
    );
    expect(checkConnection(scope({ discover: false }), s).findings).toEqual([]);
    expect(codes(checkConnection(scope(), s))).toEqual(["sqs.redrive_target_missing queue y null"]);
  });

  it("maxReceiveCount 1: warning on the source, with the policy to set", () => {
    const s = seen([
      aws("m", { RedrivePolicy: policy(arn("m-dlq"), 1), MessageRetentionPeriod: "60" }),
      aws("n", { RedrivePolicy: policy(arn("m-dlq"), 2), MessageRetentionPeriod: "60" }),
      aws("m-dlq"),
    ]);
    const r = checkConnection(scope(), s);
    expect(codes(r)).toEqual(["sqs.max_receive_count_one queue m m-dlq"]);
    expect(r.findings[0].severity).toBe("warning");
    expect(r.findings[0].why).toMatch(/single receive \(maxReceiveCount 1\)/);
    expect(r.findings[0].fix).toContain(
      `--queue-url ${url("m")} --attributes '{"RedrivePolicy":"{\\"deadLetterTargetArn\\":\\"${arn("m-dlq")}\\",\\"maxReceiveCount\\":\\"5\\"}"}'`,
    );
  });

  it("one fault of each kind at once, ordered by code and object", () => {
    const s = seen(
      [
        aws("s1", { RedrivePolicy: policy(arn("d1"), 1), MessageRetentionPeriod: "1209600" }),
        aws("d1", { RedrivePolicy: policy(arn("d2")), MessageRetentionPeriod: "86400" }),
        aws("d2", { MessageRetentionPeriod: "1209600" }),
        aws("s2", { RedrivePolicy: policy(arn("gone")) }),
      ],
      [["gone", null]],
    );
    expect(codes(checkConnection(scope(), s))).toEqual([
      "sqs.dlq_has_redrive_policy queue d1 d1",
      "sqs.max_receive_count_one queue s1 d1",
      "sqs.redrive_target_missing queue s2 null",
      "sqs.retention_not_longer_than_source queue d1 d1",
    ]);
  });
});
