/**
 * The complete copy of a received SQS letter, as a discard archives it and a repair archives its
 * original: the letter as the console shows it, and the envelope `republish` (undo) sends back from.
 */
import type { Message } from "@aws-sdk/client-sqs";
import type { LetterCopy } from "@/lib/brokers/contract/letter";
import { b64, encodeEnvelope } from "@/lib/brokers/envelope";
import { toLetter } from "@/lib/brokers/sqs/letter";

/** Everything `republish` needs besides the body: message attributes, AWSTraceHeader, FIFO ids. */
export interface SqsEnvelope {
  messageId: string | null;
  /** As ReceiveMessage gave them; BinaryValue as base64. */
  attributes: Record<string, { DataType: string; StringValue?: string; BinaryValue?: string }>;
  awsTraceHeader: string | null;
  messageGroupId: string | null;
  messageDeduplicationId: string | null;
  /** The system attributes as received (SentTimestamp, ApproximateReceiveCount, DeadLetterQueueSourceArn ...): for the record only. */
  system: Record<string, string>;
}

export function envelopeOf(m: Message): SqsEnvelope {
  const sys = (m.Attributes ?? {}) as Record<string, string>;
  const attributes: SqsEnvelope["attributes"] = {};
  for (const [k, v] of Object.entries(m.MessageAttributes ?? {})) {
    attributes[k] = {
      DataType: v.DataType ?? "String",
      ...(v.StringValue !== undefined ? { StringValue: v.StringValue } : {}),
      ...(v.BinaryValue !== undefined ? { BinaryValue: b64(v.BinaryValue) } : {}),
    };
  }
  return {
    messageId: m.MessageId ?? null,
    attributes,
    awsTraceHeader: sys.AWSTraceHeader ?? null,
    messageGroupId: sys.MessageGroupId ?? null,
    messageDeduplicationId: sys.MessageDeduplicationId ?? null,
    system: sys,
  };
}

/** `options`: how letters are shown (their origin), as the read gives them. */
export function letterCopyOf(
  m: Message,
  letterId: string,
  options: { soleSource: string | null; configOrigin: string | null } = { soleSource: null, configOrigin: null },
): LetterCopy {
  const letter = toLetter(m, letterId, 0, options);
  const envelope = encodeEnvelope<SqsEnvelope>("sqs", Buffer.from(m.Body ?? "", "utf8"), envelopeOf(m));
  return { letterId, letter, envelope };
}
