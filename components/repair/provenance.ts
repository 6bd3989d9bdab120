/**
 * What a letter's own headers say about a repair (pure, client-safe): a repaired copy carries
 * `x-dlq-repaired-by-operation` (the operation, under whose id the original was archived) and
 * `x-dlq-original-message-id` (the message id the original had). Header names are matched without
 * case, as brokers and the console's markers do.
 */
import type { HeaderEntry } from "@/lib/brokers/contract/letter";
import { valueText } from "@/lib/text";

export const REPAIRED_BY_HEADER = "x-dlq-repaired-by-operation";
export const ORIGINAL_ID_HEADER = "x-dlq-original-message-id";

export interface RepairProvenance {
  operationId: string;
  originalMessageId: string | null;
}

function headerText(headers: HeaderEntry[], name: string): string | null {
  const h = headers.find((x) => x.name.toLowerCase() === name);
  const v = h ? valueText(h.value).trim() : "";
  return v === "" ? null : v;
}

/** The repair this letter is a copy of, or null when it is not a repaired copy. */
export function repairProvenance(headers: HeaderEntry[]): RepairProvenance | null {
  const operationId = headerText(headers, REPAIRED_BY_HEADER);
  return operationId ? { operationId, originalMessageId: headerText(headers, ORIGINAL_ID_HEADER) } : null;
}
