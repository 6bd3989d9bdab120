/** A fetched Kafka record → a broker-neutral `Letter`. */
import type { HeaderEntry, Letter } from "@/lib/brokers/types";
import { bytesValue, displayText, headerText, numberValue, sha256Hex, timestampValue } from "@/lib/brokers/display";
import { decodeHeaders, failureFromHeaders, originOf, rawHeadersFromKafkajs } from "@/lib/brokers/kafka/headers";
import { letterIdOf } from "@/lib/brokers/kafka/discovery";

export interface KafkaRecordLike {
  offset: string;
  timestamp: string;
  key: Uint8Array | null;
  value: Uint8Array | null;
  headers?: Record<string, unknown>;
  batchContext?: { timestampType?: number };
}

const MESSAGE_ID_HEADERS = ["message-id", "messageId", "message_id", "x-message-id", "ce_id"];
const CORRELATION_HEADERS = ["correlation-id", "correlationId", "x-correlation-id", "kafka_correlationId"];
const CONTENT_TYPE_HEADERS = ["content-type", "contentType", "ce_datacontenttype"];

export function toLetter(
  topic: string,
  partition: number,
  record: KafkaRecordLike,
  position: number,
  opts: { maxBodyBytes?: number; configOrigin: string | null; handled?: { at: Date; outcome: "redriven" | "discarded" } },
): Letter {
  const headers = decodeHeaders(rawHeadersFromKafkajs(record.headers));
  const value = record.value ?? new Uint8Array(0);
  const max = opts.maxBodyBytes;
  const truncated = max !== undefined && value.byteLength > max;
  const tsMs = Number(record.timestamp);
  const origin = originOf(headers);
  const properties: HeaderEntry[] = [
    { name: "topic", value: { t: "string", v: topic } },
    { name: "partition", value: numberValue(partition) },
    { name: "offset", value: { t: "number", v: record.offset } },
    { name: "key", value: record.key === null ? { t: "null" } : bytesValue(record.key) },
    { name: "timestamp", value: Number.isFinite(tsMs) && tsMs >= 0 ? timestampValue(tsMs) : { t: "number", v: record.timestamp } },
  ];
  const tsType = record.batchContext?.timestampType;
  if (tsType === 0 || tsType === 1) properties.push({ name: "timestampType", value: { t: "string", v: tsType === 1 ? "LogAppendTime" : "CreateTime" } });
  if (record.value === null) properties.push({ name: "tombstone", value: { t: "boolean", v: true } });
  if (origin.convention) properties.push({ name: "convention", value: { t: "string", v: origin.convention } });
  if (origin.topic) properties.push({ name: "original topic", value: { t: "string", v: origin.topic } });
  if (origin.partition) properties.push({ name: "original partition", value: { t: "number", v: origin.partition } });
  if (origin.offset) properties.push({ name: "original offset", value: { t: "number", v: origin.offset } });
  if (origin.group) properties.push({ name: origin.convention === "connect" ? "connector" : "original consumer group", value: { t: "string", v: origin.group } });
  const keyText = record.key === null ? null : displayText(bytesValue(record.key));
  return {
    id: letterIdOf(partition, record.offset),
    position,
    messageId: headerText(headers, ...MESSAGE_ID_HEADERS),
    correlationId: headerText(headers, ...CORRELATION_HEADERS),
    // Copy a cut body so the whole fetch buffer can be collected.
    body: truncated ? Buffer.from(value.subarray(0, max)) : value,
    bodySize: value.byteLength,
    bodyTruncated: truncated,
    sha256: sha256Hex(value),
    contentType: headerText(headers, ...CONTENT_TYPE_HEADERS),
    contentEncoding: null,
    properties,
    headers,
    failure: failureFromHeaders(headers, Number.isFinite(tsMs) && tsMs >= 0 ? tsMs : null, opts.configOrigin),
    history: origin.convention
      ? [
          {
            queue: origin.topic,
            reason: origin.convention,
            count: null,
            time: Number.isFinite(tsMs) && tsMs >= 0 ? new Date(tsMs).toISOString() : null,
            exchange: null,
            routingKeys: [],
            extra: properties.filter((h) => h.name === "original partition" || h.name === "original offset" || h.name === "original consumer group" || h.name === "connector"),
          },
        ]
      : [],
    orderingKey: record.key === null ? null : (keyText ?? `base64:${Buffer.from(record.key).toString("base64")}`),
    ...(opts.handled ? { handled: { at: opts.handled.at.toISOString(), outcome: opts.handled.outcome } } : {}),
  };
}
