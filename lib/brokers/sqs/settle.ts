import "server-only";
/**
 * Settles letters already received and held, in the order given (DLQ order): per letter, a held
 * message group, the checksum and the step's own checks; then deliveries in batches (up to 10 of
 * one target; FIFO and repaired letters one at a time), each preceded by a refresh of the hold to the
 * full timeout, and a DeleteMessageBatch of only what was delivered. A letter that is not removed is
 * made visible again at once and, where the step keeps group order, holds back the later letters of
 * its message group.
 */
import { DeleteMessageBatchCommand, type Message } from "@aws-sdk/client-sqs";
import type { BrokerError } from "@/lib/brokers/contract/errors";
import { sameChecksum, type HeldKeys, type moveWords } from "@/lib/brokers/move-rules";
import type { Holds } from "@/lib/brokers/sqs/holds";
import type { Delivered, Found, Opened, Ready, Settled, SqsMoveContext, SqsStep } from "@/lib/brokers/sqs/step";

const errText = (e: BrokerError) => e.userMessage.replace(/\.$/, "");
const groupOf = (m: Message) => ((m.Attributes ?? {}) as Record<string, string>).MessageGroupId ?? null;
/** Errors after which nothing more is tried in this call. */
const isFatal = (e: BrokerError) => e.kind === "unreachable" || e.kind === "auth" || e.kind === "throttled";

export async function* settleFound<R extends { letterId: string; sha256: string }, P>(
  c: SqsMoveContext,
  d: Opened,
  found: Array<Found<R>>,
  holds: Holds,
  held: HeldKeys,
  words: ReturnType<typeof moveWords>,
  signal: AbortSignal | undefined,
  step: SqsStep<R, P>,
): AsyncIterable<Settled<R>> {
  const past = step.verb === "move" ? "moved" : "discarded";
  const out = (
    f: Found<R>,
    outcome: Settled<R>["outcome"],
    destination: string | null,
    reason: string | null,
    extra: { target?: string | null; copyId?: string } = {},
  ): Settled<R> => ({
    req: f.req,
    outcome,
    destination,
    target: extra.target ?? null,
    reason,
    orderingKey: groupOf(f.m),
    ...(extra.copyId !== undefined ? { copyId: extra.copyId } : {}),
  });
  const handle = (f: Found<R>) => f.m.ReceiptHandle ?? "";
  let fatal: BrokerError | null = null;
  /** This letter stays in the DLQ: the later letters of its group wait behind it. */
  const stays = (f: Found<R>) => {
    if (step.keepsGroupOrder) held.hold(groupOf(f.m), f.req.letterId);
  };

  /** Checks per letter; letters that stay are released at once below. */
  const prepare = async (f: Found<R>): Promise<Ready<R, P> | Settled<R>> => {
    const group = groupOf(f.m);
    if (fatal) return out(f, "failed", null, `Not ${past}: ${errText(fatal)}. The letter stays in the DLQ.`);
    if (held.isHeld(group)) return out(f, "failed", null, held.reason(group, words));
    if (!sameChecksum(f.req.sha256, f.sha256)) return out(f, "checksum_mismatch", null, words.mismatch);
    const p = await step.prepare(f, d);
    if ("stays" in p) return out(f, "failed", p.stays.destination, p.stays.reason);
    return { f, ...p };
  };

  /** Refreshes the holds, delivers one batch and deletes what was delivered; every letter settles. */
  const deliverBatch = async (batch: Array<Ready<R, P>>): Promise<Array<Settled<R>>> => {
    const results: Array<Settled<R>> = [];
    // The full timeout is left for the delivery and the delete.
    let refused: Set<string>;
    try {
      refused = await holds.refresh(batch.map((b) => handle(b.f)));
    } catch (e) {
      const be = c.err(e);
      fatal = isFatal(be) ? be : null;
      for (const b of batch) {
        stays(b.f);
        results.push(out(b.f, "failed", b.destination, `Not ${past}: ${errText(be)}. The letter stays in the DLQ.`));
      }
      await holds.release(batch.map((b) => handle(b.f)));
      return results;
    }
    const live = batch.filter((b) => !refused.has(handle(b.f)));
    for (const b of batch) {
      if (!refused.has(handle(b.f))) continue;
      holds.forget(handle(b.f));
      stays(b.f);
      results.push(
        out(
          b.f,
          "failed",
          b.destination,
          `Not ${past}: the console's hold on this letter ran out first (it became visible and may have been received by a consumer). Nothing was done with it; it is still in the DLQ.`,
        ),
      );
    }
    if (live.length === 0) return results;
    const delivered = await step.deliver(live);
    if (delivered.fatal) fatal = delivered.fatal;
    // Delete only what was delivered.
    const deleteFailed = new Map<number, string>();
    const toDelete = live.map((b, i) => ({ b, i })).filter(({ i }) => delivered.results[i].ok);
    if (toDelete.length) {
      try {
        const r = await c.sqs.send(
          new DeleteMessageBatchCommand({
            QueueUrl: d.url,
            Entries: toDelete.map(({ b, i }) => ({ Id: String(i), ReceiptHandle: handle(b.f) })),
          }),
        );
        for (const f of r.Failed ?? []) deleteFailed.set(Number(f.Id), f.Code ?? "error");
      } catch (e) {
        const be = c.err(e);
        for (const { i } of toDelete) deleteFailed.set(i, be.kind);
      }
    }
    const release: string[] = [];
    live.forEach((b, i) => {
      const r: Delivered = delivered.results[i];
      if (r.ok && !deleteFailed.has(i)) {
        holds.forget(handle(b.f));
        results.push(out(b.f, "done", b.destination, null, { target: b.target, copyId: r.copyId }));
      } else if (r.ok) {
        // Delivered and still in the DLQ: its receipt handle is gone, so it is no longer ours to release.
        holds.forget(handle(b.f));
        stays(b.f);
        results.push(
          out(b.f, "failed", b.destination, step.notDeleted(b, r.note, deleteFailed.get(i)!), { target: b.target }),
        );
      } else {
        release.push(handle(b.f));
        stays(b.f);
        results.push(out(b.f, "failed", b.destination, r.reason, { target: r.sent ? b.target : null }));
      }
    });
    await holds.release(release);
    return results;
  };

  const batchSize = Math.max(1, Math.min(10, c.sendBatchSize ?? 10));
  let pending: Array<Ready<R, P>> = [];
  let pendingBytes = 0;
  const flush = async () => {
    const b = pending;
    pending = [];
    pendingBytes = 0;
    return b.length ? deliverBatch(b) : [];
  };
  for (const f of found) {
    if (signal?.aborted) break;
    await holds.extendIfDue();
    const p = await prepare(f);
    if (!("f" in p)) {
      stays(f);
      await holds.release([handle(f)]);
      yield p;
      continue;
    }
    // FIFO: one at a time, in order. Otherwise batches of up to 10 of one key, within the batch size limit.
    if (
      pending.length &&
      (pending[0].batchKey !== p.batchKey || pending.length >= batchSize || pendingBytes + p.size > c.maxBatchBytes)
    ) {
      for (const r of await flush()) yield r;
      if (signal?.aborted) break;
    }
    pending.push(p);
    pendingBytes += p.size;
    if (p.single || d.dlqFifo) for (const r of await flush()) yield r;
  }
  if (!signal?.aborted) for (const r of await flush()) yield r;
  // Whatever was prepared but not delivered (aborted) is released by the caller's releaseAll.
}
