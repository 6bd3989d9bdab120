import "server-only";
import { authorize } from "@/lib/auth/authorize";
import type { Actor, RequestMeta } from "@/lib/auth/session";
import type { DlqSummary } from "@/lib/brokers/contract/dlq";
import { toActionError } from "@/lib/errors";
import { adapterFor, connectionInfo, withTimeout } from "@/lib/use-case/connection";
import type { ConnectionInfo } from "@/lib/use-case/connection";
import { letterLabels, type LetterLabels } from "./wording";

const DESCRIBE_TIMEOUT_MS = 8_000;

export interface DlqHeadInfo {
  connection: ConnectionInfo;
  /** Null when the broker could not describe it; `problem` says why. Nothing is read. */
  dlq: DlqSummary | null;
  problem: string | null;
  /** The broker answered that it has no such queue: the page is a 404. */
  missing: boolean;
}

/**
 * What the header of every tab of a DLQ shows: its connection, type, depth and origins, from the
 * broker's description of the queue (no letter is read). Not audited, like the DLQ list: the
 * pages that show it audit what they read.
 */
export async function describeDlqHead(
  actor: Actor,
  meta: RequestMeta,
  input: { connectionId: string; queue: string },
): Promise<DlqHeadInfo> {
  await authorize(actor, "dlq:browse", {
    action: "dlq.describe",
    connectionId: input.connectionId,
    queue: input.queue,
    meta,
  });
  const adapter = adapterFor(input.connectionId);
  const connection = connectionInfo(adapter);
  try {
    const dlq = await withTimeout(
      adapter.describeDlq(input.queue),
      DESCRIBE_TIMEOUT_MS,
      `describeDlq(${input.connectionId})`,
    );
    return { connection, dlq, problem: null, missing: false };
  } catch (e) {
    const safe = toActionError(e);
    return { connection, dlq: null, problem: safe.message, missing: safe.code.startsWith("not_found") };
  }
}

/** A connection's name for breadcrumbs; the id itself when it is not configured. */
export function connectionName(connectionId: string): string {
  try {
    return adapterFor(connectionId).displayName;
  } catch {
    return connectionId;
  }
}

/** A connection's letter labels ("Original topic", "topic"); the neutral words when it is not configured. */
export function connectionLabels(connectionId: string): LetterLabels {
  try {
    const a = adapterFor(connectionId);
    return letterLabels(a.capabilities, a.vocabulary);
  } catch {
    return letterLabels(
      { readHidesLetters: false, readCountsAsDelivery: false, randomAccess: false },
      { queue: "queue", letterId: "message id", origin: "origin" },
    );
  }
}
