/**
 * RabbitMQ failure metadata → broker-neutral `DeathRecord[]` and `FailureInfo`. Reads the x-death
 * array RabbitMQ maintains (most recent first, one entry per queue+reason with a count), the
 * x-first-death-* / x-last-death-* headers, x-delivery-count (quorum queues), and the headers that
 * Spring AMQP's RepublishMessageRecoverer and similar recoverers add.
 */
import type { DeathRecord, DisplayValue, FailureInfo, HeaderEntry } from "@/lib/brokers/contract/letter";
import { displayNumber, displayText, findHeader, headerText } from "@/lib/brokers/display";
import { exceptionClassFromStack } from "@/lib/brokers/failure-text";

const DEATH_FIELDS = new Set(["queue", "reason", "count", "time", "exchange", "routing-keys"]);

function tableGet(entries: Array<[string, DisplayValue]>, key: string): DisplayValue | undefined {
  return entries.find(([k]) => k === key)?.[1];
}

function textList(v: DisplayValue | undefined): string[] {
  if (!v) return [];
  if (v.t === "array") return v.v.map((x) => displayText(x)).filter((x): x is string => x !== null);
  const t = displayText(v);
  return t === null ? [] : [t];
}

export function parseXDeath(headers: HeaderEntry[]): DeathRecord[] {
  const xDeath = findHeader(headers, "x-death");
  if (xDeath?.t !== "array") return [];
  const out: DeathRecord[] = [];
  for (const item of xDeath.v) {
    if (item.t !== "table") continue;
    const time = tableGet(item.v, "time");
    out.push({
      queue: displayText(tableGet(item.v, "queue")),
      reason: displayText(tableGet(item.v, "reason")),
      count: displayNumber(tableGet(item.v, "count")),
      time: time?.t === "timestamp" ? time.v : displayText(time),
      exchange: displayText(tableGet(item.v, "exchange")),
      routingKeys: textList(tableGet(item.v, "routing-keys")),
      extra: item.v.filter(([k]) => !DEATH_FIELDS.has(k)).map(([name, value]) => ({ name, value })),
    });
  }
  return out;
}

const CLASS_HEADERS = [
  "x-exception-class",
  "x-exception-type",
  "exception-class",
  "x-exception-fqcn",
  "exception-type",
  "x-exception-class-name",
];
const MESSAGE_HEADERS = [
  "x-exception-message",
  "exception-message",
  "x-exception-msg",
  "x-error-message",
  "error-message",
];
const STACK_HEADERS = [
  "x-exception-stacktrace",
  "x-exception-stack-trace",
  "exception-stacktrace",
  "x-stacktrace",
  "x-stack-trace",
];

export function failureFromHeaders(
  headers: HeaderEntry[],
  history: DeathRecord[],
  configOrigin: string | null,
): FailureInfo {
  const last = history[0] ?? null;
  const stackTrace = headerText(headers, ...STACK_HEADERS);
  const exceptionClass = headerText(headers, ...CLASS_HEADERS) ?? exceptionClassFromStack(stackTrace);
  const originalExchange = headerText(headers, "x-original-exchange");
  const originalRoutingKey = headerText(headers, "x-original-routingKey", "x-original-routing-key");
  const republishedOrigin =
    originalExchange === null && originalRoutingKey === null
      ? null
      : originalExchange === "" || originalExchange === null
        ? originalRoutingKey
        : null;

  const deathOrigin = last?.queue ?? headerText(headers, "x-last-death-queue", "x-first-death-queue");
  const reason =
    last?.reason ??
    headerText(headers, "x-last-death-reason", "x-first-death-reason") ??
    (exceptionClass || stackTrace ? "exception" : null);
  const deliveryCount = findHeader(headers, "x-delivery-count");

  return {
    deadLetteredAt: last?.time ?? null,
    reason,
    originQueue: deathOrigin ?? republishedOrigin ?? configOrigin,
    exchange:
      last?.exchange ?? headerText(headers, "x-last-death-exchange", "x-first-death-exchange") ?? originalExchange,
    routingKeys: last ? last.routingKeys : originalRoutingKey !== null ? [originalRoutingKey] : [],
    count: last?.count ?? null,
    deliveryCount: deliveryCount ? displayNumber(deliveryCount) : null,
    exceptionClass,
    exceptionMessage: headerText(headers, ...MESSAGE_HEADERS),
    stackTrace,
  };
}
