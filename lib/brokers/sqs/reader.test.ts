import { describe, expect, it } from "vitest";
import type { Message, SQSClient } from "@aws-sdk/client-sqs";
import { HeldLetters, receiveUpTo, type ReaderOptions } from "@/lib/brokers/sqs/reader";

/** A scripted queue: hands out each letter once, at most MaxNumberOfMessages per call. */
function queueOf(n: number) {
  const msgs: Message[] = Array.from({ length: n }, (_, i) => ({
    MessageId: `id-${i}`,
    ReceiptHandle: `rh-${i}`,
    Body: `b-${i}`,
  }));
  const asked: number[] = [];
  let next = 0;
  const sqs = {
    send: async (cmd: { constructor: { name: string }; input: Record<string, unknown> }) => {
      if (cmd.constructor.name !== "ReceiveMessageCommand") return {};
      const max = Number(cmd.input.MaxNumberOfMessages);
      asked.push(max);
      const out = msgs.slice(next, next + max);
      next += out.length;
      return { Messages: out };
    },
  } as unknown as SQSClient;
  return { sqs, asked };
}

const opts: ReaderOptions = {
  queueUrl: "q",
  visibilityTimeout: 30,
  waitSeconds: 0,
  concurrency: 1,
  maxEmptyReceives: 1,
};

describe("receiveUpTo", () => {
  it("asks each call for as many as askUpTo allows, and stops once `want` letters are in", async () => {
    const { sqs, asked } = queueOf(7);
    const held = new HeldLetters(sqs, opts);
    const got: string[] = [];
    const r = await receiveUpTo(sqs, held, 2, opts, (m) => got.push(m.MessageId!), 25);
    // One call of 10: a depth of 2 that was short by 5 costs nothing, and nothing is asked again.
    expect(asked).toEqual([10]);
    expect(got).toEqual(["id-0", "id-1", "id-2", "id-3", "id-4", "id-5", "id-6"]);
    expect(r).toEqual({ received: 7, exhausted: false });
    expect(held.count).toBe(7);
  });

  it("without askUpTo, never asks for more than `want`", async () => {
    const { sqs, asked } = queueOf(30);
    const held = new HeldLetters(sqs, opts);
    const r = await receiveUpTo(sqs, held, 13, opts, () => undefined);
    expect(asked).toEqual([10, 3]);
    expect(r).toEqual({ received: 13, exhausted: false });
  });

  it("want 0 receives nothing; a short queue is exhausted", async () => {
    const a = queueOf(3);
    expect(await receiveUpTo(a.sqs, new HeldLetters(a.sqs, opts), 0, opts, () => undefined, 10)).toEqual({
      received: 0,
      exhausted: false,
    });
    expect(a.asked).toEqual([]);
    const b = queueOf(3);
    expect(await receiveUpTo(b.sqs, new HeldLetters(b.sqs, opts), 5, opts, () => undefined)).toEqual({
      received: 3,
      exhausted: true,
    });
  });
});
