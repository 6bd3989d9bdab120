import "server-only";
/**
 * removeLetters (discard) on SQS: the shared walk (walk.ts) delivering to `opts.beforeRemove`: each
 * letter's complete copy is handed over one at a time, in DLQ order (move-rules' OneAtATime), and a
 * letter is deleted only after its copy was accepted. A letter whose copy was refused stays.
 */
import type { RemoveOptions, RemoveRequest, RemoveResult } from "@/lib/brokers/contract/remove";
import { moveWords, OneAtATime } from "@/lib/brokers/move-rules";
import { letterCopyOf } from "@/lib/brokers/sqs/letter-copy";
import type { Delivered, SqsMoveContext } from "@/lib/brokers/sqs/step";
import { forRequestedSqsLetters } from "@/lib/brokers/sqs/walk";

export function removeSqsLetters(
  c: SqsMoveContext,
  dlq: string,
  requests: RemoveRequest[],
  opts: RemoveOptions,
): AsyncIterable<RemoveResult> {
  const words = moveWords("discard", "DLQ");
  const archive = new OneAtATime();
  return forRequestedSqsLetters<RemoveRequest, null, RemoveResult>(
    c,
    dlq,
    requests,
    opts.signal,
    {
      verb: "discard",
      heldKeys: [],
      keepsGroupOrder: false,
      async prepare() {
        return { batchKey: "dlq", single: false, size: 0, payload: null, destination: null, target: null };
      },
      async deliver(live) {
        // The deletes of the batch go together afterwards.
        const results: Delivered[] = [];
        for (const b of live) {
          const copy = letterCopyOf(b.f.m, b.f.req.letterId, c.letterOptions?.());
          try {
            await archive.run(() => opts.beforeRemove(copy));
            results.push({ ok: true, note: "" });
          } catch (e) {
            results.push({ ok: false, reason: words.notArchived(e) });
          }
        }
        return { results, fatal: null };
      },
      notDeleted: (_b, _note, code) =>
        `Its copy is in the archive, but SQS did not delete it from the DLQ (${code}): its receipt handle had expired. It is still in the DLQ as well; discard it again to remove it.`,
    },
    (s) => ({ letterId: s.req.letterId, outcome: s.outcome === "done" ? "removed" : s.outcome, reason: s.reason }),
  );
}
