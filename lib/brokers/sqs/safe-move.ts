import "server-only";
/**
 * Move to safety on SQS: a chained DLQ (one with a redrive policy of its own) moves a letter on to
 * its own DLQ once a receive pushes ApproximateReceiveCount past maxReceiveCount, and every console
 * read is a receive. Its letters are moved into `<dlq>-safe` (FIFO: `<base>-safe.fifo`), a queue
 * without a redrive policy, before anything reads them.
 *
 * Why a message move task. A receive → send → delete mover would itself receive each letter once
 * more, and a letter already at maxReceiveCount would be moved on by that very receive.
 * StartMessageMoveTask (SourceArn the DLQ, DestinationArn the safe queue, no rate limit) moves
 * letters without a receive that counts against the DLQ's redrive policy; SQS deletes each from the
 * DLQ only after it is in the destination. Seen on ElasticMQ 1.7: MessageId, body, message
 * attributes (types included), SentTimestamp, SenderId and DeadLetterQueueSourceArn (the original
 * source queue) are kept; ApproximateReceiveCount and ApproximateFirstReceiveTimestamp start again
 * in the safe queue; FIFO queues' letters are not moved at all (the task reports COMPLETED with
 * nothing moved: refused here, letters untouched).
 *
 * Progress comes from ListMessageMoveTasks, polled; a running task of the same DLQ to the same
 * destination (a move started earlier, e.g. before the console restarted) is followed instead of
 * started again; one to another destination is refused. `signal` cancels the task
 * (CancelMessageMoveTask). A caller that stops iterating without `signal` leaves the task running
 * on SQS: it only ever moves letters to safety.
 */
import {
  CancelMessageMoveTaskCommand,
  CreateQueueCommand,
  GetQueueAttributesCommand,
  ListMessageMoveTasksCommand,
  StartMessageMoveTaskCommand,
  type ListMessageMoveTasksResultEntry,
  type SQSClient,
} from "@aws-sdk/client-sqs";
import { BrokerError } from "@/lib/brokers/contract/errors";
import type { DlqSummary } from "@/lib/brokers/contract/dlq";
import type { SafeMoveEvent, SafeMovePlan } from "@/lib/brokers/contract/safe-move";
import {
  humanSeconds,
  parseRedrivePolicy,
  retentionOf,
  DEFAULT_RETENTION_SECONDS,
  type Attrs,
} from "@/lib/brokers/sqs/summary";
import { queueNameOfArn } from "@/lib/brokers/sqs/letter";

const SAFE_SUFFIX = "-safe";
const MAX_QUEUE_NAME = 80;
const QUEUE_NAME = /^[A-Za-z0-9_-]{1,80}$/;

/** The safe queue of a DLQ: `<dlq>-safe`, FIFO `<base>-safe.fifo`. */
export function safeQueueNameOf(dlq: string): string {
  return dlq.endsWith(".fifo") ? `${dlq.slice(0, -".fifo".length)}${SAFE_SUFFIX}.fifo` : `${dlq}${SAFE_SUFFIX}`;
}

/** The DLQ a queue named like a safe queue belongs to (`x-safe` → `x`, `x-safe.fifo` → `x.fifo`), else null. */
export function dlqOfSafeQueueName(name: string): string | null {
  const fifo = name.endsWith(".fifo");
  const base = fifo ? name.slice(0, -".fifo".length) : name;
  if (!base.endsWith(SAFE_SUFFIX) || base.length === SAFE_SUFFIX.length) return null;
  return `${base.slice(0, -SAFE_SUFFIX.length)}${fifo ? ".fifo" : ""}`;
}

export function isValidQueueName(name: string): boolean {
  const base = name.endsWith(".fifo") ? name.slice(0, -".fifo".length) : name;
  return name.length <= MAX_QUEUE_NAME && QUEUE_NAME.test(base);
}

/** The IAM actions a move to safety needs, each with the queue (or key) it applies to. */
export function safeMovePermissions(dlq: string, target: string, dlqAttrs: Attrs): string[] {
  const out = [
    `sqs:GetQueueAttributes on ${dlq} and ${target}`,
    `sqs:GetQueueUrl on ${target} (whether it exists)`,
    `sqs:CreateQueue on ${target} (when it does not exist yet)`,
    `sqs:StartMessageMoveTask, sqs:ListMessageMoveTasks and sqs:CancelMessageMoveTask on ${dlq}`,
    `sqs:ReceiveMessage and sqs:DeleteMessage on ${dlq} (the move task takes letters out of the DLQ with the console's permissions)`,
    `sqs:SendMessage on ${target}`,
  ];
  if (dlqAttrs.KmsMasterKeyId) {
    out.push(
      `kms:Decrypt on the DLQ's KMS key ${dlqAttrs.KmsMasterKeyId}`,
      `kms:GenerateDataKey and kms:Decrypt on the KMS key of ${target} (the same key when the console creates it)`,
    );
  }
  return out;
}

/** Attributes of a new safe queue: the DLQ's retention, size limit, encryption and FIFO settings, as far as the server reports them; never a redrive policy. */
export function safeQueueAttributes(dlqAttrs: Attrs, fifo: boolean): Record<string, string> {
  const copy = ["MessageRetentionPeriod", "MaximumMessageSize", "KmsMasterKeyId", "KmsDataKeyReusePeriodSeconds"];
  if (fifo) copy.push("ContentBasedDeduplication", "DeduplicationScope", "FifoThroughputLimit");
  const out: Record<string, string> = {};
  for (const k of copy) if (dlqAttrs[k] !== undefined) out[k] = dlqAttrs[k]!;
  if (!dlqAttrs.KmsMasterKeyId && dlqAttrs.SqsManagedSseEnabled === "true") out.SqsManagedSseEnabled = "true";
  if (fifo) out.FifoQueue = "true";
  return out;
}

export interface SafeMoveContext {
  sqs: SQSClient;
  /** The server supports message move tasks (the adapter has `safeMove` only then). */
  enabled: boolean;
  displayName: string;
  /** The DLQ, as describeDlq sees it; throws not_found. */
  describe(name: string): Promise<{ url: string; attrs: Attrs; summary: DlqSummary }>;
  /** Any queue by name with all its attributes, or null when it does not exist. */
  lookup(name: string): Promise<{ url: string; attrs: Attrs } | null>;
  /** A queue the console just created: remember its URL. */
  created(name: string, url: string): void;
  err(e: unknown, queue?: string): BrokerError;
  pollMs: number;
  /** MaxNumberOfMessagesPerSecond of the task; undefined: SQS's own, fastest rate. */
  maxPerSecond?: number;
}

const letters = (n: number) => `${n.toLocaleString("en-US")} letter${n === 1 ? "" : "s"}`;

function notOffered(c: SafeMoveContext): BrokerError {
  return new BrokerError("bad_request", {
    userMessage: `${c.displayName} cannot move letters to safety: this SQS server does not support message move tasks (StartMessageMoveTask), and moving letters by receiving them would itself count as a read.`,
  });
}

const isFifo = (s: DlqSummary) => s.queueType === "fifo";

export async function planSqsSafeMove(c: SafeMoveContext, dlq: string): Promise<SafeMovePlan> {
  if (!c.enabled) throw notOffered(c);
  const d = await c.describe(dlq);
  const target = safeQueueNameOf(dlq);
  if (!isValidQueueName(target)) {
    throw new BrokerError("bad_request", {
      userMessage: `The safe queue for "${dlq}" would be named "${target}", longer than the ${MAX_QUEUE_NAME} characters SQS allows. Create a queue without a redrive policy by hand and move the letters there.`,
    });
  }
  const t = await c.lookup(target);
  const r = retentionOf(d.attrs);
  const retention = r.reported
    ? `the same retention as "${dlq}" (${humanSeconds(r.seconds)})`
    : `the same retention as "${dlq}" where the server reports it (this one does not, so SQS's default of ${humanSeconds(DEFAULT_RETENTION_SECONDS)} applies)`;
  const onward = d.summary.readRisk?.onwardQueue;
  const how = `SQS moves the letters with a message move task, which does not count as a read${onward ? `, so none is pushed on to "${onward}"` : ""}. Each letter keeps its body, MessageId and message attributes; its receive count starts again in the new queue.`;
  let description: string;
  const fifoNote = isFifo(d.summary)
    ? " Some SQS servers (ElasticMQ) do not move FIFO letters with a move task: the console then says so, and the letters stay where they are."
    : "";
  if (!t) {
    description = `A new ${isFifo(d.summary) ? "FIFO" : "standard"} queue "${target}" with no redrive policy, so reading it moves nothing on: letters stay there until they are redriven or discarded. It gets ${retention}. ${how}${fifoNote}`;
  } else if (parseRedrivePolicy(t.attrs.RedrivePolicy)) {
    description = `"${target}" exists and has a redrive policy of its own, so reading it would not be safe either: the move will be refused. Remove its redrive policy (or delete the queue) first.`;
  } else {
    description = `"${target}" exists already (an earlier move to safety, or made by hand) and has no redrive policy, so reading it moves nothing on. The letters are added to it. ${how}${fifoNote}`;
  }
  return {
    target,
    targetExists: t !== null,
    description,
    permissions: safeMovePermissions(dlq, target, d.attrs),
    depth: d.summary.depth,
  };
}

function refuse(userMessage: string): BrokerError {
  return new BrokerError("bad_request", { userMessage });
}

const pause = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve) => {
    if (signal?.aborted) return resolve();
    const t = setTimeout(done, ms);
    function done() {
      clearTimeout(t);
      signal?.removeEventListener("abort", done);
      resolve();
    }
    signal?.addEventListener("abort", done, { once: true });
  });

/** Checks and creates the target; throws before anything moves when the move cannot be safe. */
async function prepareTarget(
  c: SafeMoveContext,
  dlq: string,
  d: { attrs: Attrs; summary: DlqSummary },
  target: string,
): Promise<{ arn: string; existing: boolean }> {
  if (target === dlq)
    refuseNow(
      `The letters of "${dlq}" cannot be moved to safety into "${dlq}" itself. Move them to "${safeQueueNameOf(dlq)}".`,
    );
  if (!isValidQueueName(target))
    refuseNow(
      `"${target}" is not a valid SQS queue name (letters, digits, - and _, at most ${MAX_QUEUE_NAME} characters, FIFO queues ending in .fifo).`,
    );
  const fifo = isFifo(d.summary);
  if (fifo !== target.endsWith(".fifo")) {
    refuseNow(
      fifo
        ? `"${dlq}" is a FIFO queue: its letters can only be moved to safety into a FIFO queue (a name ending in .fifo), such as "${safeQueueNameOf(dlq)}".`
        : `"${dlq}" is a standard queue: its letters cannot be moved into the FIFO queue "${target}". Use "${safeQueueNameOf(dlq)}".`,
    );
  }
  const t = await c.lookup(target);
  if (t) {
    const p = parseRedrivePolicy(t.attrs.RedrivePolicy);
    if (p) {
      refuseNow(
        `"${target}" has a redrive policy of its own (to "${queueNameOfArn(p.deadLetterTargetArn) ?? p.deadLetterTargetArn}" after ${p.maxReceiveCount ?? "?"} receives), so reading it would move letters on just as reading "${dlq}" would. Nothing was moved. Remove its redrive policy or choose another queue.`,
      );
    }
    if (!t.attrs.QueueArn)
      throw new BrokerError("protocol", {
        userMessage: `SQS did not report the ARN of "${target}", which the move task needs. Nothing was moved.`,
      });
    return { arn: t.attrs.QueueArn, existing: true };
  }
  return { arn: "", existing: false };
}

function refuseNow(userMessage: string): never {
  throw refuse(userMessage);
}

async function createTarget(
  c: SafeMoveContext,
  target: string,
  d: { attrs: Attrs; summary: DlqSummary },
): Promise<string> {
  try {
    const { QueueUrl } = await c.sqs.send(
      new CreateQueueCommand({ QueueName: target, Attributes: safeQueueAttributes(d.attrs, isFifo(d.summary)) }),
    );
    if (!QueueUrl) throw new Error("CreateQueue returned no QueueUrl");
    c.created(target, QueueUrl);
    const arn = (await c.sqs.send(new GetQueueAttributesCommand({ QueueUrl, AttributeNames: ["QueueArn"] }))).Attributes
      ?.QueueArn;
    if (!arn)
      throw new BrokerError("protocol", {
        userMessage: `SQS did not report the ARN of the new queue "${target}", which the move task needs. Nothing was moved.`,
      });
    return arn;
  } catch (e) {
    const m = c.err(e, target);
    if (m.kind === "bad_request")
      throw refuse(
        `SQS refused to create the safe queue "${target}" (${(e as { name?: string }).name ?? "refused"}). Nothing was moved. Create a queue without a redrive policy by hand, or check that the console may call sqs:CreateQueue.`,
      );
    throw m;
  }
}

async function tasksOf(c: SafeMoveContext, dlq: string, sourceArn: string): Promise<ListMessageMoveTasksResultEntry[]> {
  try {
    return (await c.sqs.send(new ListMessageMoveTasksCommand({ SourceArn: sourceArn, MaxResults: 10 }))).Results ?? [];
  } catch (e) {
    throw c.err(e, dlq);
  }
}

/**
 * Our task among the DLQ's most recent ones (newest first). AWS gives TaskHandle only while a task
 * runs; once it ended, ours is the newest task to this destination (one task per source at a time).
 */
function findTask(
  results: ListMessageMoveTasksResultEntry[],
  handle: string,
  destArn: string,
): ListMessageMoveTasksResultEntry | undefined {
  const byHandle = results.find((r) => r.TaskHandle === handle);
  if (byHandle) return byHandle;
  const newest = results[0];
  return newest && !newest.TaskHandle && newest.DestinationArn === destArn ? newest : undefined;
}

export async function* moveSqsToSafety(
  c: SafeMoveContext,
  dlq: string,
  target: string,
  opts: { signal?: AbortSignal } = {},
): AsyncIterable<SafeMoveEvent> {
  if (!c.enabled) throw notOffered(c);
  const signal = opts.signal;
  const d = await c.describe(dlq);
  const sourceArn = d.attrs.QueueArn;
  if (!sourceArn)
    throw new BrokerError("protocol", {
      userMessage: `SQS did not report the ARN of "${dlq}", which the move task needs. Nothing was moved.`,
    });
  const prepared = await prepareTarget(c, dlq, d, target);

  const running = (await tasksOf(c, dlq, sourceArn)).find((r) => r.Status === "RUNNING" || r.Status === "CANCELLING");
  if (running && (running.DestinationArn !== prepared.arn || running.Status === "CANCELLING" || !running.TaskHandle)) {
    const to = running.DestinationArn
      ? `"${queueNameOfArn(running.DestinationArn) ?? running.DestinationArn}"`
      : "the letters' source queues";
    refuseNow(
      `A message move task is already ${running.Status === "CANCELLING" ? "being cancelled" : "running"} on "${dlq}" (to ${to}, ${letters(running.ApproximateNumberOfMessagesMoved ?? 0)} moved so far), and SQS runs one at a time per queue. Nothing was started: wait for it to end or cancel it, then move again.`,
    );
  }
  const destArn = prepared.existing ? prepared.arn : await createTarget(c, target, d);
  const startDepth = d.summary.depth;

  let handle: string;
  if (running?.TaskHandle) {
    handle = running.TaskHandle; // A move to the same queue, started earlier: follow it.
  } else {
    const present =
      (Number(d.attrs.ApproximateNumberOfMessages ?? 0) || 0) +
      (Number(d.attrs.ApproximateNumberOfMessagesNotVisible ?? 0) || 0) +
      (Number(d.attrs.ApproximateNumberOfMessagesDelayed ?? 0) || 0);
    if (present === 0 || signal?.aborted) {
      yield { kind: "progress", moved: 0, failed: 0, total: present === 0 ? 0 : startDepth, done: true };
      return;
    }
    try {
      const out = await c.sqs.send(
        new StartMessageMoveTaskCommand({
          SourceArn: sourceArn,
          DestinationArn: destArn,
          MaxNumberOfMessagesPerSecond: c.maxPerSecond,
        }),
      );
      if (!out.TaskHandle)
        throw new BrokerError("protocol", {
          userMessage: `SQS started no move task for "${dlq}" (it returned no task handle). Nothing was moved.`,
        });
      handle = out.TaskHandle;
    } catch (e) {
      const m = c.err(e, dlq);
      if (m.kind !== "bad_request") throw m;
      const name = (e as { name?: string }).name ?? "";
      if (/UnsupportedOperation/.test(name))
        refuseNow(
          `A message move task is already running on "${dlq}" (started meanwhile by someone else), and SQS runs one at a time per queue. Nothing was started: wait for it to end, then move again.`,
        );
      refuseNow(
        `SQS refused to start a message move task from "${dlq}" to "${target}" (${name || "refused"}). Nothing was moved. SQS moves letters only out of a queue that another queue's redrive policy names as its DLQ, and only with the permissions listed for this move.`,
      );
    }
  }

  let moved = 0;
  let total: number | null = startDepth;
  let reported = -1;
  const progress = (done: boolean): SafeMoveEvent => ({
    kind: "progress",
    moved,
    failed: 0,
    total: total === null ? null : Math.max(total, moved),
    done,
  });
  const note = (t: ListMessageMoveTasksResultEntry) => {
    moved = Math.max(moved, t.ApproximateNumberOfMessagesMoved ?? 0);
    // AWS reports the count to move once the task is under way; ElasticMQ reports 0 once it ended.
    if ((t.ApproximateNumberOfMessagesToMove ?? 0) > 0) total = t.ApproximateNumberOfMessagesToMove!;
  };

  for (;;) {
    if (signal?.aborted) {
      yield await cancel(c, dlq, sourceArn, handle, destArn, () => moved, note, progress);
      return;
    }
    const task = findTask(await tasksOf(c, dlq, sourceArn), handle, destArn);
    if (!task) {
      // ElasticMQ forgets a task once it is cancelled: it was stopped from elsewhere.
      yield progress(true);
      return;
    }
    note(task);
    if (task.Status === "COMPLETED") {
      // AWS's counts may trail the status for a moment.
      for (let i = 0; i < 4 && total !== null && moved < total; i++) {
        await pause(c.pollMs);
        const again = findTask(await tasksOf(c, dlq, sourceArn), handle, destArn);
        if (again) note(again);
      }
      if (moved === 0 && startDepth !== null && startDepth > 0) await nothingMoved(c, dlq, target, d, startDepth);
      yield progress(true);
      return;
    }
    if (task.Status === "CANCELLED") {
      yield progress(true);
      return;
    }
    if (task.Status === "FAILED") {
      const why = (task.FailureReason ?? "no reason given").slice(0, 300);
      throw new BrokerError("bad_request", {
        userMessage: `SQS's message move task from "${dlq}" to "${target}" failed after moving ${letters(moved)}: ${why}. The letters moved are in "${target}"; the others are still in "${dlq}", unread. Check the permissions listed for this move (and the KMS keys, if the queues are encrypted), then move again.`,
        details: { failureReason: task.FailureReason ?? null, moved },
      });
    }
    if (moved !== reported) {
      reported = moved;
      yield progress(false);
    }
    await pause(c.pollMs, signal);
  }
}

/** The task reported COMPLETED having moved nothing while the DLQ still holds its letters: say so rather than report a move. */
async function nothingMoved(
  c: SafeMoveContext,
  dlq: string,
  target: string,
  d: { url: string; summary: DlqSummary },
  startDepth: number,
): Promise<void> {
  let left: number;
  try {
    left =
      Number(
        (
          await c.sqs.send(
            new GetQueueAttributesCommand({ QueueUrl: d.url, AttributeNames: ["ApproximateNumberOfMessages"] }),
          )
        ).Attributes?.ApproximateNumberOfMessages ?? 0,
      ) || 0;
  } catch {
    return;
  }
  if (left < startDepth) return;
  throw new BrokerError("protocol", {
    userMessage: `SQS reported the message move task from "${dlq}" to "${target}" as completed, but it moved none of the ${letters(startDepth)}: they are all still in "${dlq}", unread.${isFifo(d.summary) ? " This SQS server may not move FIFO queues' letters with a move task (ElasticMQ does not)." : ""} Nothing was lost. Do not read "${dlq}" unless you accept that letters may move on.`,
    details: { startDepth, left },
  });
}

async function cancel(
  c: SafeMoveContext,
  dlq: string,
  sourceArn: string,
  handle: string,
  destArn: string,
  moved: () => number,
  note: (t: ListMessageMoveTasksResultEntry) => void,
  progress: (done: boolean) => SafeMoveEvent,
): Promise<SafeMoveEvent> {
  let cancelError: unknown = null;
  try {
    const out = await c.sqs.send(new CancelMessageMoveTaskCommand({ TaskHandle: handle }));
    note({ ApproximateNumberOfMessagesMoved: out.ApproximateNumberOfMessagesMoved ?? moved() });
  } catch (e) {
    cancelError = e; // It may have ended meanwhile: the listing below tells.
  }
  for (let i = 0; i < 20; i++) {
    const task = findTask(await tasksOf(c, dlq, sourceArn), handle, destArn);
    if (!task) return progress(true);
    note(task);
    if (task.Status !== "RUNNING" && task.Status !== "CANCELLING") return progress(true);
    if (task.Status === "RUNNING" && cancelError) {
      const m = c.err(cancelError, dlq);
      throw new BrokerError(m.kind === "bad_request" ? "protocol" : m.kind, {
        userMessage: `The message move task on "${dlq}" could not be cancelled (${m.userMessage}) and is still running on SQS: it keeps moving letters to safety, ${letters(moved())} so far. Cancel it in the AWS console if it must stop.`,
        cause: cancelError,
      });
    }
    await pause(c.pollMs);
  }
  return progress(true);
}
