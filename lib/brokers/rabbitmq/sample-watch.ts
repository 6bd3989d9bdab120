import "server-only";
import type { Channel } from "amqplib";
import { closeQuietly, mapAmqpError } from "@/lib/brokers/rabbitmq/connection";
import { ManagementError, type ManagementClient, type MgmtQueue } from "@/lib/brokers/rabbitmq/management";
import type { SampleEvidence, SampleWatchOps, TargetReaders, WatchMark } from "@/lib/brokers/target-readers";

/**
 * The sample watch on RabbitMQ (`BrokerAdapter.sampleWatch`, lib/brokers/target-readers.ts): who
 * consumes a target queue, and whether the sample's copies left it through a consumer. Only
 * counters are read (AMQP passive declare, management queue statistics); no message is consumed.
 *
 * What each source can prove:
 * - AMQP `queue.declare` (passive) is exact and current: ready messages (not the unacknowledged
 *   ones) and consumers. It is also what says a queue does not exist (`not_found`).
 * - The management API gives unacknowledged messages, consumer details and the queue's cumulative
 *   counters (ack, deliver_no_ack, get_no_ack), but only as of its last collection. On 3.10 (read
 *   in the source, measured on the broker): a queue writes its lengths into the node's metrics
 *   tables every `collect_statistics_interval` (5 s by default), a channel counts its acks there at
 *   once, and the management agent copies those tables into what the API serves on its own tick,
 *   every 5 s (the smallest interval of `sample_retention_policies`, whatever
 *   `collect_statistics_interval` is). So an ack shows 0-5 s late, an unacknowledged count up to
 *   one emission plus one tick late (up to 8.4 s measured; 0-6 s with a 1 s interval, still only on
 *   the 5 s tick). A counter read right after the copies were confirmed could still miss
 *   acknowledgements of earlier messages, which would later be counted as if they had taken the
 *   copies. So `mark` reads the exact ready count at once and then waits `statsLagMs` (11 s by
 *   default) before it reads the baseline counters: a baseline from after the mark can only
 *   under-count. The wait is fixed because nothing in the API says how old a figure is: the
 *   samples' timestamps (`msg_rates_age`/`lengths_age` ranges) are points of a grid that the last
 *   collected value is carried forward on up to the time of the request (and lengths one point
 *   past it), so a sample stamped seconds after an acknowledgement was measured still without it.
 *   A stream needs no baseline (see below): its mark does not wait.
 *
 * The copies were taken when, in a look whose statistics are newer than the mark (every look after
 * `mark` returned is):
 * - the queue held nothing (0 ready, 0 unacknowledged): everything it held at the mark left it; or
 * - consumers removed (acknowledged, or took without acknowledgement) at least as many messages
 *   since the baseline as the queue held at the mark (ready at the mark + unacknowledged at the
 *   baseline). Counters do not name messages: this proves it for a queue that delivers in order
 *   (FIFO, no priorities, no requeues) and whose consumers acknowledge in order. A consumer that
 *   holds a copy unacknowledged while acknowledging later messages would be counted as having taken
 *   it; the text gives the figures so an operator can judge. Nor are the counters and the
 *   unacknowledged count in step (two collections, each on its own tick): a message held
 *   unacknowledged at the mark and acknowledged after the counters' collection but before the
 *   lengths' is missing from what the queue held and yet counted among the removals.
 * A copy rejected without requeue also leaves the queue: it comes back to the DLQ (the watch's
 * "returned"), or, without a dead-letter exchange, is dropped, which no counter here tells from an
 * acknowledgement. A stream keeps its messages and its consumers' offsets are not visible here:
 * "unknown". Without the management API, a queue with 0 ready after the mark has delivered the
 * copies, but whether they were acknowledged cannot be seen: "unknown", said so.
 */

export interface RabbitSampleWatchContext {
  endpoint: string;
  vhost: string;
  channel(): Promise<Channel>;
  mgmt: ManagementClient | null;
  /**
   * How long after the mark the management statistics are newer than it (default 11 s: one queue
   * emission interval and one collection tick, 5 s each by default, + 1 s).
   */
  statsLagMs?: number;
}

/** The parts of the management API's queue object the watch reads (GET api/queues/{vhost}/{name}). */
interface MgmtQueueStats extends MgmtQueue {
  message_stats?: {
    ack?: number;
    deliver_get?: number;
    deliver_no_ack?: number;
    get_no_ack?: number;
    redeliver?: number;
    publish?: number;
  };
  consumer_details?: Array<{
    consumer_tag?: string;
    prefetch_count?: number;
    ack_required?: boolean;
    channel_details?: { connection_name?: string; user?: string };
  }>;
}

export const DEFAULT_STATS_LAG_MS = 11_000;
const MAX_NAMES = 20;

const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Messages consumers took out of the queue: acknowledged, or delivered / got without acknowledgement. */
function removedOf(q: MgmtQueueStats): number | null {
  const s = q.message_stats;
  if (!s) return null;
  return (s.ack ?? 0) + (s.deliver_no_ack ?? 0) + (s.get_no_ack ?? 0);
}

export function rabbitSampleWatch(ctx: RabbitSampleWatchContext): SampleWatchOps {
  const lagMs = ctx.statsLagMs ?? DEFAULT_STATS_LAG_MS;

  /** Exact ready count and consumers now; throws not_found for a queue that does not exist. */
  async function declared(queue: string): Promise<{ ready: number; consumers: number }> {
    let ch: Channel | null = null;
    try {
      ch = await ctx.channel();
      const ok = await ch.checkQueue(queue);
      return { ready: ok.messageCount, consumers: ok.consumerCount };
    } catch (e) {
      throw mapAmqpError(e, { endpoint: ctx.endpoint, queue });
    } finally {
      await closeQuietly(ch);
    }
  }

  /**
   * The management API's look at the queue, or why there is none: not configured, not answering,
   * or no statistics yet (a queue appears there only after its first statistics emission).
   */
  async function stats(queue: string): Promise<{ q: MgmtQueueStats | null; why: string | null }> {
    if (!ctx.mgmt) return { q: null, why: "no management API is configured for this connection" };
    try {
      return { q: (await ctx.mgmt.getQueue(ctx.vhost, queue)) as MgmtQueueStats, why: null };
    } catch (e) {
      if (e instanceof ManagementError && e.kind === "not_found")
        return { q: null, why: "the management API has no statistics for the queue yet" };
      return { q: null, why: `the management API did not answer (${(e as Error).message})` };
    }
  }

  function readersOf(queue: string, consumers: number, q: MgmtQueueStats | null): TargetReaders {
    const names = (q?.consumer_details ?? []).slice(0, MAX_NAMES).map((c) => {
      const how = [
        c.channel_details?.user ? `user ${c.channel_details.user}` : null,
        typeof c.prefetch_count === "number" ? `prefetch ${c.prefetch_count || "unlimited"}` : null,
        c.ack_required === false ? "auto ack" : c.ack_required === true ? "manual ack" : null,
      ].filter(Boolean);
      const on = c.channel_details?.connection_name ? ` on ${c.channel_details.connection_name}` : "";
      return `consumer ${c.consumer_tag ?? "?"}${on}${how.length ? ` (${how.join(", ")})` : ""}`;
    });
    const summary =
      consumers === 0 ? `No consumer on queue "${queue}".` : `${plural(consumers, "consumer")} on queue "${queue}".`;
    return { target: queue, count: consumers, names, summary };
  }

  const num = (v: unknown): number | null => (typeof v === "number" && Number.isFinite(v) ? v : null);

  return {
    async readers(queue) {
      const { consumers } = await declared(queue);
      const { q } = await stats(queue);
      return readersOf(queue, consumers, q);
    },

    async mark(queue) {
      const at = Date.now();
      const { ready, consumers } = await declared(queue);
      let baseline: MgmtQueueStats | null = null;
      let why: string | null = null;
      if (ctx.mgmt) {
        // A stream's evidence is "unknown" whatever its counters say (its type never changes): no
        // baseline to wait for. Any other queue: statistics newer than the mark (see the header).
        ({ q: baseline, why } = await stats(queue));
        if (baseline?.type !== "stream") {
          await sleep(Math.max(0, at + lagMs - Date.now()));
          ({ q: baseline, why } = await stats(queue));
        }
        // The queue may have gone while we waited; the evidence will say so.
      } else why = "no management API is configured for this connection";
      const stream = baseline?.type === "stream";
      return {
        broker: "rabbitmq",
        queue,
        at,
        ready,
        consumers,
        queueType: baseline?.type ?? null,
        unacked: baseline && !stream ? num(baseline.messages_unacknowledged) : null,
        removed: baseline && !stream ? removedOf(baseline) : null,
        statsWhy: why,
      } satisfies WatchMark;
    },

    async evidence(queue, mark): Promise<SampleEvidence> {
      const now = await declared(queue);
      const { q, why } = await stats(queue);
      const readers = readersOf(queue, now.consumers, q);
      const out = (state: SampleEvidence["state"], text: string): SampleEvidence => ({
        target: queue,
        state,
        text,
        readers,
      });

      const readyAtMark = num(mark.ready) ?? 0;
      const lagS = Math.round(lagMs / 1000);
      const unackedAtMark = num(mark.unacked);
      const removedAtMark = num(mark.removed);
      const heldAtMark = readyAtMark + (unackedAtMark ?? 0);
      const type = q?.type ?? (typeof mark.queueType === "string" ? mark.queueType : null);

      if (type === "stream")
        return out(
          "unknown",
          `Queue "${queue}" is a stream: it keeps every message, and its consumers' offsets are not visible to the console, so whether they read the sample's copies cannot be seen. ${readers.summary}`,
        );

      const unackedNow = q ? num(q.messages_unacknowledged) : null;
      const readyStats = q ? num(q.messages_ready) : null;
      const removedNow = q ? removedOf(q) : null;
      const removedSince = removedNow !== null && removedAtMark !== null ? removedNow - removedAtMark : null;
      const nowFigures =
        unackedNow !== null
          ? `now ${now.ready} ready, ${unackedNow} delivered but not acknowledged`
          : `now ${now.ready} ready`;
      const markFigures =
        unackedAtMark !== null
          ? `it held ${plural(heldAtMark, "message")} when they were confirmed (${readyAtMark} ready then, ${unackedAtMark} unacknowledged ${lagS} s later)`
          : `it had ${readyAtMark} ready when they were confirmed`;
      const sinceFigures =
        removedSince === null
          ? `acknowledgements cannot be counted: ${mark.statsWhy ?? why ?? "the management API gives no message counters for this queue"}`
          : removedSince < 0
            ? "acknowledgements since cannot be counted: the queue's counters went backwards (the broker or its statistics restarted)"
            : `consumers acknowledged or took ${removedSince} from ${lagS} s later on`;

      // Taken: the queue held nothing, in statistics newer than the mark (and AMQP, exact, has nothing ready now:
      // statistics held back longer than the wait cannot then claim copies that are still there).
      if (q && now.ready === 0 && unackedNow === 0 && readyStats === 0 && num(q.messages) === 0)
        return out(
          "taken",
          `Queue "${queue}" is empty (0 ready, 0 unacknowledged): everything it held when the sample's copies were confirmed has left it${
            removedSince !== null && removedSince > 0
              ? `; consumers acknowledged or took ${removedSince} from ${lagS} s later on`
              : ""
          }. ${readers.summary}`,
        );
      // Taken: consumers removed at least what the queue held at the mark.
      if (removedSince !== null && removedSince >= 0 && removedSince >= heldAtMark)
        return out(
          "taken",
          `Consumers of queue "${queue}" acknowledged or took ${plural(removedSince, "message")} from ${lagS} s after the sample's copies were confirmed on, at least the ${heldAtMark} it held then (${readyAtMark} ready, ${unackedAtMark ?? 0} unacknowledged); ${nowFigures}. ${readers.summary}`,
        );

      if (now.consumers === 0)
        return out(
          "no_reader",
          `No consumer on queue "${queue}": nothing takes the sample's copies, so their not coming back proves nothing. ${capitalize(markFigures)}; ${sinceFigures}; ${nowFigures}.`,
        );
      if (!q && now.ready === 0)
        return out(
          "unknown",
          `Queue "${queue}" has delivered everything it held to its ${plural(now.consumers, "consumer")} (0 ready), but whether they acknowledged the sample's copies cannot be seen: ${why}.`,
        );
      return out(
        "waiting",
        `${readers.summary.slice(0, -1)}, but the sample's copies may still be there: ${markFigures}; ${sinceFigures}; ${nowFigures}.`,
      );
    },
  };
}

const capitalize = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);
