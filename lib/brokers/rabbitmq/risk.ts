/** What reading a queue can cost, from its type and delivery limit. */
import type { ReadRisk } from "@/lib/brokers/contract/dlq";
import type { QueueKind } from "@/lib/brokers/rabbitmq/discovery";

export function readRiskOf(kind: QueueKind, queue: string): ReadRisk | null {
  if (kind.queueType === "quorum" && kind.deliveryLimit !== null) {
    const fate =
      kind.ownDeadLetterExchange !== null
        ? `dead-lettered onward to exchange "${kind.ownDeadLetterExchange || "(default)"}" and leaves this DLQ`
        : "dropped by RabbitMQ for good";
    return {
      kind: "delivery-limit",
      limit: kind.deliveryLimit,
      // Dropped, or dead-lettered through an exchange whose queues cannot be watched as one.
      onwardQueue: null,
      countField: "deliveryCount",
      // Seen by reads with limit 2: x-delivery-count absent, 1, 2, then gone (the return after the read that saw 2 dropped it).
      nextReadLosesAt: kind.deliveryLimit - 1,
      message:
        `"${queue}" is a quorum queue with a delivery limit of ${kind.deliveryLimit}${kind.defaultLimit ? " (RabbitMQ 4's default: the queue sets none)" : ""}. RabbitMQ counts every read by the console as a delivery, ` +
        `so a letter read more than ${kind.deliveryLimit} times in total is ${fate}. Letters already read or retried before are closer to the limit. ` +
        `Read only if you accept that risk; the confirmation is recorded.`,
    };
  }
  if (kind.queueType === "unknown-not-classic") {
    return {
      kind: "unknown-queue-type",
      message:
        `"${queue}" is not a classic queue (probably a quorum queue) and its delivery limit cannot be checked without the management API. ` +
        `If it has a delivery limit, each read counts as a delivery and can drop letters. Read only if you accept that risk; the confirmation is recorded.`,
    };
  }
  return null;
}
