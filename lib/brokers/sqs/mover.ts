import "server-only";
/**
 * moveLetters on SQS: the shared walk (walk.ts: receive → verify → send → delete, never delete
 * before a confirmed send) delivering to a queue with SendMessageBatch (standard; per-entry results)
 * or SendMessage one at a time (FIFO, and repaired letters). What a letter is sent as and where its
 * origin is: send-entry.ts.
 *
 * Targets. An explicit target that does not exist throws not_found before anything is received; an
 * origin that does not exist (any more) fails its letters. Each target is resolved once per call.
 *
 * The window. The hold is refreshed to the full move timeout right before each send, and the
 * timeout is sized to outlast the longest send the client can make (holds.ts). Should a send still
 * outlast it (a stalled network), the delete fails: the letter is then in the target (tagged with
 * its x-dlq-replay-id) AND still in the DLQ, and the result is "failed" with a reason that says
 * exactly that. Nothing is lost; the duplicate is tagged.
 *
 * Repair (MoveRequest.repair). The copy is made by repair.ts (new body, attributes set
 * and removed, correlation id) plus the markers, x-dlq-repaired-by-operation among them. A repaired
 * letter is sent on its own (SendMessage, never in a batch); SQS's answer gives the copy's MessageId
 * (`MoveResult.copyId`). A repair without `beforeRemove` is refused (bad_request) before the DLQ
 * is even opened. Checks that need no letter (move-rules' repairRefusal with
 * SQS's own rules) fail the letter before its target is resolved; a FIFO letter refused so holds
 * back the later letters of its group, as any letter that stays.
 *
 * The archive hook. With `opts.beforeRemove`, every letter whose copy was sent (repaired or not)
 * hands the original's complete copy, as a discard archives it, to it (one at a time, in DLQ order:
 * move-rules' OneAtATime), and only once that resolved is the original deleted. If it throws, the
 * original is released and stays in the DLQ ("failed", in move-rules' copyNotArchived words: the
 * copy is out, so it is now a duplicate).
 */
import { SendMessageBatchCommand, SendMessageCommand, type SendMessageBatchRequestEntry } from "@aws-sdk/client-sqs";
import { BrokerError } from "@/lib/brokers/contract/errors";
import type { MoveOptions, MoveRequest, MoveResult } from "@/lib/brokers/contract/move";
import { moveWords, OneAtATime } from "@/lib/brokers/move-rules";
import { letterCopyOf } from "@/lib/brokers/sqs/letter-copy";
import { sqsRepairRefusal } from "@/lib/brokers/sqs/repair";
import { entrySize, originFor, sendEntryFor } from "@/lib/brokers/sqs/send-entry";
import type { Delivered, Ready, SqsMoveContext } from "@/lib/brokers/sqs/step";
import type { Attrs } from "@/lib/brokers/sqs/summary";
import { forRequestedSqsLetters } from "@/lib/brokers/sqs/walk";

/** republish.ts reads the envelope a discard or repair archived. */
export type { SqsEnvelope } from "@/lib/brokers/sqs/letter-copy";

interface Target {
  name: string;
  url: string;
  fifo: boolean;
}

type Resolved = { ok: true; target: Target } | { ok: false; reason: string };
type Send = { target: Target; entry: Omit<SendMessageBatchRequestEntry, "Id"> };

const isFifoQueue = (name: string, attrs: Attrs) => attrs.FifoQueue === "true" || name.endsWith(".fifo");
const errText = (e: BrokerError) => e.userMessage.replace(/\.$/, "");

export function moveSqsLetters(
  c: SqsMoveContext,
  dlq: string,
  requests: MoveRequest[],
  opts: MoveOptions = {},
): AsyncIterable<MoveResult> {
  const beforeRemove = opts.beforeRemove;
  const words = moveWords("move", "DLQ");
  const archive = new OneAtATime();
  // Targets by name (and account), resolved once per move.
  const targets = new Map<string, Promise<Resolved>>();
  const resolve = (name: string, account?: string): Promise<Resolved> => {
    const key = `${account ?? ""}/${name}`;
    let p = targets.get(key);
    if (!p) {
      p = (async (): Promise<Resolved> => {
        try {
          const url = await c.urlOf(name, account);
          return { ok: true, target: { name, url, fifo: isFifoQueue(name, await c.queueAttrs(name, url)) } };
        } catch (e) {
          const be = e instanceof BrokerError ? e : c.err(e, name);
          if (be.kind === "not_found")
            return {
              ok: false,
              reason: `The origin queue "${name}" does not exist (it may have been deleted): the letter stays in the DLQ. Pick another target.`,
            };
          throw be;
        }
      })();
      targets.set(key, p);
    }
    return p;
  };

  /**
   * After a copy was sent: the original's complete copy handed to `beforeRemove` (one at a time, in
   * DLQ order), or why the original stays. A repaired letter's copy id is SQS's new MessageId.
   */
  const archiveOriginal = async (b: Ready<MoveRequest, Send>, newMessageId: string): Promise<Delivered> => {
    const copyId = b.f.req.repair ? newMessageId : undefined;
    const copy = letterCopyOf(b.f.m, b.f.req.letterId, c.letterOptions?.());
    try {
      await archive.run(() => beforeRemove!(copy));
      return { ok: true, note: newMessageId, ...(copyId !== undefined ? { copyId } : {}) };
    } catch (e) {
      return {
        ok: false,
        sent: true,
        reason: words.copyNotArchived(e, `queue "${b.payload.target.name}"`, copyId || null),
      };
    }
  };

  /** Sends one batch (one target); one result per letter, in order. */
  const deliver = async (live: Array<Ready<MoveRequest, Send>>) => {
    const target = live[0].payload.target;
    const sent = new Map<number, string>(); // index → new MessageId
    const sendFailed = new Map<number, string>();
    let fatal: BrokerError | null = null;
    try {
      if (target.fifo || live.length === 1) {
        const r = await c.sqs.send(new SendMessageCommand({ QueueUrl: target.url, ...live[0].payload.entry }));
        sent.set(0, r.MessageId ?? "");
      } else {
        const r = await c.sqs.send(
          new SendMessageBatchCommand({
            QueueUrl: target.url,
            Entries: live.map((b, i) => ({ Id: String(i), ...b.payload.entry })),
          }),
        );
        for (const s of r.Successful ?? []) sent.set(Number(s.Id), s.MessageId ?? "");
        for (const f of r.Failed ?? [])
          sendFailed.set(Number(f.Id), `SQS refused it (${f.Code ?? "error"}${f.Message ? `: ${f.Message}` : ""})`);
      }
    } catch (e) {
      const be = c.err(e, target.name);
      if (be.kind === "unreachable" || be.kind === "auth" || be.kind === "throttled") fatal = be;
      live.forEach((_, i) => {
        sendFailed.set(
          i,
          `${errText(be)}. If the request reached SQS before it failed, a copy tagged with this letter's x-dlq-replay-id may be in "${target.name}" too`,
        );
      });
    }
    const results: Delivered[] = [];
    for (const [i, b] of live.entries()) {
      if (!sent.has(i))
        results.push({
          ok: false,
          reason: `Not sent to "${target.name}": ${sendFailed.get(i) ?? "unknown error"}. The letter stays in the DLQ.`,
        });
      else if (beforeRemove) results.push(await archiveOriginal(b, sent.get(i)!));
      else results.push({ ok: true, note: sent.get(i)! });
    }
    return { fatal, results };
  };

  const walk = forRequestedSqsLetters<MoveRequest, Send, MoveResult>(
    c,
    dlq,
    requests,
    opts.signal,
    {
      verb: "move",
      heldKeys: opts.heldKeys ?? [],
      keepsGroupOrder: true,
      // Explicit targets must exist before anything is received.
      async before(d) {
        for (const name of new Set(requests.flatMap((r) => (r.target.kind === "queue" ? [r.target.name] : [])))) {
          const r = await resolve(name);
          if (!r.ok)
            throw new BrokerError("not_found", {
              userMessage: `The target queue "${name}" does not exist on this connection (region ${d.dlqArn?.region || c.region}). Nothing was moved: check the name, or create the queue first.`,
            });
        }
      },
      async prepare(f, d) {
        // Checked on the received letter, not before: a refused FIFO letter must hold back the later
        // letters of its group like any letter that stays (and the walk reads the DLQ anyway).
        const refusal = f.req.repair ? sqsRepairRefusal(f.req.repair, c.isManagedHeader) : null;
        if (refusal) return { stays: { reason: refusal, destination: null } };
        let r: Resolved;
        if (f.req.target.kind === "queue") r = await resolve(f.req.target.name);
        else {
          const o = originFor(f.m, d.summary.origins, d.dlqArn, c.region);
          r = "reason" in o ? { ok: false, reason: o.reason } : await resolve(o.name, o.account);
        }
        if (!r.ok) return { stays: { reason: r.reason, destination: null } };
        const destination = `queue ${r.target.name}`;
        const s = sendEntryFor(f.m, f.req.markers, r.target, d.dlqFifo, f.req.repair);
        if ("reason" in s) return { stays: { reason: s.reason, destination } };
        const size = entrySize(s.entry);
        if (f.req.repair && size > c.maxBatchBytes) {
          return {
            stays: {
              reason: `Not repaired: the repaired message would be ${size} bytes (payload and message attributes), more than the ${c.maxBatchBytes} bytes SQS accepts here. Nothing was published; the letter stays in the DLQ.`,
              destination,
            },
          };
        }
        // A repaired letter goes alone: its original is archived and deleted before the next one is sent.
        return {
          batchKey: r.target.url,
          single: r.target.fifo || Boolean(f.req.repair),
          size,
          payload: { target: r.target, entry: s.entry },
          destination,
          target: r.target.name,
        };
      },
      deliver,
      notDeleted: (b, newMessageId, code) =>
        b.f.req.repair
          ? `The repaired copy was sent to "${b.payload.target.name}" (new MessageId ${newMessageId}) and the original archived, but SQS did not delete the original from the DLQ (${code}): its receipt handle had expired. The original is still in the DLQ as well; the copy carries x-dlq-replay-id ${b.f.req.markers.replayId}. Nothing is lost; check before repairing it again.`
          : `Sent to "${b.payload.target.name}" (new MessageId ${newMessageId}), but SQS did not delete it from the DLQ (${code}): its receipt handle had expired. The letter is now in both queues; the copy in "${b.payload.target.name}" carries x-dlq-replay-id ${b.f.req.markers.replayId}. Nothing is lost; check before redriving it again.`,
    },
    (s): MoveResult => ({
      letterId: s.req.letterId,
      outcome: s.outcome === "done" ? "moved" : s.outcome,
      destination: s.destination,
      target: s.target,
      reason: s.reason,
      orderingKey: s.orderingKey,
      ...(s.req.repair ? { copyId: s.copyId ?? null } : {}),
      ...(s.retryLater ? { retryLater: true } : {}),
    }),
  );

  if (!requests.some((r) => r.repair)) return walk;
  return (async function* () {
    // The original must be archived before it leaves the DLQ: without the hook, nothing is read.
    if (!beforeRemove) {
      throw new BrokerError("bad_request", {
        message: "moveLetters: a repair request without MoveOptions.beforeRemove",
        userMessage:
          "A repair needs the original's copy to be archived before it leaves the DLQ, and no archive was given. Nothing was read or sent.",
      });
    }
    yield* walk;
  })();
}
