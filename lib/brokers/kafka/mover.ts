/**
 * Redrive, repair and discard on Kafka (`BrokerAdapter.moveLetters`, `removeLetters`): what each
 * does to a requested DLT record once the walk (walk.ts) has fetched it and its checksum matched.
 * A redrive produces it to its target with the idempotent producer and acks=all (producer.ts); a
 * discard hands its complete copy to `beforeRemove`; only then does the walk record the offset as
 * handled in Postgres (Kafka cannot delete one record: the handled-offset ledger is the "removal").
 * The rules every broker shares (requests, checksums, held keys, the archive one letter at a time,
 * repair refusals, the operator's words) are lib/brokers/move-rules.ts.
 *
 * Decisions:
 * - Bytes: key and value are produced exactly as read; every original header is kept, in the order
 *   kafkajs decoded it (record-copy.ts), Spring's `kafka_dlt-*` and Connect's `__connect.errors.*`
 *   included, so the failure history travels with the letter. The four REDRIVE_HEADERS are replaced
 *   (one value each, never appended). A header without value (e.g. Kafka Streams' null exception
 *   message) cannot be written by kafkajs 2.2.4: such a letter is "failed" rather than sent with
 *   changed headers.
 * - Timestamp: not copied. The producer stamps the redriven record with the time of the redrive
 *   (CreateTime = now; LogAppendTime topics stamp it themselves). A copied, old timestamp would make
 *   the target's time-based retention delete the record early, and windowed consumers (Kafka
 *   Streams grace periods) drop it as late. The original time stays readable: the DLT record keeps
 *   it, and Spring's `kafka_dlt-original-timestamp` header travels with the letter.
 * - Partition: not copied. The producer's default partitioner (murmur2 of the key, the same as the
 *   Java client's) chooses, so a keyed record lands where the target's producers put that key and
 *   per-key order holds on the target. Keyless records are spread round-robin.
 * - Redrive count: the larger of the caller's count and the record's own `x-dlq-redrive-count` + 1.
 * - Original message id: the record's own `x-dlq-original-message-id` (an earlier cycle's marker)
 *   wins; else the caller's `markers.originalMessageId`; else `<dlt>-<partition>-<offset>` of this
 *   DLT record (the first DLT record the letter was in: later cycles carry the marker).
 * - Order and throughput: the walk's lanes (walk.ts): one key's records one after another in DLT
 *   order, different keys pipelined up to `MoveOptions.maxInFlight` (default the adapter's
 *   `concurrency`, 16). A discard goes strictly one record at a time.
 * - Already handled offsets are "missing" with their own reason and never produced twice by the
 *   console's own records. Other "missing" letters only after a look at their offset (look.ts).
 * - Crash window: produce acknowledged, then a crash (or a database failure) before `markHandled`:
 *   the offset is still unhandled, and a later redrive of it makes a duplicate on the target. The
 *   duplicate is recognisable: a new `x-dlq-replay-id` with the same `x-dlq-original-message-id`,
 *   and the redrive job's ledger knows the letter was published. Never a loss.
 * - Producer errors (record too large, no Write permission, ...) leave the offset unhandled and
 *   yield "failed" with a reason; a broker that stops answering also stops the move (after the
 *   letters in flight settle) with a typed `unreachable` error, so a job can pause.
 * - `MoveResult.target`: the topic the copy was produced to (also when the letter then stays
 *   because its archive or its mark failed); null when nothing was produced.
 * - Archive (`MoveOptions.beforeRemove`, required for a repair): when given, after each produce is
 *   acknowledged the original's complete copy goes to it (one letter at a time, `OneAtATime`), and
 *   only after that resolved is the offset marked handled; if it throws, the letter stays and its
 *   copy is a tagged duplicate (`moveWords.copyNotArchived`).
 * - Repair (`MoveRequest.repair`): the same walk; the copy's value and headers are edited
 *   as repair.ts says, the key, timestamp and partition rules are those above, and the original is
 *   marked "redriven" under the job's id (the outcome is a database enum without "repaired").
 *   `copyId` is `<topic>/<partition>/<offset>`.
 */
import type { IHeaders } from "kafkajs";
import { BrokerError } from "@/lib/brokers/contract/errors";
import { REPAIR_HEADER } from "@/lib/brokers/contract/markers";
import type { MoveOptions, MoveRequest, MoveResult } from "@/lib/brokers/contract/move";
import type { RemoveOptions, RemoveRequest, RemoveResult } from "@/lib/brokers/contract/remove";
import { HeldKeys, moveWords, OneAtATime, repairRefusal } from "@/lib/brokers/move-rules";
import type { InternalRecord } from "@/lib/brokers/kafka/client";
import { sha256Of } from "@/lib/brokers/kafka/letter";
import type { MoverDeps } from "@/lib/brokers/kafka/mover-deps";
import { produceFailure } from "@/lib/brokers/kafka/producer";
import { asBuffer, letterCopyOf, NullHeaderError, redriveHeaders } from "@/lib/brokers/kafka/record-copy";
import { copyIdOf, KAFKA_REPAIR_RULES, repairHeaders } from "@/lib/brokers/kafka/repair";
import {
  isShareDeadLetter,
  joinOriginal,
  originalGoneReason,
  originalRef,
  type OriginalLookup,
} from "@/lib/brokers/kafka/share-dlq";
import { kafkaTargets } from "@/lib/brokers/kafka/targets";
import { forRequestedRecords, type RecordStep } from "@/lib/brokers/kafka/walk";

// Other modules (the adapter, undo, the consumer-group skip) import these from here.
export type { MoverDeps } from "@/lib/brokers/kafka/mover-deps";
export { lazyProducer, produceFailure, readyFor, type ProducerHandle } from "@/lib/brokers/kafka/producer";
export type { KafkaEnvelope } from "@/lib/brokers/kafka/record-copy";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

function requireStore(deps: MoverDeps, what: string): void {
  if (!deps.store)
    throw new BrokerError("bad_request", {
      userMessage: `${what} on Kafka needs the console's database: a record stays in the topic and is only marked handled there. Configure DATABASE_URL.`,
    });
}

/**
 * A share-group dead letter stands for its original record: fetched while retained; the request's
 * checksum may be the DLQ record's (the index) or the joined letter's (getLetter).
 */
function shareOriginal(deps: MoverDeps): RecordStep<MoveRequest>["resolve"] {
  const originalOf = deps.originalOf;
  if (!originalOf) return undefined;
  return async (record) => {
    if (!isShareDeadLetter(record.headers)) return null;
    const ref = originalRef(record.headers);
    if (!ref) return null;
    let lookup: OriginalLookup;
    try {
      lookup = await originalOf(ref);
    } catch (e) {
      return {
        reason: `The original record (offset ${ref.offset} of partition ${ref.partition} of "${ref.topic}") could not be read: ${deps.mapError(e, ref.topic).userMessage} It is still in the DLQ.`,
        holdsBack: true,
      };
    }
    const j = joinOriginal(record, lookup);
    // Gone for good: it can never be redriven, so it holds back no later letter of its lane.
    if (j.data === null) return { reason: originalGoneReason(ref, j.why), holdsBack: false };
    return { data: j.data, checksums: [sha256Of(j.data.value ?? new Uint8Array(0))] };
  };
}

export function moveKafkaLetters(
  deps: MoverDeps,
  dlq: string,
  requests: MoveRequest[],
  opts: MoveOptions = {},
): AsyncGenerator<MoveResult> {
  const targets = kafkaTargets(deps, dlq);
  const words = moveWords("move", "DLT");
  const repairing = requests.some((r) => r.repair);
  const prepare = async () => {
    if (repairing && !opts.beforeRemove) {
      throw new BrokerError("bad_request", {
        userMessage:
          "A repair must archive the original letter before it is marked handled, and this request gave no archive. Nothing was read or published.",
      });
    }
    requireStore(deps, repairing ? "Repair" : "Redrive");
    for (const r of requests) {
      if (!UUID.test(r.markers.redriveId)) {
        throw new BrokerError("bad_request", {
          userMessage: `Redrive id "${r.markers.redriveId}" is not a UUID: Kafka records the handled offsets under the job's id.`,
        });
      }
      if (r.repair && !UUID.test(r.repair.operationId)) {
        throw new BrokerError("bad_request", {
          userMessage: `Repair operation id "${r.repair.operationId}" is not a UUID: the repaired copy carries it as ${REPAIR_HEADER}.`,
        });
      }
    }
    await deps.assertDlq(dlq);
    // Explicit targets are checked before anything moves.
    await targets.checkExplicit(requests);
  };

  const topicOf = new Map<MoveRequest, string>();
  const copyOf = new Map<MoveRequest, string | null>();
  // `beforeRemove` is called one letter at a time (MoveOptions), while produces of different keys are pipelined.
  const archive = new OneAtATime();

  /** Produces the letter's copy (repaired when asked); then, when the caller archives, hands over the original. */
  const deliver: RecordStep<MoveRequest>["deliver"] = async (req, record, at) => {
    const problem = req.repair ? repairRefusal(req.repair, KAFKA_REPAIR_RULES, deps.isManagedHeader) : null;
    if (problem) return { ok: false, reason: problem, destination: null, target: null };
    const target = await targets.resolve(req, record);
    if ("reason" in target) return { ok: false, reason: target.reason, destination: null, target: null };
    const destination = `topic ${target.topic}`;
    topicOf.set(req, target.topic);
    // A share-group dead letter publishes its original's data (at.data), never the DLQ record's own headers.
    const data = at.data ?? record;
    let headers: IHeaders;
    try {
      const source = req.repair ? repairHeaders(data.headers, req.repair, req.markers.replayId) : data.headers;
      headers = redriveHeaders(source, req.markers, { topic: dlq, partition: at.partition, offset: record.offset });
    } catch (e) {
      if (!(e instanceof NullHeaderError)) throw e;
      return {
        ok: false,
        reason: `Header "${e.header}" has no value, which the console's Kafka client cannot write; the letter is not sent with changed headers. It is still in the DLT.`,
        destination,
        target: null,
      };
    }
    if (req.repair) {
      // Once, at the end: a marker of an earlier repair is replaced, never appended.
      delete headers[REPAIR_HEADER];
      headers[REPAIR_HEADER] = req.repair.operationId;
    }
    const value = req.repair?.body !== undefined ? Buffer.from(req.repair.body) : data.value;
    // Stopped before its produce: untouched, no result.
    if (at.stopped()) return null;
    let written: { partition: number; offset: string } | undefined;
    try {
      written = await deps.produce(target.topic, { key: asBuffer(data.key), value: asBuffer(value), headers });
    } catch (e) {
      const f = produceFailure(e, target.topic, value?.byteLength ?? 0, deps.mapError);
      return { ok: false, reason: f.reason, destination, target: null, stop: f.stop ?? undefined };
    }
    const copyId = req.repair && written ? copyIdOf(target.topic, written) : null;
    if (req.repair) copyOf.set(req, copyId);
    const beforeRemove = opts.beforeRemove;
    if (!beforeRemove) return { ok: true, destination, target: target.topic };
    // The copy is confirmed; the original's complete copy goes to the archive before the walk
    // marks its offset handled. This runs even when the move was stopped meanwhile: the copy is out.
    try {
      await archive.run(() => beforeRemove(letterCopyOf(dlq, req.letterId, record, at, deps.configOrigin(dlq))));
    } catch (e) {
      return {
        ok: false,
        reason: words.copyNotArchived(e, `topic "${target.topic}"`, copyId),
        destination,
        target: target.topic,
      };
    }
    return { ok: true, destination, target: target.topic, copyId };
  };

  return forRequestedRecords<MoveRequest, MoveResult>(
    deps,
    dlq,
    requests,
    opts.signal,
    {
      verb: "move",
      prepare,
      concurrency: opts.maxInFlight ?? deps.concurrency ?? 16,
      heldKeys: new HeldKeys(opts.heldKeys ?? []),
      blocksLane: true,
      // A repaired original is marked "redriven" too: the outcome column is a database enum with no
      // "repaired" value. The mark is made under the job's id, as for a redrive; the copy carries
      // the repair operation as REPAIR_HEADER.
      mark: (req) => ({ operationId: req.markers.redriveId, outcome: "redriven" }),
      resolve: shareOriginal(deps),
      markFailed: (req, _destination, e) =>
        req.repair
          ? `The repaired copy was published to topic "${topicOf.get(req)}"${copyOf.get(req) ? ` (${copyOf.get(req)})` : ""} and the original archived, but recording the original as handled failed: it still shows as waiting in the DLT, and repairing it again would publish a second copy.`
          : `Published to topic "${topicOf.get(req)}" (replay id ${req.markers.replayId}), but recording it as handled failed (${(e as Error)?.message ?? e}): it still shows as waiting in the DLT, and redriving it again would make a duplicate.`,
      deliver,
    },
    (s) => ({
      letterId: s.req.letterId,
      outcome: s.outcome === "done" ? "moved" : s.outcome,
      destination: s.destination,
      target: s.target,
      reason: s.reason,
      orderingKey: s.orderingKey,
      ...(s.req.repair && s.outcome === "done" ? { copyId: s.copyId } : {}),
    }),
  );
}

/**
 * Discard on Kafka (`BrokerAdapter.removeLetters`): the same walk as redrive; delivering is handing
 * the complete copy to `beforeRemove`, strictly one record at a time; the removal is the handled
 * mark (outcome "discarded", under `opts.operationId`).
 */
export function removeKafkaLetters(
  deps: MoverDeps,
  dlq: string,
  requests: RemoveRequest[],
  opts: RemoveOptions,
): AsyncGenerator<RemoveResult> {
  const words = moveWords("discard", "DLT");
  const archive = new OneAtATime();
  return forRequestedRecords<RemoveRequest, RemoveResult>(
    deps,
    dlq,
    requests,
    opts.signal,
    {
      verb: "discard",
      async prepare() {
        requireStore(deps, "Discarding");
        if (!UUID.test(opts.operationId))
          throw new BrokerError("bad_request", {
            userMessage: `Operation id "${opts.operationId}" is not a UUID: Kafka records the discarded offsets under it.`,
          });
        await deps.assertDlq(dlq);
      },
      concurrency: 1,
      heldKeys: new HeldKeys(),
      blocksLane: false,
      mark: () => ({ operationId: opts.operationId, outcome: "discarded" }),
      markFailed: (_req, _d, e) =>
        `Its copy is in the archive, but recording the offset as discarded failed (${(e as Error)?.message ?? e}): it still shows as waiting in the DLT.`,
      async deliver(req, record: InternalRecord, at) {
        if (at.stopped()) return null;
        try {
          await archive.run(() =>
            opts.beforeRemove(letterCopyOf(dlq, req.letterId, record, at, deps.configOrigin(dlq))),
          );
        } catch (e) {
          return { ok: false, reason: words.notArchived(e), destination: null, target: null };
        }
        return { ok: true, destination: null, target: null };
      },
    },
    (s) => ({ letterId: s.req.letterId, outcome: s.outcome === "done" ? "removed" : s.outcome, reason: s.reason }),
  );
}
