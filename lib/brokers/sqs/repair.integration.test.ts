// Repair and resubmit on real SQS servers: the shared repair contract on ElasticMQ (standard and
// FIFO) and moto, on the same fixture as the redrive contract (contract-fixture.ts); then what is
// SQS's own: typed attributes and AWSTraceHeader kept, correlation-id, the 10-attribute budget, FIFO
// deduplication of a copy whose body did not change.
import { randomUUID } from "node:crypto";
import { afterAll, describe, expect, it } from "vitest";
import { SendMessageCommand, type MessageAttributeValue } from "@aws-sdk/client-sqs";
import { collectMoves, markersFor } from "@/lib/brokers/contract-suite/redrive";
import { runRepairContract } from "@/lib/brokers/contract-suite/repair";
import { REDRIVE_HEADERS, REPAIR_HEADER } from "@/lib/brokers/contract/markers";
import type { Letter } from "@/lib/brokers/contract/letter";
import type { LetterRepair, MoveRequest } from "@/lib/brokers/contract/move";
import { SqsAdapter } from "@/lib/brokers/sqs/adapter";
import { SQS_CONTRACT_SERVERS, peekAll, sqsContractFixture } from "@/lib/brokers/sqs/contract-fixture";
import { COMBINED_MARKER } from "@/lib/brokers/sqs/markers";
import { ELASTICMQ_ENDPOINT, SqsKit, testConfig } from "@/lib/brokers/sqs/test-kit";
import { MANAGED_HEADERS } from "@/lib/connections/managed-headers";

for (const { label, endpoint, over, fifo } of SQS_CONTRACT_SERVERS) {
  runRepairContract(label, sqsContractFixture(endpoint, over, fifo, { allManagedHeaders: MANAGED_HEADERS }));
}

// ---------- SQS's own ----------

const text = (s: string) => new TextEncoder().encode(s);

describe("SQS repair on ElasticMQ", () => {
  const kit = new SqsKit(ELASTICMQ_ENDPOINT);
  const adapter = new SqsAdapter(testConfig(ELASTICMQ_ENDPOINT, { queueNamePrefix: kit.prefix }), {
    allManagedHeaders: MANAGED_HEADERS,
  });
  afterAll(async () => {
    await adapter.close();
    await kit.cleanup();
  });
  const browseAll = async (dlq: string) => (await adapter.browse(dlq, { offset: 0, limit: 100 })).letters;
  const repairReq = (
    l: Letter,
    repair: Omit<LetterRepair, "operationId">,
    operationId = randomUUID(),
  ): MoveRequest => ({
    letterId: l.id,
    sha256: l.sha256,
    target: { kind: "origin" },
    markers: markersFor(operationId, 1, l.messageId),
    repair: { ...repair, operationId },
  });
  const archive = async () => undefined;

  it("typed attributes and AWSTraceHeader kept, correlation-id added, copyId is the MessageId at the origin", async () => {
    const dlq = await kit.queue(kit.name("dlq"));
    const source = await kit.queue(kit.name("work"), {
      RedrivePolicy: JSON.stringify({ deadLetterTargetArn: dlq.arn, maxReceiveCount: 1 }),
    });
    const attributes: Record<string, MessageAttributeValue> = {
      amount: { DataType: "Number", StringValue: "12345678901234567890.10" },
      blob: { DataType: "Binary.proto", BinaryValue: Uint8Array.from([0, 255, 128]) },
    };
    await kit.sqs.send(
      new SendMessageCommand({
        QueueUrl: source.url,
        MessageBody: '{"v":1}',
        MessageAttributes: attributes,
        MessageSystemAttributes: {
          AWSTraceHeader: { DataType: "String", StringValue: "Root=1-5759e988-bd862e3fe1be46a994272793" },
        },
      }),
    );
    await kit.failUntilMoved(source.url, dlq.url, 1);
    const [l] = await browseAll(dlq.name);
    const req = repairReq(l, { body: text('{"v":2}'), correlationId: "corr-2" });
    const [r] = await collectMoves(adapter.moveLetters(dlq.name, [req], { beforeRemove: archive }));
    expect(r).toMatchObject({ outcome: "moved", destination: `queue ${source.name}` });
    const [copy] = await peekAll(kit, source.url);
    expect(r.copyId).toBe(copy.MessageId);
    expect(copy.Body).toBe('{"v":2}');
    expect(copy.MessageAttributes!.amount).toMatchObject({
      DataType: "Number",
      StringValue: "12345678901234567890.10",
    });
    expect(copy.MessageAttributes!.blob.DataType).toBe("Binary.proto");
    expect(Buffer.from(copy.MessageAttributes!.blob.BinaryValue!).equals(Buffer.from([0, 255, 128]))).toBe(true);
    expect(copy.MessageAttributes!["correlation-id"]).toMatchObject({ DataType: "String", StringValue: "corr-2" });
    expect(copy.MessageAttributes![REPAIR_HEADER].StringValue).toBe(req.repair!.operationId);
    expect(copy.MessageAttributes![REDRIVE_HEADERS.originalMessageId].StringValue).toBe(l.messageId);
    expect(copy.Attributes!.AWSTraceHeader).toBe("Root=1-5759e988-bd862e3fe1be46a994272793");
    expect(await kit.count(dlq.url)).toBe(0);
  });

  it("crowded attributes: 9 own → one combined marker carrying the repair; 10 own and nothing removed → failed, the letter stays", async () => {
    const attrsN = (n: number) =>
      Object.fromEntries(Array.from({ length: n }, (_, i) => [`a${i}`, { DataType: "String", StringValue: `v${i}` }]));
    const { dlq, dlqUrl, sourceUrl } = await kit.dlqByRedrive([
      { body: text("nine"), attributes: attrsN(9) },
      { body: text("ten"), attributes: attrsN(10) },
    ]);
    const ls = await browseAll(dlq);
    const by = (b: string) => ls.find((l) => Buffer.from(l.body).toString() === b)!;
    const nine = repairReq(by("nine"), { setHeaders: { a0: "fixed" } });
    const results = await collectMoves(
      adapter.moveLetters(dlq, [nine, repairReq(by("ten"), { setHeaders: { a0: "fixed" } })], {
        beforeRemove: archive,
      }),
    );
    expect(results.map((r) => r.outcome)).toEqual(["moved", "failed"]);
    expect(results[1].reason).toMatch(/10 message attributes of its own/);
    const [copy] = await peekAll(kit, sourceUrl);
    expect(Object.keys(copy.MessageAttributes!)).toHaveLength(10);
    expect(copy.MessageAttributes!.a0.StringValue).toBe("fixed");
    expect(JSON.parse(copy.MessageAttributes![COMBINED_MARKER].StringValue!)).toMatchObject({
      repairedByOperation: nine.repair!.operationId,
      replayId: nine.markers.replayId,
    });
    expect(await kit.count(dlqUrl)).toBe(1);
  });

  it("FIFO with content-based deduplication: a copy with the original body is a new message (not swallowed), group kept", async () => {
    const { dlq, dlqUrl, sourceUrl } = await kit.dlqByRedrive(
      [{ body: text("same body"), groupId: "g-7", headers: { "x-schema": "v1" } }],
      { fifo: true, sourceAttributes: { ContentBasedDeduplication: "true" } },
    );
    const [l] = await browseAll(dlq);
    const req = repairReq(l, { setHeaders: { "x-schema": "v2" } });
    const [r] = await collectMoves(adapter.moveLetters(dlq, [req], { beforeRemove: archive }));
    expect(r).toMatchObject({ outcome: "moved", orderingKey: "g-7" });
    const [copy] = await peekAll(kit, sourceUrl);
    expect(copy.MessageId).toBe(r.copyId);
    expect(copy.Body).toBe("same body");
    expect(copy.Attributes!.MessageGroupId).toBe("g-7");
    expect(copy.Attributes!.MessageDeduplicationId).toBe(req.markers.replayId);
    expect(await kit.count(dlqUrl)).toBe(0);
  });
});
