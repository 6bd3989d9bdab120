/**
 * Mends for two faults of kafkajs 2.2.4 (pinned exactly), for every Kafka client in the project:
 * the console's (`createKafka`, client.ts) and those the e2e specs, test kits and benchmarks make
 * themselves. No "server-only" here: Playwright's specs import it too.
 */
import type { Kafka } from "kafkajs";
import { BrokerError } from "@/lib/brokers/contract/errors";

/**
 * `kafka` with two faults of kafkajs 2.2.4 mended for every cluster made from it (its admin,
 * producers, consumers and the group-less reader): a connect under way is shared by whoever asks
 * meanwhile (`connectOnce`), and a connection looks for requests to send only while one waits
 * (`checkOnlyWhenPending`). `createKafka` does this; a test kit or benchmark that makes its own
 * `new Kafka()` calls it too, so that its clients neither leak sockets nor spin.
 */
export function mendKafkajs(kafka: Kafka): Kafka {
  connectOnce(kafka);
  return kafka;
}

/** The parts of kafkajs's ConnectionPool (kafkajs 2.2.4) `connectOnce` wraps: two connections, 1 for Fetch, 0 for the rest. */
interface InternalConnectionPool {
  pool: Array<{ isConnected(): boolean; requestQueue?: InternalRequestQueue }>;
  getConnection(index?: number): Promise<unknown>;
}
/** The parts of a connection's RequestQueue (kafkajs 2.2.4) `checkOnlyWhenPending` wraps. */
interface InternalRequestQueue {
  pending: unknown[];
  scheduleCheckPendingRequests(): void;
}

export const NOT_TESTED_VERSION =
  "This build's Kafka client is not the version the console was tested with (kafkajs 2.2.4).";

/**
 * kafkajs 2.2.4 re-arms a timer after every look at a connection's queue of requests waiting to be
 * sent (`RequestQueue.scheduleCheckPendingRequests`), at `throttledUntil - Date.now()`, which is
 * negative when the broker never throttled (`throttledUntil` starts at -1): Node runs it after 1 ms
 * and it re-arms itself. From its first response on, every connection woke its process about a
 * thousand times a second for as long as it stayed open, with nothing to send (1.7% of a core for
 * one idle admin client, measured here; kafkajs issues 1704 and 1751), and Node 24 printed a
 * TimeoutNegativeWarning into the console's log at start. With no request waiting there is nothing
 * to look at: `push()` asks for a look when it queues a request, and every response and timeout
 * looks at the queue itself, so the look is asked for only while a request waits.
 */
function checkOnlyWhenPending(queue: InternalRequestQueue | undefined): void {
  if (!queue || !Array.isArray(queue.pending) || typeof queue.scheduleCheckPendingRequests !== "function")
    throw new BrokerError("protocol", {
      message: "kafkajs RequestQueue.scheduleCheckPendingRequests missing",
      userMessage: NOT_TESTED_VERSION,
    });
  const schedule = queue.scheduleCheckPendingRequests;
  queue.scheduleCheckPendingRequests = function (this: InternalRequestQueue) {
    if (this.pending.length > 0) schedule.call(this);
  };
}

/**
 * kafkajs connects a broker's connection on first use without asking whether a connect is already
 * under way (`ConnectionPool.getConnection`, then `Connection.connect`, which opens a new socket
 * each time it is called on a connection not yet connected). Requests sent at once on a connection
 * not yet connected (the Fetches of several partitions, the first on a new broker) each opened a
 * socket; the connection kept the last one and the others stayed open, unknown to kafkajs, until the
 * process ended: `close()` could not give them back. Every cluster made from `kafka` (its admin,
 * producers, consumers and the group-less reader) gets connection pools in which a connect under way
 * is shared by whoever asks meanwhile; its connections also get `checkOnlyWhenPending`.
 */
function connectOnce(kafka: Kafka): void {
  const { sym, factory } = clusterFactory(kafka);
  (kafka as unknown as Record<symbol, unknown>)[sym] = (opts: Record<string, unknown>) => {
    const cluster = factory(opts) as {
      brokerPool?: { connectionPoolBuilder?: { build?: (...a: unknown[]) => Promise<unknown> } };
    };
    const builder = cluster.brokerPool?.connectionPoolBuilder;
    const build = builder?.build;
    if (!builder || typeof build !== "function")
      throw new BrokerError("protocol", {
        message: "kafkajs BrokerPool.connectionPoolBuilder missing",
        userMessage: NOT_TESTED_VERSION,
      });
    builder.build = async (...args: unknown[]) => {
      const pool = (await build.apply(builder, args)) as InternalConnectionPool;
      if (!Array.isArray(pool?.pool) || typeof pool.getConnection !== "function")
        throw new BrokerError("protocol", {
          message: "kafkajs ConnectionPool.getConnection missing",
          userMessage: NOT_TESTED_VERSION,
        });
      for (const connection of pool.pool) checkOnlyWhenPending(connection.requestQueue);
      const getConnection = pool.getConnection;
      const connecting = new Map<number, Promise<unknown>>();
      pool.getConnection = (index = 0) => {
        const c = pool.pool[index];
        if (c?.isConnected()) return Promise.resolve(c);
        let p = connecting.get(index);
        if (!p) {
          p = getConnection.call(pool, index).finally(() => connecting.delete(index));
          connecting.set(index, p);
        }
        return p;
      };
      return pool;
    };
    return cluster;
  };
}

/** kafkajs's private cluster factory on `kafka` (the symbol it is kept under, and the function). */
export function clusterFactory(kafka: Kafka): { sym: symbol; factory: (opts: Record<string, unknown>) => unknown } {
  const sym = Object.getOwnPropertySymbols(kafka).find((s) => s.description === "private:Kafka:createCluster");
  const factory = sym ? (kafka as unknown as Record<symbol, unknown>)[sym] : undefined;
  if (!sym || typeof factory !== "function") {
    throw new BrokerError("protocol", {
      message: "kafkajs internal cluster factory not found (kafkajs upgraded?)",
      userMessage: "This build's Kafka client cannot read topics without a consumer group. Pin kafkajs to 2.2.4.",
    });
  }
  return { sym, factory: factory as (opts: Record<string, unknown>) => unknown };
}
