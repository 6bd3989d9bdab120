import "server-only";
/**
 * The walk move and discard share on SQS: receive → verify → deliver → delete, never delete before
 * the delivery succeeded. The request's bookkeeping is move-rules' (RequestBook: a letter id asked
 * for twice is one request with one result); the look through the DLQ is look.ts, the settling of
 * what it found settle.ts, the holds holds.ts.
 *
 * 1. Ids that no SQS letter can have are "missing" at once. The DLQ is opened (typed errors: it does
 *    not exist, a risky read without acceptRisk) and the step's own checks run before anything is
 *    received.
 * 2. Rounds: the look receives the requested letters (holding every letter it receives); what it
 *    found settles in DLQ order (FIFO: SequenceNumber; standard: SentTimestamp). On a FIFO DLQ rounds
 *    repeat while settling removed letters (SQS then hands out the later letters of their groups),
 *    and once more when letters the look did not find waited behind the group heads it held.
 * 3. A request the last round did not find is "missing" only when the look went through the whole
 *    DLQ and no other reader held letters of it then; otherwise it is "failed" and says why it may
 *    still be there (move-rules' hiddenByAnotherReader, notReached).
 * 4. Everything not removed is released (visibility 0) at once: when the walk ends, fails, is aborted
 *    (`signal`, checked between letters and batches) or the caller stops iterating.
 */
import { HeldKeys, moveWords, RequestBook } from "@/lib/brokers/move-rules";
import { isSqsLetterId } from "@/lib/brokers/sqs/letter";
import { Holds } from "@/lib/brokers/sqs/holds";
import { lookRound, whyNotFound, type NotFound } from "@/lib/brokers/sqs/look";
import { settleFound } from "@/lib/brokers/sqs/settle";
import { parseQueueArn } from "@/lib/brokers/sqs/send-entry";
import type { Found, Opened, Settled, SqsMoveContext, SqsStep } from "@/lib/brokers/sqs/step";

export async function* forRequestedSqsLetters<R extends { letterId: string; sha256: string }, P, Out>(
  c: SqsMoveContext,
  dlq: string,
  requests: readonly R[],
  signal: AbortSignal | undefined,
  step: SqsStep<R, P>,
  toResult: (s: Settled<R>) => Out,
): AsyncGenerator<Out> {
  const words = moveWords(step.verb, "DLQ");
  const settled = (req: R, outcome: Settled<R>["outcome"], reason: string, retryLater = false): Out =>
    toResult({ req, outcome, destination: null, target: null, reason, orderingKey: null, retryLater });
  const book = new RequestBook(requests);
  const opened = await c.open();
  const d: Opened = {
    ...opened,
    dlqFifo: opened.summary.queueType === "fifo",
    dlqArn: parseQueueArn(opened.attrs.QueueArn),
  };
  await step.before?.(d);
  for (const req of book.pending()) {
    if (isSqsLetterId(req.letterId)) continue;
    book.take(req);
    yield settled(req, "missing", words.unknownId("an SQS MessageId"));
  }
  if (book.size === 0) return;

  const holds = new Holds(c.sqs, d.url, c.visibilityTimeout);
  const held = new HeldKeys(step.heldKeys);
  // Every requested letter is in the DLQ or missing, so the DLQ holds at least as many letters as
  // are asked for, whatever its approximate depth says (a count taken right after letters were
  // released can still miss them).
  const limit = Math.max(1, Math.min(Math.max(d.summary.depth ?? c.maxScan, book.size), d.room, c.maxScan));
  let notFound: NotFound = { kind: "missing" };
  let lookedAgain = false;
  try {
    for (let round = 0; round < 1000; round++) {
      let look: Awaited<ReturnType<typeof lookRound>>;
      try {
        look = await lookRound(
          c,
          d.url,
          holds,
          book.pending().map((r) => r.letterId),
          limit,
          d.dlqFifo,
          signal,
        );
      } catch (e) {
        throw c.err(e, dlq);
      }
      if (signal?.aborted) return;
      const found: Array<Found<R>> = [];
      for (const s of look.seen) {
        const req = book.take(s);
        if (req) found.push({ req, m: s.m, key: s.key, sha256: s.sha256 });
      }
      // Asked while the round still holds everything it received.
      if (book.size > 0) notFound = await whyNotFound(c, d.url, look, holds.count, d.dlqFifo);
      let removed = 0;
      for await (const s of settleFound(c, d, found, holds, held, words, signal, step)) {
        if (s.outcome === "done") removed++;
        yield toResult(s);
      }
      if (signal?.aborted) return;
      const progressed = d.dlqFifo && removed > 0 && book.size > 0;
      // A group's letters come in one receive, up to 10, only when all of them are visible: one
      // released by another reader a moment before (ElasticMQ shows it a millisecond later) can hide
      // the rest of its group behind the head this look took. One fresh look, a moment later.
      const again: boolean =
        !progressed && !lookedAgain && notFound.kind === "notReached" && notFound.behindGroups === true;
      if (!(progressed || again) || look.received === 0) break;
      lookedAgain ||= again;
      // Letters that are held again are received again: the next round counts them afresh.
      await holds.releaseAll();
      if (again) await new Promise((r) => setTimeout(r, 25));
    }
    for (const req of book.pending()) {
      if (notFound.kind === "missing") yield settled(req, "missing", words.missing(dlq));
      else if (notFound.kind === "hidden")
        yield settled(req, "failed", words.hiddenByAnotherReader(notFound.count), true);
      else yield settled(req, "failed", words.notReached(notFound.why), true);
    }
  } finally {
    await holds.releaseAll();
  }
}
