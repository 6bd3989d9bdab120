import "server-only";
/**
 * The original record of a share-group dead letter, fetched from its topic at its offset with a
 * plain Fetch (no group) while it is retained, and joined into the letter (share-dlq.ts).
 */
import { BrokerError } from "@/lib/brokers/contract/errors";
import type { Letter } from "@/lib/brokers/contract/letter";
import type { InternalRecord } from "@/lib/brokers/kafka/client";
import { readRecordAt, type GroupClientDeps } from "@/lib/brokers/kafka/consumer-group-skip";
import { toLetter } from "@/lib/brokers/kafka/letter";
import { joinOriginal, originalGoneWarning, type OriginalLookup } from "@/lib/brokers/kafka/share-dlq";

export interface OriginalRef {
  topic: string;
  partition: number;
  offset: bigint;
}

/**
 * The record at exactly `ref`, or why it is gone: below the log start (deleted by retention or
 * deleteRecords), no record at that offset (compacted away), or the topic or partition no longer
 * there. Other failures (broker down) throw.
 */
export async function lookupOriginal(
  deps: () => Promise<Pick<GroupClientDeps, "cluster" | "fetch" | "mapError">>,
  ref: OriginalRef,
): Promise<OriginalLookup> {
  try {
    const got = await readRecordAt((await deps()) as GroupClientDeps, ref);
    if (got.kind === "gone")
      return {
        kind: "gone",
        why: `deleted from the topic: partition ${ref.partition} now starts at offset ${got.start}`,
      };
    if (got.kind === "none" || got.offset !== ref.offset)
      return { kind: "gone", why: "there is no record at that offset any more" };
    return { kind: "found", record: got.record };
  } catch (e) {
    if (e instanceof BrokerError && e.kind === "not_found")
      return { kind: "gone", why: `topic "${ref.topic}" or its partition ${ref.partition} no longer exists` };
    throw e;
  }
}

/**
 * A share-group dead letter with its original joined: key, value and headers of the original (its
 * headers first, then the DLQ record's own `__dlq.errors.*`), the checksum of the original's value;
 * or, when the original is gone, the letter as the DLQ holds it with an `original_gone` warning.
 */
export function joinedLetter(
  letter: Letter,
  dlqRecord: InternalRecord,
  lookup: OriginalLookup,
  ref: OriginalRef,
  opts: { maxBodyBytes?: number },
): Letter {
  const j = joinOriginal(dlqRecord, lookup);
  if (!("original" in j) || !j.original) {
    const why = "why" in j ? j.why : "";
    return { ...letter, warnings: [...(letter.warnings ?? []), originalGoneWarning(ref, why, j.data !== null)] };
  }
  const record = (lookup as Extract<OriginalLookup, { kind: "found" }>).record as InternalRecord;
  const o = toLetter(ref.topic, ref.partition, record, 0, { maxBodyBytes: opts.maxBodyBytes, configOrigin: null });
  const properties = letter.properties
    .filter((p) => p.name !== "record data" && p.name !== "tombstone")
    .map((p) => (p.name === "key" ? o.properties.find((x) => x.name === "key")! : p));
  properties.push({
    name: "record data",
    value: { t: "string", v: `joined from the original record, still retained in "${ref.topic}"` },
  });
  const ts = o.properties.find((p) => p.name === "timestamp");
  if (ts) properties.push({ name: "original timestamp", value: ts.value });
  if (record.value === null) properties.push({ name: "tombstone", value: { t: "boolean", v: true } });
  return {
    ...letter,
    messageId: o.messageId,
    correlationId: o.correlationId,
    body: o.body,
    bodySize: o.bodySize,
    bodyTruncated: o.bodyTruncated,
    sha256: o.sha256,
    contentType: o.contentType,
    properties,
    headers: [...o.headers, ...letter.headers],
    orderingKey: o.orderingKey,
  };
}
