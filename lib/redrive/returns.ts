import "server-only";
import { displayText } from "@/lib/brokers/display";
import { REDRIVE_HEADERS } from "@/lib/brokers/contract/markers";
import type { BrokerAdapter } from "@/lib/brokers/contract/adapter";
import type { HeaderEntry } from "@/lib/brokers/contract/letter";

/** Markers a letter carries, from its headers (or the combined SQS marker attribute `x-dlq-redrive`). */
export function markersOf(
  headers: HeaderEntry[],
  properties: HeaderEntry[] = [],
): { redriveId: string | null; replayId: string | null } {
  let redriveId: string | null = null;
  let replayId: string | null = null;
  for (const h of [...headers, ...properties]) {
    const name = h.name.toLowerCase();
    if (name === REDRIVE_HEADERS.redriveId) redriveId = displayText(h.value);
    else if (name === REDRIVE_HEADERS.replayId) replayId = displayText(h.value);
    else if (name === "x-dlq-redrive" && (!redriveId || !replayId)) {
      const text = displayText(h.value) ?? "";
      redriveId ??= /(?:^|[;{,"\s])(?:id|redriveId)"?\s*[=:]\s*"?([0-9a-f-]{36})/i.exec(text)?.[1] ?? null;
      replayId ??= /(?:replay|replayId)"?\s*[=:]\s*"?([0-9a-f-]{36})/i.exec(text)?.[1] ?? null;
    }
  }
  return { redriveId, replayId };
}

/**
 * Reads the whole DLQ once (adapter.stream: non-destructive, bounded memory, letters returned in
 * order when it ends) and collects the replay ids of letters that carry this job's redrive id,
 * i.e. letters this job redrove that came back. Must not run while a move of the same DLQ is in
 * flight (the read holds letters the mover would look for), so the handler calls it between batches.
 */
export async function findReturns(
  adapter: BrokerAdapter,
  queue: string,
  jobId: string,
  opts: { acceptRisk?: boolean; signal?: AbortSignal; cap?: number } = {},
): Promise<{ replayIds: string[]; count: number; read: number }> {
  const cap = opts.cap ?? 100_000;
  const replayIds = new Set<string>();
  let count = 0;
  let read = 0;
  for await (const letter of adapter.stream(queue, {
    maxBodyBytes: 64,
    acceptRisk: opts.acceptRisk,
    signal: opts.signal,
  })) {
    read++;
    const m = markersOf(letter.headers, letter.properties);
    if (m.redriveId !== jobId) continue;
    count++;
    if (m.replayId && replayIds.size < cap) replayIds.add(m.replayId);
  }
  return { replayIds: [...replayIds], count, read };
}
