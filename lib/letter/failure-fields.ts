/** Which failure facts a letter (or a page of letters) actually has, so empty ones are not shown. Pure. */
import type { FailureInfo } from "@/lib/brokers/contract/letter";

export type FailureField =
  | "deadLetteredAt"
  | "reason"
  | "origin"
  | "exchange"
  | "routingKeys"
  | "count"
  | "deliveryCount"
  | "exceptionClass"
  | "exceptionMessage";

export function filledFields(f: FailureInfo): Set<FailureField> {
  const out = new Set<FailureField>();
  if (f.deadLetteredAt) out.add("deadLetteredAt");
  if (f.reason) out.add("reason");
  if (f.originQueue) out.add("origin");
  // "" is the AMQP default exchange: a fact, not an absence.
  if (f.exchange !== null) out.add("exchange");
  if (f.routingKeys.length) out.add("routingKeys");
  if (f.count !== null) out.add("count");
  if (f.deliveryCount !== null) out.add("deliveryCount");
  if (f.exceptionClass) out.add("exceptionClass");
  if (f.exceptionMessage) out.add("exceptionMessage");
  return out;
}

/** Fields filled in at least one of these letters: a column is worth showing only then. */
export function fieldsInUse(failures: FailureInfo[]): Set<FailureField> {
  const out = new Set<FailureField>();
  for (const f of failures) for (const k of filledFields(f)) out.add(k);
  return out;
}
