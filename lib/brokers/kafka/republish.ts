/**
 * Undo of a discard on Kafka (`BrokerAdapter.republish`). A discard only marked the record's offset
 * handled ("discarded"): the record itself stays in the log until retention deletes it. So:
 * - While the record is still in the log (same partition and offset, same value and key bytes), the
 *   undo clears the discard mark: the very same record is waiting again, with its offset, timestamp,
 *   key, headers and value untouched, and its letter id unchanged ("restored"). This is the faithful
 *   undo; producing a copy would put a second record in the DLT next to the original.
 * - When the record is gone (deleted by retention, or the topic was recreated and the offset now
 *   holds another record), the letter is produced into the DLT again ("published") with the
 *   idempotent producer and acks=all: same key, value and headers (in order), into its original
 *   partition when the topic still has it. Its offset is new (the result's `letterId`), and its
 *   timestamp is the time of the undo: the original one is older than the topic's retention, so a
 *   record carrying it would be deleted again at the next retention check. The original timestamp
 *   stays in the archive's envelope. A header without value cannot be written by kafkajs 2.2.4:
 *   such a letter is "failed" rather than published with changed headers.
 * Only marks of outcome "discarded" are cleared (and only those of `opts.operationId` when given);
 * a record marked "redriven" was handled by a redrive and is not made to wait again.
 */
import type { IHeaders, Message } from "kafkajs";
import { BrokerError } from "@/lib/brokers/contract/errors";
import type { RepublishOptions, RepublishRequest, RepublishResult } from "@/lib/brokers/contract/remove";
import { openEach, republishFailed as failed, unb64 } from "@/lib/brokers/envelope";
import type { InternalRecord } from "@/lib/brokers/kafka/client";
import { letterIdOf } from "@/lib/brokers/kafka/discovery";
import { sha256Of } from "@/lib/brokers/kafka/letter";
import { produceFailure, type KafkaEnvelope, type MoverDeps } from "@/lib/brokers/kafka/mover";
import { refKey } from "@/lib/brokers/kafka/handled-store";

export interface RepublishDeps
  extends Pick<
    MoverDeps,
    "connectionId" | "endpoint" | "store" | "assertDlq" | "topicKey" | "partitions" | "readRecords" | "mapError"
  > {
  /** Produces one record (acks=all, idempotent); resolves with where it was written. */
  produceRecord(topic: string, message: Message): Promise<{ partition: number; offset: string }>;
}

async function recordAt(
  deps: RepublishDeps,
  dlq: string,
  partition: number,
  offset: bigint,
): Promise<InternalRecord | null> {
  for await (const r of deps.readRecords(dlq, partition, offset, offset + 1n))
    if (r.offset === offset.toString()) return r;
  return null;
}

const sameBytes = (a: Uint8Array | null, b: Buffer | null) =>
  a === null || b === null ? a === b : Buffer.from(a.buffer, a.byteOffset, a.byteLength).equals(b);

export async function* republishKafka(
  deps: RepublishDeps,
  dlq: string,
  requests: RepublishRequest[],
  opts: RepublishOptions = {},
): AsyncGenerator<RepublishResult> {
  if (!deps.store)
    throw new BrokerError("bad_request", {
      userMessage:
        "Undoing a discard on Kafka needs the console's database (the discard is a handled mark there). Configure DATABASE_URL.",
    });
  await deps.assertDlq(dlq);
  const store = deps.store;
  for (const o of openEach<KafkaEnvelope>("kafka", requests, opts.signal)) {
    if ("failed" in o) {
      yield o.failed;
      continue;
    }
    const { req, env } = o;
    if (env.topic !== dlq) {
      yield failed(
        req,
        `This letter was discarded from "${env.topic}", not "${dlq}": put it back into the topic it came from. Nothing was published.`,
      );
      continue;
    }
    const key = env.key === null ? null : unb64(env.key);
    let states: Awaited<ReturnType<MoverDeps["partitions"]>>;
    try {
      states = await deps.partitions(dlq);
    } catch (e) {
      throw deps.mapError(e, dlq);
    }
    const offset = BigInt(env.offset);
    const range = states.find((s) => s.partition === env.partition);

    // 1. Still in the log: clear the discard mark.
    if (range && offset >= range.start && offset < range.end && store.clearDiscarded) {
      let rec: InternalRecord | null;
      try {
        rec = await recordAt(deps, dlq, env.partition, offset);
      } catch (e) {
        throw deps.mapError(e, dlq);
      }
      if (rec && sha256Of(rec.value ?? new Uint8Array(0)) === env.sha256 && sameBytes(rec.key, key)) {
        const ref = { partition: env.partition, offset };
        try {
          const topic = deps.topicKey ? await deps.topicKey(dlq) : dlq;
          const marks = await store.handledAmong(deps.connectionId, topic, [ref]);
          const mark = marks.get(refKey(ref.partition, ref.offset));
          if (mark && (mark.outcome !== "discarded" || (opts.operationId && mark.operationId !== opts.operationId))) {
            yield failed(
              req,
              `Record ${letterIdOf(ref.partition, env.offset)} is marked ${mark.outcome} by another operation (${mark.operationId}), not by this discard: it is left as it is.`,
            );
            continue;
          }
          if (mark) await store.clearDiscarded(deps.connectionId, topic, ref, opts.operationId);
        } catch (e) {
          yield failed(
            req,
            `The console's record of handled offsets could not be changed (${(e as Error).message}): the letter still shows as discarded. Try again.`,
          );
          continue;
        }
        yield {
          id: req.id,
          outcome: "published",
          how: "restored",
          letterId: letterIdOf(ref.partition, env.offset),
          reason: null,
        };
        continue;
      }
    }

    // 2. Gone from the log: produce it again.
    const headers: IHeaders = {};
    const nullHeader = env.headers.find(([, v]) => v === null);
    if (nullHeader) {
      yield failed(
        req,
        `Header "${nullHeader[0]}" has no value, which the console's Kafka client cannot write; the letter is not published with changed headers. It is still in the archive.`,
      );
      continue;
    }
    for (const [name, v] of env.headers) {
      const value = unb64(v!);
      const cur = headers[name];
      headers[name] =
        cur === undefined ? value : Array.isArray(cur) ? [...(cur as Buffer[]), value] : [cur as Buffer, value];
    }
    const message: Message = {
      key,
      value: Buffer.from(req.body.buffer, req.body.byteOffset, req.body.byteLength),
      headers,
    };
    if (range) message.partition = env.partition;
    try {
      const at = await deps.produceRecord(dlq, message);
      yield {
        id: req.id,
        outcome: "published",
        how: "published",
        letterId: letterIdOf(at.partition, at.offset),
        reason: null,
      };
    } catch (e) {
      const f = produceFailure(e, dlq, req.body.byteLength, deps.mapError);
      if (f.stop) throw f.stop;
      yield failed(req, f.reason.replace("It is still in the DLT.", "It is still in the archive."));
    }
  }
}
