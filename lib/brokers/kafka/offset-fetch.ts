import "server-only";
import { sendRaw, uvarint, WireReader, type RawRequestBroker } from "@/lib/brokers/kafka/wire";

/**
 * Committed offsets of many consumer groups in one request (OffsetFetch v8, KIP-709, Kafka 3.0+).
 * kafkajs 2.2.4 speaks OffsetFetch only up to v4, one group per request, so a sampler round would
 * cost one request per group; v8 takes every group a coordinator owns at once, which keeps a round
 * at a constant number of requests per broker. It is sent over a broker connection kafkajs already
 * holds, as topic-ids.ts sends Metadata: v8 is "flexible", so the body starts with the empty tag
 * buffer of request header v2, and the decoder first skips the response header's tag buffer.
 * v10 (Kafka 4.1) names topics by id only; v8 and v9 name them, and v9 only adds member fields an
 * admin leaves empty: v8 it is.
 */

const OFFSET_FETCH = 9;
export const OFFSET_FETCH_VERSION = 8;

/** The OffsetFetch v8 request body asking for every committed offset (topics: null) of each group. */
export function encodeOffsetFetchRequest(groupIds: string[]): Buffer {
  const parts: number[] = [0]; // request header v2: empty tagged fields
  parts.push(...uvarint(groupIds.length + 1));
  for (const g of groupIds) {
    const id = Buffer.from(g, "utf8");
    parts.push(...uvarint(id.length + 1), ...id);
    parts.push(0); // topics: null = all committed offsets of the group
    parts.push(0); // tagged fields
  }
  parts.push(0); // require_stable: false (a pending transactional commit shows the last stable one)
  parts.push(0); // tagged fields
  return Buffer.from(parts);
}

export interface CommittedOffset {
  topic: string;
  partition: number;
  /** null: no committed offset (Kafka's -1). */
  offset: bigint | null;
  /** Kafka's error code for this partition (0: none). */
  errorCode: number;
}

export interface GroupOffsets {
  groupId: string;
  /** Kafka's error code for the whole group (0: none), e.g. 16 NOT_COORDINATOR. */
  errorCode: number;
  offsets: CommittedOffset[];
}

/** Groups of an OffsetFetch v8 response (the bytes after the correlation id). */
export function decodeOffsetFetchResponse(payload: Buffer): GroupOffsets[] {
  const r = new WireReader(payload, "OffsetFetch");
  r.tags(); // response header v1
  r.skip(4); // throttle_time_ms
  const groups: GroupOffsets[] = [];
  r.array(() => {
    const groupId = r.string() ?? "";
    const offsets: CommittedOffset[] = [];
    r.array(() => {
      const topic = r.string() ?? "";
      r.array(() => {
        const partition = r.int32();
        const offset = r.int64();
        r.skip(4); // committed_leader_epoch
        r.string(); // metadata
        const errorCode = r.int16();
        r.tags();
        offsets.push({ topic, partition, offset: offset < 0n ? null : offset, errorCode });
      });
      r.tags();
    });
    const errorCode = r.int16();
    r.tags();
    groups.push({ groupId, errorCode, offsets });
  });
  return groups;
}

/** The broker can answer OffsetFetch v8 (Kafka 3.0+). */
export function supportsBatchedOffsetFetch(broker: Pick<RawRequestBroker, "versions">): boolean {
  const range = broker.versions?.[OFFSET_FETCH];
  return !!range && range.minVersion <= OFFSET_FETCH_VERSION && range.maxVersion >= OFFSET_FETCH_VERSION;
}

/**
 * Every committed offset of these groups, in one request to `broker`, which must be their
 * coordinator (a group it does not coordinate comes back with error 16, NOT_COORDINATOR).
 */
export async function fetchGroupOffsets(broker: RawRequestBroker, groupIds: string[]): Promise<GroupOffsets[]> {
  if (!groupIds.length) return [];
  const body = encodeOffsetFetchRequest(groupIds);
  return sendRaw(
    broker,
    { apiKey: OFFSET_FETCH, apiVersion: OFFSET_FETCH_VERSION, apiName: "OffsetFetch", body },
    decodeOffsetFetchResponse,
  );
}
