import "server-only";
/**
 * Undo of a discard on SQS (`BrokerAdapter.republish`): each archived letter is sent back into the
 * DLQ with SendMessage, body and message attributes exactly as received (the redrive markers among
 * them, if it carried any), its AWSTraceHeader, and on a FIFO DLQ its MessageGroupId. "published"
 * only after SendMessage succeeded. What SQS does not let a producer keep: the MessageId (SQS assigns
 * a new one, given as the result's `letterId`; the old one is in the archive), SentTimestamp,
 * ApproximateReceiveCount and DeadLetterQueueSourceArn (set anew), and the position (it goes to the
 * back). MessageDeduplicationId is new per undo (a fresh UUID, reused by the SDK's own retries of
 * the same send): the original one, or one derived from the archive row, could make SQS swallow the
 * undo as a duplicate within its 5-minute window, reporting success for a letter it did not enqueue.
 */
import { randomUUID } from "node:crypto";
import {
  SendMessageCommand,
  type MessageAttributeValue,
  type SendMessageCommandInput,
  type SQSClient,
} from "@aws-sdk/client-sqs";
import type { BrokerError } from "@/lib/brokers/contract/errors";
import type { RepublishOptions, RepublishRequest, RepublishResult } from "@/lib/brokers/contract/remove";
import { openEach, republishFailed as failed, unb64 } from "@/lib/brokers/envelope";
import { baseIdOf } from "@/lib/brokers/sqs/letter";
import type { SqsEnvelope } from "@/lib/brokers/sqs/mover";

export interface SqsRepublishContext {
  sqs: SQSClient;
  /** The DLQ's URL and whether it is FIFO; throws BrokerError not_found. */
  open(): Promise<{ url: string; fifo: boolean }>;
  err(e: unknown, queue?: string): BrokerError;
}

export async function* republishSqs(
  c: SqsRepublishContext,
  dlq: string,
  requests: RepublishRequest[],
  opts: RepublishOptions = {},
): AsyncGenerator<RepublishResult> {
  const q = await c.open();
  for (const o of openEach<SqsEnvelope>("sqs", requests, opts.signal)) {
    if ("failed" in o) {
      yield o.failed;
      continue;
    }
    const { req, env } = o;
    if (q.fifo && !env.messageGroupId) {
      yield failed(
        req,
        `"${dlq}" is a FIFO queue and this letter has no MessageGroupId (it was discarded from a standard queue). Nothing was published.`,
      );
      continue;
    }
    const input: SendMessageCommandInput = { QueueUrl: q.url, MessageBody: Buffer.from(req.body).toString("utf8") };
    const attributes: Record<string, MessageAttributeValue> = {};
    for (const [k, v] of Object.entries(env.attributes)) {
      attributes[k] = {
        DataType: v.DataType,
        ...(v.StringValue !== undefined ? { StringValue: v.StringValue } : {}),
        ...(v.BinaryValue !== undefined ? { BinaryValue: unb64(v.BinaryValue) } : {}),
      };
    }
    if (Object.keys(attributes).length) input.MessageAttributes = attributes;
    if (env.awsTraceHeader)
      input.MessageSystemAttributes = { AWSTraceHeader: { DataType: "String", StringValue: env.awsTraceHeader } };
    if (q.fifo) {
      input.MessageGroupId = env.messageGroupId!;
      input.MessageDeduplicationId = randomUUID();
    }
    try {
      const out = await c.sqs.send(new SendMessageCommand(input), { abortSignal: opts.signal });
      yield {
        id: req.id,
        outcome: "published",
        how: "published",
        letterId: out.MessageId ? baseIdOf(out.MessageId) : null,
        reason: null,
      };
    } catch (e) {
      const be = c.err(e, dlq);
      if (be.kind === "unreachable" || be.kind === "auth") throw be;
      yield failed(req, `SQS did not take it back (${be.userMessage.replace(/\.$/, "")}). It is still in the archive.`);
    }
  }
}
