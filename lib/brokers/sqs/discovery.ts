import "server-only";
/**
 * DLQ discovery: queues named as `deadLetterTargetArn` in other queues' redrive policies (ListQueues
 * with the connection's prefix, every page, then GetQueueAttributes a few at a time).
 */
import { GetQueueAttributesCommand, ListQueuesCommand, type SQSClient } from "@aws-sdk/client-sqs";
import { parseRedrivePolicy } from "@/lib/brokers/sqs/summary";
import { queueNameOfArn } from "@/lib/brokers/sqs/letter";

/** Runs `fn` over `items` with at most `n` at a time, keeping order. */
export async function mapLimit<T, R>(items: T[], n: number, fn: (x: T) => Promise<R>): Promise<R[]> {
  const out = new Array<R>(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i]);
    }
  };
  await Promise.all(Array.from({ length: Math.min(n, items.length) }, worker));
  return out;
}

export const queueNameOfUrl = (url: string) => decodeURIComponent(url.replace(/\/+$/, "").split("/").pop() ?? url);

/** `onRequest` is called before each ListQueues page (inspect counts its requests). */
export async function listQueueUrls(
  sqs: SQSClient,
  prefix: string | undefined,
  maxQueues: number,
  o: { onRequest?: () => void; abortSignal?: AbortSignal } = {},
): Promise<{ urls: string[]; truncated: boolean }> {
  const urls: string[] = [];
  let token: string | undefined;
  do {
    o.onRequest?.();
    const out = await sqs.send(
      new ListQueuesCommand({ QueueNamePrefix: prefix || undefined, MaxResults: 1000, NextToken: token }),
      { abortSignal: o.abortSignal },
    );
    urls.push(...(out.QueueUrls ?? []));
    token = out.NextToken;
    if (urls.length >= maxQueues) return { urls: urls.slice(0, maxQueues), truncated: true };
  } while (token);
  return { urls, truncated: false };
}

/** DLQ name → names of the queues whose redrive policy targets it (same account and region only). */
export async function discoverDlqs(
  sqs: SQSClient,
  urls: string[],
  concurrency: number,
): Promise<Map<string, string[]>> {
  const policies = await mapLimit(urls, concurrency, async (QueueUrl) => {
    try {
      return {
        source: queueNameOfUrl(QueueUrl),
        policy: (await sqs.send(new GetQueueAttributesCommand({ QueueUrl, AttributeNames: ["RedrivePolicy"] })))
          .Attributes?.RedrivePolicy,
      };
    } catch (e) {
      // A queue deleted between ListQueues and now is simply not a source any more.
      if ((e as { name?: string }).name === "QueueDoesNotExist") return null;
      throw e;
    }
  });
  return dlqTargetsOf(policies.filter((p) => p !== null));
}

/** DLQ name → names of the queues whose redrive policy targets it, from each queue's RedrivePolicy attribute. Pure. */
export function dlqTargetsOf(
  policies: Iterable<{ source: string; policy: string | undefined }>,
): Map<string, string[]> {
  const found = new Map<string, string[]>();
  for (const { source, policy } of policies) {
    const p = parseRedrivePolicy(policy);
    const dlq = p && queueNameOfArn(p.deadLetterTargetArn);
    if (!dlq) continue;
    const list = found.get(dlq) ?? [];
    list.push(source);
    found.set(dlq, list);
  }
  for (const l of found.values()) l.sort();
  return found;
}
