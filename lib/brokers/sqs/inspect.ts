import "server-only";
/**
 * The sampler's look at an SQS connection (`BrokerAdapter.inspect`): ListQueues (every page, with
 * the connection's prefix), one GetQueueAttributes "All" per queue, a few at a time, and a lookup by
 * name (GetQueueUrl, then GetQueueAttributes) only for configured DLQs and redrive targets the
 * listing did not give. SQS has no batch attribute call, so this is the floor. It never receives a
 * message: the counts come from attributes, and no receive count changes.
 */
import { GetQueueAttributesCommand, GetQueueUrlCommand, type SQSClient } from "@aws-sdk/client-sqs";
import type { SqsConnectionConfig } from "@/lib/config";
import type { BrokerError } from "@/lib/brokers/contract/errors";
import type { BrokerInspection, InspectOptions } from "@/lib/brokers/contract/inspection";
import { listQueueUrls, mapLimit, queueNameOfUrl } from "@/lib/brokers/sqs/discovery";
import {
  checkConnection,
  lookupsNeeded,
  type ConnectionScope,
  type Seen,
  type SeenQueue,
} from "@/lib/brokers/sqs/config-checks";
import type { Attrs } from "@/lib/brokers/sqs/summary";

/** As many queues as `listDlqs` considers. */
const MAX_QUEUES = 20_000;

export interface SqsInspectContext {
  sqs: SQSClient;
  config: SqsConnectionConfig;
  /** Attribute reads in flight at once. */
  concurrency: number;
  err(e: unknown, queue?: string): BrokerError;
}

export async function inspectSqs(c: SqsInspectContext, opts: InspectOptions): Promise<BrokerInspection> {
  const abortSignal = opts.signal;
  let calls = 0;
  const scope: ConnectionScope = {
    configured: c.config.dlqs.map((d) => d.name),
    discover: c.config.discover,
    queueNamePrefix: c.config.queueNamePrefix,
  };

  /** Runs one request; a queue that does not exist (deleted meanwhile, or never created) is null. */
  const request = async <T>(queue: string | undefined, run: () => Promise<T>): Promise<T | null> => {
    calls++;
    try {
      return await run();
    } catch (e) {
      if (abortSignal?.aborted) throw abortSignal.reason;
      const mapped = c.err(e, queue);
      if (mapped.kind === "not_found") return null;
      throw mapped;
    }
  };
  const attrsOf = (name: string, url: string) =>
    request(
      name,
      async () =>
        ((await c.sqs.send(new GetQueueAttributesCommand({ QueueUrl: url, AttributeNames: ["All"] }), { abortSignal }))
          .Attributes ?? {}) as Attrs,
    );

  let urls: string[];
  try {
    ({ urls } = await listQueueUrls(c.sqs, c.config.queueNamePrefix, MAX_QUEUES, {
      onRequest: () => calls++,
      abortSignal,
    }));
  } catch (e) {
    if (abortSignal?.aborted) throw abortSignal.reason;
    throw c.err(e);
  }

  const listed: Seen["listed"] = new Map();
  await mapLimit(urls, c.concurrency, async (url) => {
    const name = queueNameOfUrl(url);
    const attrs = await attrsOf(name, url);
    if (attrs) listed.set(name, { url, attrs });
  });

  const lookedUp: Seen["lookedUp"] = new Map();
  await mapLimit(lookupsNeeded(scope, listed), c.concurrency, async (name) => {
    const url = await request(
      name,
      async () => (await c.sqs.send(new GetQueueUrlCommand({ QueueName: name }), { abortSignal })).QueueUrl ?? null,
    );
    const attrs = url ? await attrsOf(name, url) : null;
    lookedUp.set(name, url && attrs ? ({ url, attrs } satisfies SeenQueue) : null);
  });

  return { ...checkConnection(scope, { listed, lookedUp }), calls };
}
