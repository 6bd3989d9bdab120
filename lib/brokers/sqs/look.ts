import "server-only";
/**
 * The mover's look through the DLQ: receive letters (batches of 10, a few receives at once), hold
 * every letter received, and hand back the copies of the requested MessageIds in DLQ order with the
 * letter ids a read gives them (`<id>`, `<id>~2` ...). Then, for the requests it did not find, why:
 * only a look that went through the whole DLQ while nothing else hid letters proves a letter missing.
 *
 * A round receives until every requested letter is found, the DLQ answers empty, or the depth
 * observed at the start is read (plus one short extra round for letters the approximate depth did
 * not count). The caller repeats rounds on a FIFO DLQ: SQS hands out a group's later letters only
 * once its earlier ones are deleted.
 */
import { GetQueueAttributesCommand, ReceiveMessageCommand, type Message } from "@aws-sdk/client-sqs";
import { sha256Hex } from "@/lib/brokers/display";
import { OccurrenceCounter } from "@/lib/brokers/occurrence";
import { baseIdOf, compareKeys, sortKeyOf, type SortKey } from "@/lib/brokers/sqs/letter";
import type { Holds } from "@/lib/brokers/sqs/holds";
import type { SqsMoveContext } from "@/lib/brokers/sqs/step";

/** A letter of a requested MessageId, as received and held, with the letter id a read gives it. */
export interface Seen {
  letterId: string;
  m: Message;
  key: SortKey;
  sha256: string;
}

export interface Round {
  /** Every received copy of a requested MessageId, in DLQ order. */
  seen: Seen[];
  received: number;
  /**
   * The round went through everything SQS would hand out (it answered empty, or every requested
   * letter was found), rather than stopping at its limit with letters left unread.
   */
  covered: boolean;
}

/** A letter id's MessageId part and occurrence (`<id>~3` → 3). */
function occurrenceOf(letterId: string): { base: string; nth: number } {
  const tilde = letterId.indexOf("~");
  return tilde < 0
    ? { base: letterId, nth: 1 }
    : { base: letterId.slice(0, tilde), nth: Number(letterId.slice(tilde + 1)) };
}

type LookContext = Pick<SqsMoveContext, "sqs" | "visibilityTimeout" | "receiveConcurrency" | "maxEmptyReceives">;

/**
 * One round of the look for these letter ids: receives about `limit` letters (then a short extra
 * round; a FIFO receive may bring up to 9 more), holding each in `holds`. Receive errors are thrown
 * as they came.
 */
export async function lookRound(
  c: LookContext,
  url: string,
  holds: Holds,
  letterIds: readonly string[],
  limit: number,
  fifo: boolean,
  signal?: AbortSignal,
): Promise<Round> {
  // MessageId → how many copies are needed (the highest occurrence asked for).
  const need = new Map<string, number>();
  for (const id of letterIds) {
    const { base, nth } = occurrenceOf(id);
    need.set(base, Math.max(need.get(base) ?? 0, nth));
  }
  const copies = new Map<string, Array<{ key: SortKey; m: Message }>>();
  let outstanding = need.size;

  const receive = async (want: number, waitSeconds: number, maxEmpty: number, concurrency: number) => {
    let received = 0;
    let reserved = 0;
    let empties = 0;
    let stop = false;
    let failure: unknown = null;
    const worker = async () => {
      while (!stop && !failure && outstanding > 0 && !signal?.aborted) {
        const left = want - received - reserved;
        if (left <= 0) return;
        // FIFO: a group's letters come together (up to 10) only in one receive; the rest of a group
        // whose head this look holds would stay out of reach. So FIFO receives always ask for 10.
        const n = fifo ? 10 : Math.min(10, left);
        reserved += n;
        let msgs: Message[];
        try {
          await holds.extendIfDue();
          const out = await c.sqs.send(
            new ReceiveMessageCommand({
              QueueUrl: url,
              MaxNumberOfMessages: n,
              VisibilityTimeout: c.visibilityTimeout,
              WaitTimeSeconds: waitSeconds,
              MessageSystemAttributeNames: ["All"],
              MessageAttributeNames: ["All"],
            }),
            { abortSignal: signal },
          );
          msgs = out.Messages ?? [];
        } catch (e) {
          if (signal?.aborted) stop = true;
          else failure ??= e;
          return;
        } finally {
          reserved -= n;
        }
        for (const m of msgs) {
          if (m.ReceiptHandle) holds.add(m.ReceiptHandle);
          received++;
          const base = baseIdOf(m.MessageId ?? "");
          const wanted = need.get(base);
          if (wanted === undefined) continue;
          const list = copies.get(base) ?? [];
          list.push({ key: sortKeyOf(m), m });
          copies.set(base, list);
          if (list.length === wanted) outstanding--;
        }
        if (msgs.length === 0) {
          if (++empties >= maxEmpty) stop = true;
        } else empties = 0;
        if (received >= want) stop = true;
      }
    };
    await Promise.all(Array.from({ length: Math.max(1, Math.min(concurrency, Math.ceil(want / 10))) }, worker));
    if (failure) throw failure;
    return { received, emptied: empties >= maxEmpty };
  };

  const first = await receive(limit, 1, c.maxEmptyReceives, c.receiveConcurrency);
  let received = first.received;
  let emptied = first.emptied;
  if (received >= limit && outstanding > 0 && !signal?.aborted) {
    const extra = await receive(Math.min(100, limit), 0, 1, 1);
    received += extra.received;
    emptied = extra.emptied;
  }

  const all = [...copies.values()].flat().sort((a, b) => compareKeys(a.key, b.key));
  const occ = new OccurrenceCounter();
  const seen = all.map(({ key, m }) => ({
    letterId: occ.next(baseIdOf(m.MessageId ?? "")),
    m,
    key,
    sha256: sha256Hex(Buffer.from(m.Body ?? "", "utf8")),
  }));
  return { seen, received, covered: outstanding === 0 || emptied };
}

/** Why the look did not find a letter: only "missing" is a claim that it left the DLQ. */
export type NotFound =
  | { kind: "missing" }
  | { kind: "hidden"; count: number }
  /** `behindGroups`: FIFO letters were waiting behind the group heads this look held; a fresh look may reach them. */
  | { kind: "notReached"; why: string; behindGroups?: boolean };

/**
 * Asked right after a round, while it still holds every letter it received (`held`): letters in
 * flight beyond those are hidden by another reader (a requested letter may be one of them); a round
 * that stopped at its limit left letters unread; on a FIFO DLQ, letters still visible wait behind
 * the held ones in their message groups. Otherwise what was not found is missing.
 */
export async function whyNotFound(
  c: Pick<SqsMoveContext, "sqs">,
  url: string,
  round: Round,
  held: number,
  fifo: boolean,
): Promise<NotFound> {
  let visible: number;
  let inFlight: number;
  try {
    const a =
      (
        await c.sqs.send(
          new GetQueueAttributesCommand({
            QueueUrl: url,
            AttributeNames: ["ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"],
          }),
        )
      ).Attributes ?? {};
    visible = Number(a.ApproximateNumberOfMessages ?? 0) || 0;
    inFlight = Number(a.ApproximateNumberOfMessagesNotVisible ?? 0) || 0;
  } catch {
    return { kind: "notReached", why: "SQS did not answer when asked whether another reader held letters" };
  }
  const others = inFlight - held;
  if (others > 0) return { kind: "hidden", count: others };
  if (!round.covered)
    return {
      kind: "notReached",
      why: `it stopped after ${round.received.toLocaleString("en-US")} letters, the most one call reads and holds at once`,
    };
  if (fifo && visible > 0)
    return {
      kind: "notReached",
      why: `${visible.toLocaleString("en-US")} letter${visible === 1 ? "" : "s"} waited behind earlier letters of their message groups, which SQS hands out only once the earlier ones are deleted`,
      behindGroups: true,
    };
  return { kind: "missing" };
}
