/**
 * What a redriven (or repaired) SQS letter is sent as, and where its origin is. Pure: no client.
 *
 * The body is sent exactly as received, with the letter's message attributes, AWSTraceHeader (the
 * only system attribute SendMessage accepts) and the markers (markers.ts). SentTimestamp cannot be
 * kept: SQS sets it on every send.
 *
 * FIFO targets. MessageGroupId is kept from the letter. MessageDeduplicationId is NOT the letter's
 * old one (SQS would swallow the redrive as a duplicate of the original for 5 minutes, also under
 * content-based deduplication since the body is the same): it is derived from the replay id (the
 * replay id itself when it is a valid id, else its SHA-256), so an SDK retry of the same send is
 * still deduplicated by SQS, while every new replay is a new message. A FIFO letter is not sent to
 * a standard queue (its group order and deduplication would be lost) and a standard letter cannot
 * go to a FIFO queue (it has no MessageGroupId): both are refused with a reason.
 *
 * Origin. DeadLetterQueueSourceArn when the server sets it (per letter); else the one queue whose
 * redrive policy names the DLQ (ListDeadLetterSourceQueues) or the config's `origin` when these
 * agree on a single queue; several candidates and no DeadLetterQueueSourceArn: pick a target.
 */
import type { Message, MessageSystemAttributeValue, SendMessageBatchRequestEntry } from "@aws-sdk/client-sqs";
import type { LetterRepair } from "@/lib/brokers/contract/move";
import type { RedriveMarkers } from "@/lib/brokers/contract/markers";
import { sha256Hex } from "@/lib/brokers/display";
import { readMarkers, withMarkers } from "@/lib/brokers/sqs/markers";
import { repairedAttributes, repairedBodyText } from "@/lib/brokers/sqs/repair";

const DEDUP_ID = /^[A-Za-z0-9!"#$%&'()*+,\-./:;<=>?@[\\\]^_`{|}~]{1,128}$/;

/** MessageDeduplicationId of a redriven FIFO letter: derived from the replay id, never the original's. */
export function dedupIdFor(replayId: string): string {
  return DEDUP_ID.test(replayId) ? replayId : sha256Hex(`x-dlq-replay-id:${replayId}`);
}

/** `arn:aws:sqs:region:account:name` → parts, or null. */
export function parseQueueArn(arn: string | undefined): { region: string; account: string; name: string } | null {
  const m = arn ? /^arn:[^:]+:sqs:([^:]*):([^:]*):(.+)$/.exec(arn) : null;
  return m ? { region: m[1], account: m[2], name: m[3] } : null;
}

/** The origin of one letter, by name (and account when it differs), or why there is none. */
export function originFor(
  msg: Message,
  candidates: string[],
  dlqArn: { region: string; account: string } | null,
  region: string,
): { name: string; account?: string } | { reason: string } {
  const sys = (msg.Attributes ?? {}) as Record<string, string>;
  const arn = parseQueueArn(sys.DeadLetterQueueSourceArn);
  if (arn) {
    const here = dlqArn?.region || region;
    if (arn.region && arn.region !== here) {
      return {
        reason: `This letter came from "${arn.name}" in region ${arn.region}, but this connection works in ${here}: pick a target in ${here}, or redrive it from a connection for ${arn.region}.`,
      };
    }
    return dlqArn && arn.account && arn.account !== dlqArn.account
      ? { name: arn.name, account: arn.account }
      : { name: arn.name };
  }
  if (candidates.length === 1) return { name: candidates[0] };
  if (candidates.length === 0) {
    return {
      reason:
        "No origin is known for this letter: SQS did not record its source queue (no DeadLetterQueueSourceArn), no queue's redrive policy names this DLQ and the config names no origin. Pick a target.",
    };
  }
  return {
    reason: `${candidates.length} queues may have sent this letter here (${candidates.slice(0, 5).join(", ")}${candidates.length > 5 ? ", …" : ""}) and SQS did not record which one (no DeadLetterQueueSourceArn). Pick a target.`,
  };
}

/** The SendMessage fields of a redriven (or, with `repair`, repaired) letter, or why it cannot be sent to this target. Pure. */
export function sendEntryFor(
  msg: Message,
  markers: RedriveMarkers,
  target: { name: string; fifo: boolean },
  dlqFifo: boolean,
  repair?: LetterRepair,
): { entry: Omit<SendMessageBatchRequestEntry, "Id">; form: "separate" | "combined" } | { reason: string } {
  const sys = (msg.Attributes ?? {}) as Record<string, string>;
  const group = sys.MessageGroupId;
  if (target.fifo && !group) {
    return {
      reason: `"${target.name}" is a FIFO queue and this letter has no MessageGroupId (it comes from a standard queue): pick a standard queue as the target.`,
    };
  }
  if (!target.fifo && dlqFifo) {
    return {
      reason: `"${target.name}" is a standard queue and this letter comes from a FIFO queue: its group order and deduplication would be lost. Pick a FIFO queue as the target.`,
    };
  }
  let marked: ReturnType<typeof withMarkers>;
  let body = msg.Body ?? "";
  if (repair?.body !== undefined) {
    const b = repairedBodyText(repair.body);
    if ("reason" in b) return b;
    body = b.text;
  }
  // The first message id a letter had wins, for a repaired copy too (as on RabbitMQ and Kafka): SQS
  // gives every send a new MessageId, and the chain of copies keeps pointing at the message that
  // first died. The archive row of this repair is found by its operation id.
  const existing = readMarkers(msg.MessageAttributes);
  const originalMessageId = existing.originalMessageId ?? markers.originalMessageId ?? msg.MessageId ?? null;
  if (repair) {
    const attrs = repairedAttributes(msg, repair);
    marked =
      "reason" in attrs
        ? { error: attrs.reason }
        : withMarkers(attrs.attributes, { ...markers, originalMessageId, repairedByOperation: repair.operationId });
  } else {
    marked = withMarkers(msg.MessageAttributes, { ...markers, originalMessageId });
  }
  if ("error" in marked) return { reason: marked.error };
  const entry: Omit<SendMessageBatchRequestEntry, "Id"> = { MessageBody: body };
  if (Object.keys(marked.attributes).length) entry.MessageAttributes = marked.attributes;
  if (sys.AWSTraceHeader)
    entry.MessageSystemAttributes = {
      AWSTraceHeader: { DataType: "String", StringValue: sys.AWSTraceHeader } satisfies MessageSystemAttributeValue,
    };
  if (target.fifo) {
    entry.MessageGroupId = group;
    entry.MessageDeduplicationId = dedupIdFor(markers.replayId);
  }
  return { entry, form: marked.form };
}

/** Bytes SQS counts toward a message's size: body plus attribute names, types and values. */
export function entrySize(e: Omit<SendMessageBatchRequestEntry, "Id">): number {
  let n = Buffer.byteLength(e.MessageBody ?? "", "utf8");
  for (const [k, v] of Object.entries(e.MessageAttributes ?? {})) {
    n +=
      Buffer.byteLength(k) +
      Buffer.byteLength(v.DataType ?? "") +
      (v.StringValue !== undefined ? Buffer.byteLength(v.StringValue) : 0) +
      (v.BinaryValue?.byteLength ?? 0);
  }
  return n;
}
