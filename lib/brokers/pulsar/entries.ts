/**
 * Pulsar stores letters in entries, and acknowledges (removes) whole entries only: a batching
 * producer writes several letters into one entry, which then leaves the DLQ whole or not at all.
 * These helpers group a read of the DLQ by entry and name what removes one.
 */
import type { MoveVerb } from "@/lib/brokers/move-rules";
import type { Letter } from "@/lib/brokers/contract/letter";
import { encodeMessageId, letterIdOf } from "@/lib/brokers/pulsar/message-id";
import type { ReadMessage } from "@/lib/brokers/pulsar/reader";

/** A requested letter found in the DLQ: the request, the message as read, the letter it is. */
export interface Found<R> {
  req: R;
  msg: ReadMessage;
  letter: Letter;
}

/** One entry of the DLQ that answers requests: its letters as read, and the requested ones among them. */
export interface Entry<R> {
  members: ReadMessage[];
  picked: Array<Found<R>>;
  /** Acknowledged on the console's subscription by someone else since the read began: no longer in the DLQ. */
  gone: boolean;
}

/**
 * The messages of a read, entry by entry (consecutive messages of the same ledger and entry), each
 * as soon as its last letter was read (a single letter, or a batch's last index), else when the
 * next entry or the end of the read shows it ended.
 */
export async function* byEntry(messages: AsyncIterable<ReadMessage>): AsyncGenerator<ReadMessage[]> {
  let entry: ReadMessage[] = [];
  for await (const msg of messages) {
    const first = entry[0];
    if (first && (first.id.ledger !== msg.id.ledger || first.id.entry !== msg.id.entry)) {
      yield entry;
      entry = [];
    }
    entry.push(msg);
    const { batchIndex, batchSize } = msg.id;
    if (batchIndex < 0 || (batchSize > 0 && batchIndex >= batchSize - 1)) {
      yield entry;
      entry = [];
    }
  }
  if (entry.length > 0) yield entry;
}

/** The entry holds more than one letter (or one letter written as a batch). */
export const isBatch = (members: ReadMessage[]) => members.length > 1 || members[0].id.batchIndex >= 0;

/** What acknowledges a whole entry: its message id without the batch index. */
export function entryAck(members: ReadMessage[]): string {
  const id = members[0].id;
  return isBatch(members)
    ? encodeMessageId({ ledger: id.ledger, entry: id.entry, partition: id.partition })
    : members[0].frame.messageId;
}

/** Why the picked letters of an entry cannot leave without the rest of it, or null when every letter of it was picked. */
export function partialBatch(members: ReadMessage[], picked: number, verb: MoveVerb): string | null {
  if (picked === members.length) return null;
  const others = members.length - picked;
  return `This letter shares one Pulsar entry with ${others} other letter${others === 1 ? "" : "s"} not selected (a batching producer wrote them together), and Pulsar removes whole entries only. Select every letter of the entry (${members.map((m) => letterIdOf(m.id)).join(", ")}) to ${verb} it. It stays in the DLQ.`;
}

/** A letter of an entry not sent on because an earlier letter of the same entry did not leave. */
export const entryHeld = (letterId: string, verb: MoveVerb) =>
  `Not ${verb === "move" ? "moved" : "discarded"}: letter ${letterId} of the same Pulsar entry was not, and Pulsar removes whole entries only. It stays in the DLQ.`;
