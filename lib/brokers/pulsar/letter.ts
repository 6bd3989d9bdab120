/**
 * A Pulsar message as the WebSocket API gives it → a broker-neutral `Letter`.
 *
 * Pulsar's client dead-letters a message after `maxRedeliverCount` redeliveries and adds three
 * properties: REAL_TOPIC (where it was consumed from), REAL_SUBSCRIPTION and ORIGIN_MESSAGE_ID
 * (4.0.x also writes a misspelt copy, ORIGIN_MESSAGE_IDY_TIME). It does not carry the redelivery
 * count: the connection's `maxRedeliverCount`, when configured, says what it was, and the letter
 * says that the count is inferred.
 */
import type { DeathRecord, FailureInfo, HeaderEntry, Letter } from "@/lib/brokers/contract/letter";
import { headerText, sha256Hex, timestampValue } from "@/lib/brokers/display";
import { letterIdOf, messageIdText, type MessageId } from "@/lib/brokers/pulsar/message-id";

/** A message frame of the WebSocket reader or consumer. */
export interface PulsarMessageFrame {
  messageId: string;
  payload: string;
  properties?: Record<string, string>;
  publishTime?: string;
  eventTime?: string;
  key?: string;
  redeliveryCount?: number;
}

export const REAL_TOPIC = "REAL_TOPIC";
export const REAL_SUBSCRIPTION = "REAL_SUBSCRIPTION";
export const ORIGIN_MESSAGE_ID = "ORIGIN_MESSAGE_ID";
/** Written by the retry-letter topic's `reconsumeLater`: how many times the message was retried. */
export const RECONSUME_TIMES = "RECONSUMETIMES";

const EMPTY = new Uint8Array(0);
const CORRELATION = ["correlation-id", "correlationId", "x-correlation-id"];
const CONTENT_TYPE = ["content-type", "contentType"];
const EXCEPTION_CLASS = ["exception-class", "exceptionClass", "x-exception-fqcn", "error.class", "x-exception-class"];
const EXCEPTION_MESSAGE = ["exception-message", "exceptionMessage", "x-exception-message", "error.message"];
const STACK_TRACE = ["exception-stacktrace", "x-exception-stacktrace", "error.stack"];

/** "persistent://t/ns/topic" → "t/ns/topic" (the console's name for a topic); other text as is. */
export function bareTopic(name: string): string {
  return name.replace(/^persistent:\/\//, "");
}

function iso(text: string | undefined): string | null {
  if (!text) return null;
  const d = new Date(text);
  return Number.isFinite(d.getTime()) && d.getTime() > 0 ? d.toISOString() : null;
}

export interface LetterContext {
  maxBodyBytes?: number;
  /** The connection's configured maxRedeliverCount, when known. */
  maxRedeliverCount?: number;
  /** The DLQ's configured origin, for letters without REAL_TOPIC. */
  configOrigin: string | null;
}

export function toLetter(frame: PulsarMessageFrame, id: MessageId, position: number, ctx: LetterContext): Letter {
  const whole = frame.payload ? Buffer.from(frame.payload, "base64") : Buffer.from(EMPTY);
  const max = ctx.maxBodyBytes;
  const truncated = max !== undefined && whole.byteLength > max;
  const headers: HeaderEntry[] = Object.entries(frame.properties ?? {}).map(([name, v]) => ({
    name,
    value: { t: "string", v: String(v) },
  }));
  const publishedAt = iso(frame.publishTime);
  const eventAt = iso(frame.eventTime);
  const messageId = messageIdText(id);
  const realTopic = headerText(headers, REAL_TOPIC);
  const origin = realTopic ? bareTopic(realTopic) : ctx.configOrigin;
  const subscription = headerText(headers, REAL_SUBSCRIPTION);
  // A letter that went through the retry-letter topic (`reconsumeLater`) carries how often it was
  // retried: a count Pulsar recorded. Else only the configured policy can say (and it says so).
  const reconsumed = Number(headerText(headers, RECONSUME_TIMES) ?? NaN);
  const recorded = Number.isInteger(reconsumed) && reconsumed >= 0 ? reconsumed : null;
  const inferred =
    recorded === null && ctx.maxRedeliverCount !== undefined && realTopic ? ctx.maxRedeliverCount + 1 : null;
  const count = recorded ?? inferred;
  const reason = realTopic ? "maxRedeliverCount" : null;

  const properties: HeaderEntry[] = [{ name: "message id", value: { t: "string", v: messageId } }];
  if (frame.key !== undefined && frame.key !== null)
    properties.push({ name: "key", value: { t: "string", v: frame.key } });
  if (publishedAt) properties.push({ name: "publish time", value: timestampValue(Date.parse(publishedAt)) });
  if (eventAt) properties.push({ name: "event time", value: timestampValue(Date.parse(eventAt)) });
  if (subscription) properties.push({ name: "origin subscription", value: { t: "string", v: subscription } });
  const originId = headerText(headers, ORIGIN_MESSAGE_ID);
  if (originId) properties.push({ name: "origin message id", value: { t: "string", v: originId } });
  if (recorded !== null)
    properties.push({ name: "retries (RECONSUMETIMES)", value: { t: "number", v: String(recorded) } });
  if (inferred !== null)
    properties.push({
      name: "deliveries (inferred)",
      value: {
        t: "string",
        v: `${inferred}: maxRedeliverCount ${ctx.maxRedeliverCount} + 1, from the connection's configuration; Pulsar does not record the count on a dead letter`,
      },
    });

  const failure: FailureInfo = {
    deadLetteredAt: publishedAt,
    reason,
    originQueue: origin,
    exchange: null,
    routingKeys: [],
    count,
    deliveryCount: null,
    exceptionClass: headerText(headers, ...EXCEPTION_CLASS),
    exceptionMessage: headerText(headers, ...EXCEPTION_MESSAGE),
    stackTrace: headerText(headers, ...STACK_TRACE),
  };
  const history: DeathRecord[] = realTopic
    ? [
        {
          queue: origin,
          reason,
          count,
          time: publishedAt,
          exchange: null,
          routingKeys: [],
          extra: [
            ...(subscription ? [{ name: "subscription", value: { t: "string" as const, v: subscription } }] : []),
            ...(originId ? [{ name: "origin message id", value: { t: "string" as const, v: originId } }] : []),
          ],
        },
      ]
    : [];
  return {
    id: letterIdOf(id),
    position,
    messageId,
    correlationId: headerText(headers, ...CORRELATION),
    body: truncated ? whole.subarray(0, max) : whole,
    bodySize: whole.byteLength,
    bodyTruncated: truncated,
    sha256: sha256Hex(whole),
    contentType: headerText(headers, ...CONTENT_TYPE),
    contentEncoding: null,
    properties,
    headers,
    failure,
    history,
    orderingKey: frame.key ?? null,
  };
}
