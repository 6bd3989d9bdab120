import "server-only";
import { sendRaw, uvarint, WireReader, type RawRequestBroker } from "@/lib/brokers/kafka/wire";

export type { RawRequestBroker } from "@/lib/brokers/kafka/wire";

/**
 * Topic ids (KIP-516, Kafka 2.8+): a topic deleted and created again under the same name gets a
 * new id, and its offsets start over. kafkajs 2.2.4 speaks Metadata only up to v6, which has no
 * ids, so this sends Metadata v10–v12 itself over a broker connection kafkajs already holds
 * (same TLS, SASL and timeouts). Those versions are "flexible": request header v2 is kafkajs's
 * header v1 plus an empty tag buffer, which the body below starts with; the response header's tag
 * buffer is the first thing the decoder skips.
 */

const METADATA = 3;
const MIN_VERSION = 10;
const MAX_VERSION = 12;
const UNKNOWN_TOPIC_OR_PARTITION = 3;

/** The Metadata request body for `version` (10–12), asking for `topics` by name only. */
export function encodeMetadataRequest(version: number, topics: string[]): Buffer {
  const parts: number[] = [0]; // request header v2: empty tagged fields
  parts.push(...uvarint(topics.length + 1));
  for (const t of topics) {
    const name = Buffer.from(t, "utf8");
    parts.push(...new Array<number>(16).fill(0)); // topic_id: zero, the name decides
    parts.push(...uvarint(name.length + 1), ...name, 0);
  }
  parts.push(0); // allow_auto_topic_creation
  if (version <= 10) parts.push(0); // include_cluster_authorized_operations (v8–v10)
  parts.push(0); // include_topic_authorized_operations
  parts.push(0); // tagged fields
  return Buffer.from(parts);
}

export interface TopicIdAnswer {
  name: string | null;
  /** null: the broker has no id for it (an all-zero id). */
  topicId: string | null;
  errorCode: number;
}

/** Topics of a Metadata v10–v12 response (the bytes after the correlation id). */
export function decodeMetadataResponse(payload: Buffer): TopicIdAnswer[] {
  const r = new WireReader(payload, "Metadata");
  r.tags(); // response header v1
  r.skip(4); // throttle_time_ms
  r.array(() => {
    r.skip(4); // node_id
    r.string(); // host
    r.skip(4); // port
    r.string(); // rack
    r.tags();
  });
  r.string(); // cluster_id
  r.skip(4); // controller_id
  const topics: TopicIdAnswer[] = [];
  r.array(() => {
    const errorCode = r.int16();
    const name = r.string();
    const topicId = r.uuid();
    r.skip(1); // is_internal
    r.array(() => {
      r.skip(2 + 4 + 4 + 4); // error_code, partition_index, leader_id, leader_epoch
      for (let k = 0; k < 3; k++) r.array(() => r.skip(4)); // replicas, isr, offline replicas
      r.tags();
    });
    r.skip(4); // topic_authorized_operations
    r.tags();
    topics.push({ errorCode, name, topicId });
  });
  return topics;
}

/**
 * The current id of each topic: a string, null when the broker keeps no topic ids (Metadata
 * before v10: Kafka before 2.8), or undefined when the topic does not exist. Other failures throw.
 */
export async function fetchTopicIds(
  broker: RawRequestBroker,
  topics: string[],
): Promise<Map<string, string | null | undefined>> {
  const out = new Map<string, string | null | undefined>();
  const range = broker.versions?.[METADATA];
  if (!range || range.maxVersion < MIN_VERSION) {
    for (const t of topics) out.set(t, null);
    return out;
  }
  const version = Math.min(range.maxVersion, MAX_VERSION);
  const body = encodeMetadataRequest(version, topics);
  const answers = await sendRaw(
    broker,
    { apiKey: METADATA, apiVersion: version, apiName: "Metadata", body },
    decodeMetadataResponse,
  );
  for (const t of topics) {
    const a = answers.find((x) => x.name === t);
    if (!a || a.errorCode === UNKNOWN_TOPIC_OR_PARTITION) out.set(t, undefined);
    else if (a.errorCode !== 0)
      throw Object.assign(new Error(`Metadata for ${t} failed with Kafka error code ${a.errorCode}`), {
        type: "METADATA_ERROR",
      });
    else out.set(t, a.topicId);
  }
  return out;
}
