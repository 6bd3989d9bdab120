/** An amqplib delivery → a broker-neutral `Letter`. */
import type { ConsumeMessage } from "amqplib";
import type { HeaderEntry, Letter } from "@/lib/brokers/contract/letter";
import { sha256Hex, timestampValue, toDisplayValue } from "@/lib/brokers/display";
import { decodeFieldTable, fromAmqplibHeaders, headersTableFromProperties } from "@/lib/brokers/rabbitmq/field-table";
import { rawPropertiesOf } from "@/lib/brokers/rabbitmq/raw-headers";
import { failureFromHeaders, parseXDeath } from "@/lib/brokers/rabbitmq/failure";
import { baseLetterId, fingerprint, type OccurrenceCounter } from "@/lib/brokers/rabbitmq/identity";

const PROPERTY_ORDER = [
  "contentType",
  "contentEncoding",
  "deliveryMode",
  "priority",
  "correlationId",
  "replyTo",
  "expiration",
  "messageId",
  "timestamp",
  "type",
  "userId",
  "appId",
  "clusterId",
] as const;

export function decodeHeaders(msg: ConsumeMessage): HeaderEntry[] {
  const raw = rawPropertiesOf(msg.properties);
  if (raw) {
    try {
      const table = headersTableFromProperties(raw);
      return table ? decodeFieldTable(table) : [];
    } catch {
      // Fall through to amqplib's decoding.
    }
  }
  return fromAmqplibHeaders(msg.properties.headers as Record<string, unknown> | undefined);
}

export function decodeProperties(msg: ConsumeMessage): HeaderEntry[] {
  const p = msg.properties as unknown as Record<string, unknown>;
  const out: HeaderEntry[] = [];
  for (const name of PROPERTY_ORDER) {
    const v = p[name];
    if (v === undefined || v === null) continue;
    out.push({
      name,
      value: name === "timestamp" && typeof v === "number" ? timestampValue(v * 1000) : toDisplayValue(v),
    });
  }
  return out;
}

export function deliveryFacts(msg: ConsumeMessage): HeaderEntry[] {
  return [
    { name: "exchange", value: { t: "string", v: msg.fields.exchange } },
    { name: "routingKey", value: { t: "string", v: msg.fields.routingKey } },
    { name: "redelivered", value: { t: "boolean", v: msg.fields.redelivered } },
  ];
}

/** Identity only: what a read needs for letters it skips (no body or headers kept). */
export function letterIdOf(
  msg: ConsumeMessage,
  occurrences: OccurrenceCounter,
): { id: string; headers: HeaderEntry[]; properties: HeaderEntry[]; sha256: string } {
  const sha256 = sha256Hex(msg.content);
  const messageId = typeof msg.properties.messageId === "string" ? msg.properties.messageId : null;
  let headers: HeaderEntry[] = [];
  let properties: HeaderEntry[] = [];
  const base = baseLetterId(messageId, () => {
    headers = decodeHeaders(msg);
    properties = decodeProperties(msg);
    return fingerprint(sha256, properties, headers);
  });
  return { id: occurrences.next(base), headers, properties, sha256 };
}

export function toLetter(
  msg: ConsumeMessage,
  ident: { id: string; headers: HeaderEntry[]; properties: HeaderEntry[]; sha256: string },
  position: number,
  opts: { maxBodyBytes?: number; configOrigin: string | null },
): Letter {
  const headers = ident.headers.length || ident.properties.length ? ident.headers : decodeHeaders(msg);
  const properties = ident.properties.length ? ident.properties : decodeProperties(msg);
  const history = parseXDeath(headers);
  const max = opts.maxBodyBytes;
  const truncated = max !== undefined && msg.content.length > max;
  return {
    id: ident.id,
    position,
    messageId: typeof msg.properties.messageId === "string" ? msg.properties.messageId : null,
    correlationId: typeof msg.properties.correlationId === "string" ? msg.properties.correlationId : null,
    // Copy a cut body so the full delivery buffer can be collected.
    body: truncated ? Buffer.from(msg.content.subarray(0, max)) : msg.content,
    bodySize: msg.content.length,
    bodyTruncated: truncated,
    sha256: ident.sha256,
    contentType: msg.properties.contentType ?? null,
    contentEncoding: msg.properties.contentEncoding ?? null,
    properties: [...properties, ...deliveryFacts(msg)],
    headers,
    failure: failureFromHeaders(headers, history, opts.configOrigin),
    history,
    orderingKey: null,
  };
}
