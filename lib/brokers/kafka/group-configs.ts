import "server-only";
import { sendRaw, uvarint, WireReader, type RawRequestBroker } from "@/lib/brokers/kafka/wire";

/**
 * Group configs (KIP-848/932 `GROUP` config resources, type 32), e.g. a share group's
 * `errors.deadletterqueue.topic.name` (KIP-1191). kafkajs 2.2.4 refuses resource type 32 before
 * sending, so this sends DescribeConfigs v4 (flexible) itself; see wire.ts.
 */

const DESCRIBE_CONFIGS = 32;
const VERSION = 4;
const GROUP_RESOURCE = 32;

export const SHARE_DLQ_TOPIC_CONFIG = "errors.deadletterqueue.topic.name";

function compactString(s: string): number[] {
  const b = Buffer.from(s, "utf8");
  return [...uvarint(b.length + 1), ...b];
}

/** DescribeConfigs v4 for these groups, asking only `keys`. */
export function encodeDescribeGroupConfigs(groups: string[], keys: string[]): Buffer {
  const parts: number[] = [0]; // request header v2: empty tagged fields
  parts.push(...uvarint(groups.length + 1));
  for (const g of groups) {
    parts.push(GROUP_RESOURCE, ...compactString(g));
    parts.push(...uvarint(keys.length + 1));
    for (const k of keys) parts.push(...compactString(k));
    parts.push(0); // tagged fields
  }
  parts.push(0, 0); // include_synonyms, include_documentation
  parts.push(0); // tagged fields
  return Buffer.from(parts);
}

export interface GroupConfigAnswer {
  group: string;
  errorCode: number;
  errorMessage: string | null;
  configs: Map<string, string | null>;
}

/** Results of a DescribeConfigs v4 response (the bytes after the correlation id). */
export function decodeDescribeConfigsResponse(payload: Buffer): GroupConfigAnswer[] {
  const r = new WireReader(payload, "DescribeConfigs");
  r.tags(); // response header v1
  r.skip(4); // throttle_time_ms
  const out: GroupConfigAnswer[] = [];
  r.array(() => {
    const errorCode = r.int16();
    const errorMessage = r.string();
    r.skip(1); // resource_type
    const group = r.string() ?? "";
    const configs = new Map<string, string | null>();
    r.array(() => {
      const name = r.string() ?? "";
      const value = r.string();
      r.skip(1 + 1 + 1); // read_only, config_source, is_sensitive
      r.array(() => {
        r.string(); // synonym name
        r.string(); // synonym value
        r.skip(1); // source
        r.tags();
      });
      r.skip(1); // config_type
      r.string(); // documentation
      r.tags();
      configs.set(name, value);
    });
    r.tags();
    out.push({ group, errorCode, errorMessage, configs });
  });
  return out;
}

/**
 * The DLQ topic each share group names (`errors.deadletterqueue.topic.name`, blank by default:
 * left out). Null when the broker has no DescribeConfigs v4 (Kafka before 3.x) or answers a group
 * with an error. Other failures throw.
 */
export async function shareGroupDlqTopics(
  broker: RawRequestBroker,
  groups: string[],
): Promise<Map<string, string> | null> {
  const range = broker.versions?.[DESCRIBE_CONFIGS];
  if (!range || range.maxVersion < VERSION) return null;
  const out = new Map<string, string>();
  if (!groups.length) return out;
  const answers = await sendRaw(
    broker,
    {
      apiKey: DESCRIBE_CONFIGS,
      apiVersion: VERSION,
      apiName: "DescribeConfigs",
      body: encodeDescribeGroupConfigs(groups, [SHARE_DLQ_TOPIC_CONFIG]),
    },
    decodeDescribeConfigsResponse,
  );
  for (const a of answers) {
    if (a.errorCode !== 0) continue;
    const topic = a.configs.get(SHARE_DLQ_TOPIC_CONFIG);
    if (topic) out.set(a.group, topic);
  }
  return out;
}
