import { DeleteMessageCommand, ReceiveMessageCommand } from "@aws-sdk/client-sqs";
import { afterAll, describe, expect, it } from "vitest";
import { SqsAdapter } from "@/lib/brokers/sqs/adapter";
import { ELASTICMQ_ENDPOINT, SqsKit, testConfig } from "@/lib/brokers/sqs/test-kit";
import { MANAGED_HEADERS } from "@/lib/connections/managed-headers";

const kit = new SqsKit(ELASTICMQ_ENDPOINT);
/** Three consoles (replicas), each with its own client, as behind a load balancer. */
const replicas = [0, 1, 2].map(
  () =>
    new SqsAdapter(testConfig(ELASTICMQ_ENDPOINT, { queueNamePrefix: kit.prefix }), {
      allManagedHeaders: MANAGED_HEADERS,
    }),
);
afterAll(async () => {
  for (const a of replicas) await a.close();
  await kit.cleanup();
});

const letters = (n: number) =>
  Array.from({ length: n }, (_, i) => ({ body: new TextEncoder().encode(`{"order":${i}}`) }));

describe("sqs: a letter another read holds is never called gone", () => {
  it("reads of one DLQ at the same time: a letter is found, or the read says it may be in flight; never 'gone'", async () => {
    const { dlq } = await kit.dlqByRedrive(letters(6));
    const all = (await replicas[0].browse(dlq, { offset: 0, limit: 50 })).letters;
    expect(all).toHaveLength(6);
    const gone: string[] = [];
    let held = 0;
    let found = 0;
    for (let round = 0; round < 4; round++) {
      await Promise.all(
        replicas.flatMap((a, r) => [
          a.browse(dlq, { offset: 0, limit: 50 }).catch(() => undefined),
          a.getLetter(dlq, all[5].id).then(
            (l) => {
              if (l === null) gone.push(`round ${round}, replica ${r}: the last letter was called gone`);
              else found++;
            },
            (e) => {
              // Held by another read, or released by it after this read had passed (then still
              // waiting): either way out of this read's reach, and said so.
              expect(e).toMatchObject({ kind: "throttled", userMessage: expect.stringContaining("not called gone") });
              held++;
            },
          ),
        ]),
      );
    }
    // How many found it and how many were told it may be in flight depends on how the reads
    // overlapped (the next test makes each answer happen); none may call it gone.
    expect(gone).toEqual([]);
    expect(found + held).toBe(12);
  }, 300_000);

  it("a letter that left, with nothing else in flight, is gone (null); while a consumer holds the others it is not", async () => {
    const { dlq, dlqUrl } = await kit.dlqByRedrive(letters(3));
    const all = (await replicas[0].browse(dlq, { offset: 0, limit: 50 })).letters;
    // A consumer holds every letter for 30 s: the one asked for may be among them.
    const got = await kit.sqs.send(
      new ReceiveMessageCommand({ QueueUrl: dlqUrl, MaxNumberOfMessages: 10, VisibilityTimeout: 30 }),
    );
    expect(got.Messages).toHaveLength(3);
    await expect(replicas[1].getLetter(dlq, all[0].id)).rejects.toMatchObject({
      kind: "throttled",
      userMessage: expect.stringContaining("3 letters were in flight, held by another reader or consumer"),
    });
    // The consumer deletes them: now the letter is gone, and said so.
    for (const m of got.Messages ?? [])
      await kit.sqs.send(new DeleteMessageCommand({ QueueUrl: dlqUrl, ReceiptHandle: m.ReceiptHandle }));
    expect(await replicas[1].getLetter(dlq, all[0].id)).toBeNull();
  }, 120_000);

  it("a page that ends short because a consumer holds letters says how many are on no page, and why", async () => {
    const { dlq, dlqUrl } = await kit.dlqByRedrive(letters(8));
    const whole = await replicas[0].browse(dlq, { offset: 0, limit: 50 });
    expect(whole.letters).toHaveLength(8);
    expect(whole.unreached ?? null).toBeNull();

    const got = await kit.sqs.send(
      new ReceiveMessageCommand({ QueueUrl: dlqUrl, MaxNumberOfMessages: 3, VisibilityTimeout: 30 }),
    );
    expect(got.Messages).toHaveLength(3);
    const page = await replicas[1].browse(dlq, { offset: 0, limit: 50 });
    expect(page.letters).toHaveLength(5);
    expect(page.hasMore).toBe(false);
    // SQS's depth counts the visible letters (the DLQ's head adds "in flight 3"): the page alone would
    // read "letters 1–5 of ~5" and end there.
    expect(page.depth).toBe(5);
    expect(page.unreached).toEqual({
      reason: "3 letters were in flight, held by another reader or consumer.",
      unread: 3,
    });
    // A page that is not the last one the read reached says nothing: the next page may hold them.
    const first = await replicas[2].browse(dlq, { offset: 0, limit: 2 });
    expect(first.hasMore).toBe(true);
    expect(first.unreached ?? null).toBeNull();

    // The consumer deletes them: the DLQ holds 5, every one on the page, and nothing is said.
    for (const m of got.Messages ?? [])
      await kit.sqs.send(new DeleteMessageCommand({ QueueUrl: dlqUrl, ReceiptHandle: m.ReceiptHandle }));
    const after = await replicas[1].browse(dlq, { offset: 0, limit: 50 });
    expect(after.letters).toHaveLength(5);
    expect(after.unreached ?? null).toBeNull();
  }, 120_000);
});
