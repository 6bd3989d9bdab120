/**
 * One letter's copy on its way out of a Pulsar DLQ: the checks every mover makes the same way
 * (checksum, repair refusal, held key: move-rules.ts), the target topic, the publish, and once
 * Pulsar confirmed it the caller's archive hook, one letter at a time in DLQ order. What leaves the
 * DLQ when, and in which order, is the mover's (mover.ts).
 */
import { type HeldKeys, moveWords, OneAtATime, repairRefusal, sameChecksum } from "@/lib/brokers/move-rules";
import { BrokerError } from "@/lib/brokers/contract/errors";
import { REPAIR_HEADER, type ManagedHeaderMatcher } from "@/lib/brokers/contract/markers";
import type { MoveOptions, MoveRequest, MoveResult } from "@/lib/brokers/contract/move";
import { isAppError } from "@/lib/errors";
import { shortName, type TopicName } from "@/lib/brokers/pulsar/client";
import { copyOf, resolveTarget, withMarkers } from "@/lib/brokers/pulsar/copy";
import type { Found } from "@/lib/brokers/pulsar/entries";
import type { LetterContext } from "@/lib/brokers/pulsar/letter";
import type { MoverLink, Publisher } from "@/lib/brokers/pulsar/link";
import { decodeMessageId, messageIdText } from "@/lib/brokers/pulsar/message-id";
import { PULSAR_REPAIR_RULES, repairProperties } from "@/lib/brokers/pulsar/repair";

export const reasonOf = (e: unknown) =>
  isAppError(e) ? e.userMessage : "Pulsar refused it for a reason the console could not read.";

export function moveResult(
  letterId: string,
  orderingKey: string | null,
  outcome: MoveResult["outcome"],
  reason: string | null,
  destination: string | null = null,
  target: string | null = null,
  copyId: string | null = null,
): MoveResult {
  return { letterId, outcome, destination, target, reason, orderingKey, ...(copyId ? { copyId } : {}) };
}

/** A letter's result, sent or not: `settled` resolves once it is known ("moved": ready to acknowledge). */
export interface Sent {
  settled: Promise<MoveResult>;
}
const now = (r: MoveResult): Sent => ({ settled: Promise.resolve(r) });

/** Sends the copies of one move call; `close` once the call is done. */
export class CopySender {
  private readonly words = moveWords("move");
  private readonly archive = new OneAtATime();
  private readonly producers = new Map<string, Promise<Publisher>>();
  private readonly name: string;

  constructor(
    private readonly link: MoverLink,
    private readonly dlq: TopicName,
    private readonly ctx: LetterContext,
    private readonly held: HeldKeys,
    private readonly beforeRemove: MoveOptions["beforeRemove"],
    private readonly isManagedHeader: ManagedHeaderMatcher,
  ) {
    this.name = shortName(dlq);
  }

  /** The producer of a target topic, opened once per call; rejects when the topic cannot take the copy. */
  private producerOf(target: TopicName): Promise<Publisher> {
    const tName = shortName(target);
    let p = this.producers.get(tName);
    if (!p) {
      p = (async () => {
        if (tName === this.name) throw new BrokerError("bad_request", { userMessage: "The target is the DLQ itself." });
        if (!(await this.link.topicExists(target)))
          throw new BrokerError("not_found", {
            userMessage: `Topic ${tName} does not exist (the console does not create topics by publishing to them).`,
          });
        return this.link.producer(target);
      })();
      p.catch(() => undefined);
      this.producers.set(tName, p);
    }
    return p;
  }

  /**
   * Checks one letter and sends its copy. Resolves once the copy is sent, so the next can be sent
   * before this one is confirmed; `settled` resolves to its result once Pulsar confirmed the copy
   * and, where the caller archives, the archive hook resolved.
   */
  async send({ req, msg, letter }: Found<MoveRequest>): Promise<Sent> {
    const { words } = this;
    const key = letter.orderingKey;
    const out = (outcome: MoveResult["outcome"], reason: string | null, ...where: Array<string | null>) =>
      moveResult(req.letterId, key, outcome, reason, ...where);
    if (!sameChecksum(req.sha256, letter.sha256)) return now(out("checksum_mismatch", words.mismatch));
    if (req.repair) {
      const refusal = repairRefusal(req.repair, PULSAR_REPAIR_RULES, this.isManagedHeader);
      if (refusal) return now(out("failed", refusal));
      if (msg.id.batchIndex >= 0)
        return now(
          out(
            "failed",
            "A letter of a batched Pulsar entry cannot be repaired on its own (Pulsar removes whole entries). It stays in the DLQ.",
          ),
        );
    }
    if (this.held.isHeld(key)) return now(out("failed", this.held.reason(key, words)));
    const properties = msg.frame.properties ?? {};
    const target = resolveTarget(this.dlq, req.target, properties, this.ctx.configOrigin);
    if (typeof target === "string") return now(out("failed", `${target} It stays in the DLQ.`));
    const tName = shortName(target);
    const destination = `topic ${tName}`;
    const failed = (e: unknown) =>
      out("failed", `${reasonOf(e).replace(/\.$/, "")}. The letter stays in the DLQ.`, destination);
    let producer: Publisher;
    try {
      producer = await this.producerOf(target);
    } catch (e) {
      return now(failed(e));
    }
    const copied = withMarkers(
      req.repair ? repairProperties(properties, req.repair, req.markers.replayId) : properties,
      req,
      letter.messageId,
    );
    if (req.repair) copied[REPAIR_HEADER] = req.repair.operationId;
    const confirmed = producer.send({
      payload: req.repair?.body ?? letter.body,
      properties: copied,
      key,
      eventTime: msg.frame.eventTime ?? null,
    });
    confirmed.catch(() => undefined);
    const settled = this.archive.run(async (): Promise<MoveResult> => {
      let id: string;
      try {
        id = await confirmed;
      } catch (e) {
        return failed(e);
      }
      const copyId = req.repair ? `${tName}/${messageIdText(decodeMessageId(id))}` : null;
      try {
        await this.beforeRemove?.(copyOf(this.name, req.letterId, letter, msg.frame));
      } catch (e) {
        return out("failed", words.copyNotArchived(e, destination, copyId), destination, tName);
      }
      return out("moved", null, destination, tName, copyId);
    });
    return { settled };
  }

  async close(): Promise<void> {
    for (const p of this.producers.values()) await p.then((x) => x.close()).catch(() => undefined);
  }
}
