import "server-only";
import { maskingPolicy } from "@/lib/masking/policy";
import { maskFailure } from "@/lib/letter/mask-letter";
import { authorize } from "@/lib/auth/authorize";
import { can } from "@/lib/auth/permissions";
import type { Actor, RequestMeta } from "@/lib/auth/session";
import type { DlqSummary, StreamShortfall } from "@/lib/brokers/contract/dlq";
import { AppError } from "@/lib/errors";
import { readInTurn, rethrowBusy } from "./busy";
import { audited } from "@/lib/use-case/audited";
import { adapterFor, connectionInfo, withTimeout } from "@/lib/use-case/connection";
import { MAX_PAGE_SIZE } from "./links";
import type { LetterRow } from "./types";
import type { ConnectionInfo } from "@/lib/use-case/connection";
import { visibleSha256 } from "@/lib/masking/digest";

/** Reading deeper than this means streaming that many letters from the head: refuse. */
export const MAX_OFFSET = 100_000;
const READ_TIMEOUT_MS = 30_000;

export interface OpenDlqInput {
  connectionId: string;
  queue: string;
  /** 1-based. */
  page: number;
  pageSize: number;
  /**
   * 0-based letter to start at, instead of the start of `page`: a cursor-paged caller (the v1 API)
   * continues where its previous page ended whatever page size it asks for. Pages leave it unset.
   */
  offset?: number;
  /** The operator confirmed this DLQ's read risk (needs dlq:browse-risky). */
  acceptRisk?: boolean;
  /** Where the adapter has `randomAccess`: one partition, a start offset (decimal text) within it, and the order. */
  partition?: number | null;
  fromOffset?: string | null;
  order?: "oldest" | "newest";
}

export interface OpenDlqResult {
  connection: ConnectionInfo;
  dlq: DlqSummary;
  /** Null when the DLQ has a read risk that was not confirmed: nothing was read. */
  letters: LetterRow[] | null;
  offset: number;
  pageSize: number;
  hasMore: boolean;
  depth: number | null;
  /** What the page was read with, as the adapter echoes it (null: all partitions, or not applicable). */
  partition: number | null;
  order: "oldest" | "newest";
  /** Letters of the DLQ no page of this read reaches, and why (see `LetterPage.unreached`). */
  unreached: StreamShortfall | null;
  needsConfirmation: boolean;
  canConfirm: boolean;
}

export async function openDlq(actor: Actor, meta: RequestMeta, input: OpenDlqInput): Promise<OpenDlqResult> {
  const scope = { action: "dlq.open", connectionId: input.connectionId, queue: input.queue };
  await authorize(actor, "dlq:browse", { ...scope, meta });
  if (input.acceptRisk) await authorize(actor, "dlq:browse-risky", { ...scope, action: "dlq.read_risky", meta });

  const pageSize = Math.min(Math.max(1, Math.floor(input.pageSize)), MAX_PAGE_SIZE);
  const offset =
    input.offset !== undefined
      ? Math.max(0, Math.floor(input.offset))
      : (Math.max(1, Math.floor(input.page)) - 1) * pageSize;
  const canConfirm = can(actor.role, "dlq:browse-risky");

  return audited(
    actor,
    meta,
    scope,
    async () => {
      if (offset > MAX_OFFSET) {
        throw new AppError("bad_request:page", {
          userMessage: `Pages deeper than letter ${MAX_OFFSET.toLocaleString("en-US")} are not read from the broker: it would mean holding that many letters. Use a smaller page number.`,
        });
      }
      // A read refused after waiting behind another console read names the job reading the DLQ.
      const adapter = adapterFor(input.connectionId);
      const dlq = await withTimeout(adapter.describeDlq(input.queue), READ_TIMEOUT_MS, "describeDlq").catch(
        rethrowBusy(input.connectionId, input.queue),
      );
      const randomAccess = adapter.capabilities.randomAccess;
      const position = randomAccess
        ? {
            partition: input.partition ?? undefined,
            fromOffset:
              input.partition !== null && input.partition !== undefined ? (input.fromOffset ?? undefined) : undefined,
            order: input.order ?? "oldest",
          }
        : {};
      const base = {
        connection: connectionInfo(adapter),
        dlq,
        offset,
        pageSize,
        canConfirm,
        partition: position.partition ?? null,
        order: position.order ?? ("oldest" as const),
      };
      if (dlq.readRisk && !input.acceptRisk) {
        return { ...base, letters: null, hasMore: false, depth: dlq.depth, unreached: null, needsConfirmation: true };
      }
      // Behind a triage scan (it holds the queue to its end) the page says so at once, not after its wait.
      const page = await readInTurn(input.connectionId, input.queue, (turn) =>
        withTimeout(
          adapter.browse(input.queue, {
            offset,
            limit: pageSize,
            maxBodyBytes: 0,
            acceptRisk: input.acceptRisk,
            turn,
            ...position,
          }),
          READ_TIMEOUT_MS,
          "browse",
        ),
      );
      // Exception text can quote payload values: masked like the letter page's.
      const policy = await maskingPolicy(actor.role, input.connectionId, input.queue);
      const letters: LetterRow[] = page.letters.map((l) => ({
        id: l.id,
        position: l.position,
        messageId: l.messageId,
        bodySize: l.bodySize,
        sha256: visibleSha256(l.sha256, policy),
        contentType: l.contentType,
        failure: maskFailure(l.failure, policy),
        handled: l.handled ?? null,
        ...(l.readRaised ? { readRaised: l.readRaised } : {}),
      }));
      return {
        ...base,
        letters,
        hasMore: page.hasMore,
        depth: page.depth ?? dlq.depth,
        partition: page.partition ?? base.partition,
        order: page.order ?? base.order,
        unreached: page.unreached ?? null,
        needsConfirmation: false,
      };
    },
    (r) => ({
      offset,
      pageSize,
      ...(r.connection.capabilities.randomAccess
        ? { partition: r.partition, fromOffset: input.fromOffset ?? null, order: r.order }
        : {}),
      read: r.letters !== null,
      letters: r.letters?.length ?? 0,
      ...(r.unreached ? { unreached: r.unreached.unread } : {}),
      ...(r.dlq.readRisk ? { readRisk: r.dlq.readRisk.kind, riskAccepted: Boolean(input.acceptRisk) } : {}),
    }),
  );
}
