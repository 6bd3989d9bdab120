import "server-only";
import { GetQueueAttributesCommand, GetQueueUrlCommand, type SQSClient } from "@aws-sdk/client-sqs";
import { BrokerError } from "@/lib/brokers/contract/errors";
import { mapSqsError } from "@/lib/brokers/sqs/errors";
import type { SampleEvidence, SampleWatchOps, TargetReaders, WatchMark } from "@/lib/brokers/target-readers";

/**
 * The sample watch on SQS (`BrokerAdapter.sampleWatch`, lib/brokers/target-readers.ts): what the
 * target queue's counts say about its receivers and the sample's copies. Only GetQueueAttributes
 * is asked (visible, in flight, delayed); nothing is received, so no copy is hidden from the
 * queue's consumers and no receive count is raised.
 *
 * What SQS can prove, and what it cannot:
 * - SQS keeps no list of receivers: `readers().count` is null, and "no reader" can never be said
 *   for sure. Messages in flight (received, not yet deleted) show that someone receives; a queue
 *   whose count neither dropped nor went in flight since the mark shows no sign of a receiver,
 *   which is "unknown", not "no reader": a receiver may simply not have polled yet.
 * - SQS does not say which messages left (a standard queue has no order, and a count does not name
 *   messages), and its net counts mix deletions with new arrivals. The only proof that the copies
 *   left is a look after the mark at which the queue held nothing at all (0 visible, 0 in flight,
 *   0 delayed): every message it held then was received and deleted (or moved by the queue's own
 *   redrive policy, which is the watch's "returned", or expired after its retention period). A
 *   queue that is never empty stays "waiting", with the figures.
 * - The counts are approximate: AWS documents that they settle about a minute after sends stop. So
 *   on AWS an empty look counts only from `settleMs` (60 s) after the mark; an emulator (ElasticMQ,
 *   moto, LocalStack: any endpoint outside amazonaws.com) counts exactly, and the adapter gives 0.
 */

export interface SqsSampleWatchContext {
  sqs: SQSClient;
  endpoint: string;
  /** How long after the mark an empty count is believed (AWS: 60 s; an emulator: 0). */
  settleMs: number;
}

/** The wait after which AWS documents its approximate counts as settled. */
export const AWS_COUNTS_SETTLE_MS = 60_000;

/** Whether an SQS connection talks to AWS itself (no endpoint, or an amazonaws.com one) rather than an emulator. */
export function isAwsEndpoint(endpoint: string | undefined): boolean {
  if (!endpoint) return true;
  try {
    return /(^|\.)amazonaws\.com(\.cn)?$/i.test(new URL(endpoint).hostname);
  } catch {
    return true;
  }
}

interface Counts {
  visible: number;
  inFlight: number;
  delayed: number;
}

const total = (c: Counts) => c.visible + c.inFlight + c.delayed;
const figures = (c: Counts) => `${c.visible} visible, ${c.inFlight} in flight, ${c.delayed} delayed`;

export function sqsSampleWatch(ctx: SqsSampleWatchContext): SampleWatchOps {
  const urls = new Map<string, string>();

  async function counts(queue: string): Promise<Counts> {
    const notFound = (e: unknown) =>
      new BrokerError("not_found", {
        message: (e as Error)?.message,
        cause: e,
        userMessage: `The SQS queue "${queue}" does not exist on ${ctx.endpoint} (it may have been deleted). Check the queue name and the connection's region and account.`,
      });
    for (let attempt = 0; ; attempt++) {
      let url = urls.get(queue);
      try {
        if (!url) {
          url = (await ctx.sqs.send(new GetQueueUrlCommand({ QueueName: queue }))).QueueUrl;
          if (!url) throw notFound(null);
          urls.set(queue, url);
        }
        const a =
          (
            await ctx.sqs.send(
              new GetQueueAttributesCommand({
                QueueUrl: url,
                AttributeNames: [
                  "ApproximateNumberOfMessages",
                  "ApproximateNumberOfMessagesNotVisible",
                  "ApproximateNumberOfMessagesDelayed",
                ],
              }),
            )
          ).Attributes ?? {};
        return {
          visible: Number(a.ApproximateNumberOfMessages ?? 0),
          inFlight: Number(a.ApproximateNumberOfMessagesNotVisible ?? 0),
          delayed: Number(a.ApproximateNumberOfMessagesDelayed ?? 0),
        };
      } catch (e) {
        const mapped = mapSqsError(e, { endpoint: ctx.endpoint, queue });
        if (mapped.kind !== "not_found") throw mapped;
        urls.delete(queue);
        // A cached URL of a queue deleted and created again: ask for its URL once more.
        if (attempt >= 1 || !url) throw notFound(e);
      }
    }
  }

  function readersOf(queue: string, c: Counts): TargetReaders {
    const sign =
      c.inFlight > 0
        ? `${c.inFlight} in flight shows that something receives from it`
        : "nothing is in flight, so no receiver is at work on it this moment";
    return {
      target: queue,
      count: null,
      names: [],
      summary: `SQS keeps no list of receivers for queue "${queue}": ${sign} (${figures(c)}).`,
    };
  }

  return {
    async readers(queue) {
      return readersOf(queue, await counts(queue));
    },

    async mark(queue) {
      const c = await counts(queue);
      return { broker: "sqs", queue, at: Date.now(), ...c } satisfies WatchMark;
    },

    async evidence(queue, mark): Promise<SampleEvidence> {
      const now = await counts(queue);
      const readers = readersOf(queue, now);
      const out = (state: SampleEvidence["state"], text: string): SampleEvidence => ({
        target: queue,
        state,
        text,
        readers,
      });
      const n = (v: unknown) => (typeof v === "number" && Number.isFinite(v) ? v : 0);
      const atMark: Counts = { visible: n(mark.visible), inFlight: n(mark.inFlight), delayed: n(mark.delayed) };
      const markAt = n(mark.at);
      const held = `When the sample's copies were confirmed it held ${total(atMark)} (${figures(atMark)}); now ${figures(now)}.`;
      const unsaid =
        "SQS keeps no list of receivers and does not say which messages left: only a look at which the queue holds nothing proves the copies were taken.";

      if (total(now) === 0) {
        const settledAt = markAt + ctx.settleMs;
        if (Date.now() >= settledAt)
          return out(
            "taken",
            `Queue "${queue}" is empty (0 visible, 0 in flight, 0 delayed): every message it held when the sample's copies were confirmed (${figures(atMark)}) was received and deleted.`,
          );
        return out(
          "waiting",
          `Queue "${queue}" counts empty, but SQS's counts are approximate and settle about a minute after sends: the empty count is believed from ${new Date(settledAt).toISOString()} on. ${held}`,
        );
      }
      if (now.inFlight > 0 || total(now) < total(atMark))
        return out(
          "waiting",
          `Something receives from queue "${queue}"${
            now.inFlight > 0 ? ` (${now.inFlight} in flight: received, not yet deleted)` : " (its count dropped)"
          }, but the sample's copies may still be there. ${held} ${unsaid}`,
        );
      return out(
        "unknown",
        `No sign of a receiver on queue "${queue}": nothing is in flight and its count has not dropped since the sample's copies were confirmed. ${held} SQS keeps no list of receivers, so the console cannot tell whether nobody reads this queue or a receiver has not polled yet; the copies' not coming back proves nothing.`,
      );
    },
  };
}
