import "server-only";
import { authorize } from "@/lib/auth/authorize";
import type { Actor, RequestMeta } from "@/lib/auth/session";
import { loadConfig } from "@/lib/config";
import { getDb } from "@/lib/db";
import { indexingLineOf, type IndexingLine } from "./indexing-policy";

/**
 * What a DLQ's page says about indexing on its own (lib/triage/indexer.ts): from the config, the
 * read risk in the broker's description (null when the broker did not answer) and the indexer's
 * record of its last round.
 */
export async function indexingStatus(
  actor: Actor,
  meta: RequestMeta,
  input: { connectionId: string; queue: string; readRisk: boolean | null },
): Promise<IndexingLine> {
  await authorize(actor, "triage:read", {
    action: "triage.groups",
    connectionId: input.connectionId,
    queue: input.queue,
    meta,
  });
  const state = await getDb().triageIndexState.findUnique({
    where: { connectionId_queue: { connectionId: input.connectionId, queue: input.queue } },
    select: { mode: true, outcome: true, detail: true, roundAt: true, indexedAt: true, rescanAt: true },
  });
  return indexingLineOf({ cfg: loadConfig().triage.indexing, ...input, state });
}
