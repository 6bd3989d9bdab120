import "server-only";
/**
 * moveLetters on SQS: receive → verify → send → delete, never delete before a confirmed send.
 *
 * 1. Receive from the DLQ a few requests at a time (batches of 10), hiding letters for the move's
 *    visibility timeout, until every requested letter is found or the depth observed at the start
 *    is read (plus one short extra round). Every letter received is held by its receipt handle;
 *    holds are extended while the move runs.
 * 2. Requested letters, in DLQ order (FIFO: SequenceNumber; standard: SentTimestamp): sha256 of the
 *    body checked against the request ("checksum_mismatch", released at once), the target resolved,
 *    the hold refreshed (ChangeMessageVisibility to the full timeout) right before sending, then
 *    SendMessageBatch (standard; per-entry results) or SendMessage one at a time (FIFO: letters of
 *    one MessageGroupId in SequenceNumber order, a letter after a failed one of its group is held
 *    back so the group's order is not broken). The body is sent exactly as received, with the
 *    letter's message attributes, AWSTraceHeader (the only system attribute SendMessage accepts)
 *    and the markers (see markers.ts). SentTimestamp cannot be kept: SQS sets it on every send.
 * 3. Only after a successful send: DeleteMessageBatch with the receipt handle.
 * 4. Everything not moved is released (visibility 0) at once: when the move ends, fails, is aborted
 *    (`signal`, checked between letters and batches) or the caller stops iterating.
 *
 * The window. A receipt handle is only good while the letter is hidden. The hold is refreshed to
 * the full move timeout right before each send, and the timeout is sized to outlast the longest
 * send the client can make (request timeout × attempts, plus a margin; at least the configured read
 * timeout). Should a send still outlast it (a stalled network), the delete fails: the letter is then
 * in the target (tagged with its x-dlq-replay-id) AND still in the DLQ, and the result is "failed"
 * with a reason that says exactly that. Nothing is lost; the duplicate is tagged.
 *
 * FIFO targets. MessageGroupId is kept from the letter. MessageDeduplicationId is NOT the letter's
 * old one (SQS would swallow the redrive as a duplicate of the original for 5 minutes, also under
 * content-based deduplication since the body is the same): it is derived from the replay id (the
 * replay id itself when it is a valid id, else its SHA-256), so an SDK retry of the same send is
 * still deduplicated by SQS, while every new replay is a new message. A FIFO letter is not sent to
 * a standard queue (its group order and deduplication would be lost) and a standard letter cannot
 * go to a FIFO queue (it has no MessageGroupId): both are "failed" with a reason.
 *
 * Repair (MoveRequest.repair, issue 18). The copy is made by repair.ts (new body, attributes set
 * and removed, correlation id) plus the markers, x-dlq-repaired-by-operation among them; its
 * x-dlq-original-message-id is the MessageId of the letter it was repaired from (the one archived,
 * so the copy links back to it). A repaired letter is sent on its own (SendMessage, never in a
 * batch); SQS's answer gives the copy's MessageId (`MoveResult.copyId`). Then the original's complete
 * copy, as a discard archives it, goes to `opts.beforeRemove`, and only once that resolved is the
 * original deleted. If it throws, the original is released and stays in the DLQ ("failed", the
 * reason says the repaired copy was published). Checks that need no letter (managed or invalid
 * names, a payload SQS cannot carry) fail the letter before its target is resolved; a FIFO letter
 * refused so holds back the later letters of its group, as any letter that stays. A repair without
 * `beforeRemove` is refused (bad_request) before the DLQ is even opened.
 *
 * Origin. DeadLetterQueueSourceArn when the server sets it (per letter); else the one queue whose
 * redrive policy names the DLQ (ListDeadLetterSourceQueues) or the config's `origin` when these
 * agree on a single queue; several candidates and no DeadLetterQueueSourceArn → "failed", pick a
 * target. An explicit target that does not exist throws not_found before anything is received.
 */
import {
  ChangeMessageVisibilityBatchCommand,
  DeleteMessageBatchCommand,
  ReceiveMessageCommand,
  SendMessageBatchCommand,
  SendMessageCommand,
  type Message,
  type MessageSystemAttributeValue,
  type SendMessageBatchRequestEntry,
  type SQSClient,
} from "@aws-sdk/client-sqs";
import { isAppError } from "@/lib/errors";
import {
  BrokerError,
  heldBackReason,
  type DlqSummary,
  type LetterCopy,
  type LetterRepair,
  type MoveOptions,
  type MoveRequest,
  type MoveResult,
  type RedriveMarkers,
  type RemoveOptions,
  type RemoveRequest,
  type RemoveResult,
} from "@/lib/brokers/types";
import { b64, beforeRemoveFailure, encodeEnvelope } from "@/lib/brokers/envelope";
import { sha256Hex } from "@/lib/brokers/display";
import { baseIdOf, compareKeys, isSqsLetterId, sortKeyOf, toLetter, type SortKey } from "@/lib/brokers/sqs/letter";
import type { Attrs } from "@/lib/brokers/sqs/summary";
import { readMarkers, withMarkers } from "@/lib/brokers/sqs/markers";
import { repairedAttributes, repairedBodyText, repairRequestProblem } from "@/lib/brokers/sqs/repair";

export interface SqsMoveContext {
  sqs: SQSClient;
  /** Describes the DLQ with the read-risk guard (acceptRisk) and the in-flight room. */
  open(): Promise<{ url: string; attrs: Attrs; summary: DlqSummary; room: number }>;
  /** Queue URL by name (and owner account); throws BrokerError not_found. */
  urlOf(name: string, account?: string): Promise<string>;
  queueAttrs(name: string, url: string): Promise<Attrs>;
  err(e: unknown, queue?: string): BrokerError;
  region: string;
  /** Seconds a letter stays hidden after receive and after each refresh (see moveVisibilitySeconds). */
  visibilityTimeout: number;
  receiveConcurrency: number;
  maxEmptyReceives: number;
  maxScan: number;
  /** Largest SendMessageBatch payload (sum of the entries), bytes. */
  maxBatchBytes: number;
  /** Letters per SendMessageBatch (1..10, default 10). */
  sendBatchSize?: number;
  /** How letters are shown (for the copies a discard hands over), once `open` has run. Default: no origin known. */
  letterOptions?(): { soleSource: string | null; configOrigin: string | null };
}

/**
 * Long enough that a send started right after a refresh ends before the hold does: the client's
 * request timeout × attempts plus 15 s, and never shorter than the configured read timeout.
 */
export function moveVisibilitySeconds(
  readVisibilitySeconds: number,
  requestTimeoutMs: number,
  maxAttempts: number,
): number {
  return Math.min(43_200, Math.max(readVisibilitySeconds, Math.ceil((requestTimeoutMs * maxAttempts) / 1000) + 15));
}

const DEDUP_ID = /^[A-Za-z0-9!"#$%&'()*+,\-./:;<=>?@[\\\]^_`{|}~]{1,128}$/;

/** MessageDeduplicationId of a redriven FIFO letter: derived from the replay id, never the original's. */
export function dedupIdFor(replayId: string): string {
  return DEDUP_ID.test(replayId) ? replayId : sha256Hex(`x-dlq-replay-id:${replayId}`);
}

interface Target {
  name: string;
  url: string;
  fifo: boolean;
}

type Resolved = { ok: true; target: Target } | { ok: false; reason: string };

const isFifoQueue = (name: string, attrs: Attrs) => attrs.FifoQueue === "true" || name.endsWith(".fifo");

/** `arn:aws:sqs:region:account:name` → parts, or null. */
export function parseQueueArn(arn: string | undefined): { region: string; account: string; name: string } | null {
  const m = arn ? /^arn:[^:]+:sqs:([^:]*):([^:]*):(.+)$/.exec(arn) : null;
  return m ? { region: m[1], account: m[2], name: m[3] } : null;
}

/** The origin of one letter, by name (and account when it differs), or why there is none. */
export function originFor(
  msg: Message,
  candidates: string[],
  dlqArn: { region: string; account: string } | null,
  region: string,
): { name: string; account?: string } | { reason: string } {
  const sys = (msg.Attributes ?? {}) as Record<string, string>;
  const arn = parseQueueArn(sys.DeadLetterQueueSourceArn);
  if (arn) {
    const here = dlqArn?.region || region;
    if (arn.region && arn.region !== here) {
      return {
        reason: `This letter came from "${arn.name}" in region ${arn.region}, but this connection works in ${here}: pick a target in ${here}, or redrive it from a connection for ${arn.region}.`,
      };
    }
    return dlqArn && arn.account && arn.account !== dlqArn.account
      ? { name: arn.name, account: arn.account }
      : { name: arn.name };
  }
  if (candidates.length === 1) return { name: candidates[0] };
  if (candidates.length === 0) {
    return {
      reason:
        "No origin is known for this letter: SQS did not record its source queue (no DeadLetterQueueSourceArn), no queue's redrive policy names this DLQ and the config names no origin. Pick a target.",
    };
  }
  return {
    reason: `${candidates.length} queues may have sent this letter here (${candidates.slice(0, 5).join(", ")}${candidates.length > 5 ? ", …" : ""}) and SQS did not record which one (no DeadLetterQueueSourceArn). Pick a target.`,
  };
}

/** The SendMessage fields of a redriven (or, with `repair`, repaired) letter, or why it cannot be sent to this target. Pure. */
export function sendEntryFor(
  msg: Message,
  markers: RedriveMarkers,
  target: { name: string; fifo: boolean },
  dlqFifo: boolean,
  repair?: LetterRepair,
): { entry: Omit<SendMessageBatchRequestEntry, "Id">; form: "separate" | "combined" } | { reason: string } {
  const sys = (msg.Attributes ?? {}) as Record<string, string>;
  const group = sys.MessageGroupId;
  if (target.fifo && !group) {
    return {
      reason: `"${target.name}" is a FIFO queue and this letter has no MessageGroupId (it comes from a standard queue): pick a standard queue as the target.`,
    };
  }
  if (!target.fifo && dlqFifo) {
    return {
      reason: `"${target.name}" is a standard queue and this letter comes from a FIFO queue: its group order and deduplication would be lost. Pick a FIFO queue as the target.`,
    };
  }
  let marked: ReturnType<typeof withMarkers>;
  let body = msg.Body ?? "";
  if (repair?.body !== undefined) {
    const b = repairedBodyText(repair.body);
    if ("reason" in b) return b;
    body = b.text;
  }
  // The first message id a letter had wins, for a repaired copy too (as on RabbitMQ and Kafka): SQS
  // gives every send a new MessageId, and the chain of copies keeps pointing at the message that
  // first died. The archive row of this repair is found by its operation id.
  const existing = readMarkers(msg.MessageAttributes);
  const originalMessageId = existing.originalMessageId ?? markers.originalMessageId ?? msg.MessageId ?? null;
  if (repair) {
    const attrs = repairedAttributes(msg, repair);
    marked =
      "reason" in attrs
        ? { error: attrs.reason }
        : withMarkers(attrs.attributes, { ...markers, originalMessageId, repairedByOperation: repair.operationId });
  } else {
    marked = withMarkers(msg.MessageAttributes, { ...markers, originalMessageId });
  }
  if ("error" in marked) return { reason: marked.error };
  const entry: Omit<SendMessageBatchRequestEntry, "Id"> = { MessageBody: body };
  if (Object.keys(marked.attributes).length) entry.MessageAttributes = marked.attributes;
  if (sys.AWSTraceHeader)
    entry.MessageSystemAttributes = {
      AWSTraceHeader: { DataType: "String", StringValue: sys.AWSTraceHeader } satisfies MessageSystemAttributeValue,
    };
  if (target.fifo) {
    entry.MessageGroupId = group;
    entry.MessageDeduplicationId = dedupIdFor(markers.replayId);
  }
  return { entry, form: marked.form };
}

/** Bytes SQS counts toward a message's size: body plus attribute names, types and values. */
export function entrySize(e: Omit<SendMessageBatchRequestEntry, "Id">): number {
  let n = Buffer.byteLength(e.MessageBody ?? "", "utf8");
  for (const [k, v] of Object.entries(e.MessageAttributes ?? {})) {
    n +=
      Buffer.byteLength(k) +
      Buffer.byteLength(v.DataType ?? "") +
      (v.StringValue !== undefined ? Buffer.byteLength(v.StringValue) : 0) +
      (v.BinaryValue?.byteLength ?? 0);
  }
  return n;
}

const chunks = <T>(xs: T[], n: number) =>
  Array.from({ length: Math.ceil(xs.length / n) }, (_, i) => xs.slice(i * n, i * n + n));
const errText = (e: BrokerError) => e.userMessage.replace(/\.$/, "");

interface Wanted<R = MoveRequest> {
  req: R;
  base: string;
  nth: number;
}

interface Found<R = MoveRequest> {
  w: Wanted<R>;
  m: Message;
  key: SortKey;
}

/** Receipt handles of every letter this move holds, with their release. */
class Holds {
  private readonly live = new Set<string>();
  private lastExtend = Date.now();

  constructor(
    private readonly c: SqsMoveContext,
    private readonly url: string,
  ) {}

  add(h: string) {
    this.live.add(h);
  }

  /** Sets the visibility of these handles; returns the handles SQS refused. */
  async change(handles: string[], timeout: number): Promise<Set<string>> {
    const refused = new Set<string>();
    const batches = chunks(handles, 10);
    let next = 0;
    const worker = async () => {
      while (next < batches.length) {
        const batch = batches[next++];
        const out = await this.c.sqs.send(
          new ChangeMessageVisibilityBatchCommand({
            QueueUrl: this.url,
            Entries: batch.map((ReceiptHandle, i) => ({ Id: String(i), ReceiptHandle, VisibilityTimeout: timeout })),
          }),
        );
        for (const f of out.Failed ?? []) refused.add(batch[Number(f.Id)]);
      }
    };
    await Promise.all(Array.from({ length: Math.min(8, batches.length) }, worker));
    return refused;
  }

  /** Keeps every held letter hidden once half the timeout has passed since the last extension. */
  async extendIfDue() {
    if (this.live.size === 0 || Date.now() - this.lastExtend < (this.c.visibilityTimeout * 1000) / 2) return;
    this.lastExtend = Date.now();
    await this.change([...this.live], this.c.visibilityTimeout).catch(() => undefined);
  }

  /** Gone from the DLQ (deleted): never released. */
  forget(h: string) {
    this.live.delete(h);
  }

  /** Visible again at once. Failures are swallowed: the visibility timeout releases them anyway. */
  async release(handles: string[]) {
    const mine = handles.filter((h) => this.live.has(h));
    for (const h of mine) this.live.delete(h);
    if (mine.length) await this.change(mine, 0).catch(() => undefined);
  }

  async releaseAll() {
    await this.release([...this.live]);
  }
}

/** How one requested letter settled in the shared walk; callers turn it into their own result type. */
interface Settled<R> {
  req: R;
  outcome: "done" | "failed" | "missing" | "checksum_mismatch";
  destination: string | null;
  reason: string | null;
  orderingKey: string | null;
  /** What the delivery reported for a letter that settled "done" (a repaired copy's new MessageId). */
  copyId?: string;
}

/** A letter ready to be delivered, batched with others of the same `batchKey`. */
interface Ready<R, P> {
  f: Found<R>;
  batchKey: string;
  /** Delivered alone and in order (FIFO). */
  single: boolean;
  size: number;
  payload: P;
  destination: string | null;
}

type Delivered = { ok: true; note: string; copyId?: string } | { ok: false; reason: string };

/** What move and remove plug into the shared walk (see the file comment for the walk itself). */
interface SqsStep<R extends { letterId: string; sha256: string }, P> {
  /** "moved" / "discarded", in reasons. */
  past: string;
  /** Checks after the DLQ is opened and before anything is received (typed errors). */
  before?(d: Opened): Promise<void>;
  /** Per found letter, after its checksum matched: why it stays, or what to deliver. */
  prepare(
    f: Found<R>,
    d: Opened,
  ): Promise<{ stays: { reason: string; destination: string | null } } | Omit<Ready<R, P>, "f">>;
  /** Delivers a batch (one batchKey); one result per letter, in order. A fatal error stops the walk. */
  deliver(batch: Array<Ready<R, P>>): Promise<{ results: Delivered[]; fatal: BrokerError | null }>;
  /** The reason when the delivery succeeded but the DeleteMessage failed (the letter is now in two places). */
  notDeleted(r: Ready<R, P>, note: string, code: string): string;
  /** Letters of these ordering keys are held back (MoveOptions.heldKeys). */
  heldGroups: ReadonlySet<string>;
  /** A letter that stays breaks its FIFO group for later letters of the call (redrive keeps group order). */
  keepsGroupOrder: boolean;
}

interface Opened {
  url: string;
  attrs: Attrs;
  summary: DlqSummary;
  room: number;
  dlqFifo: boolean;
  dlqArn: { region: string; account: string; name: string } | null;
}

const groupOf = (m: Message) => ((m.Attributes ?? {}) as Record<string, string>).MessageGroupId ?? null;

/**
 * The shared walk of move and remove: receive the requested letters (holding every letter
 * received), check each one's checksum, deliver through the step in DLQ order, delete a letter only
 * after its delivery succeeded, release everything else at once.
 */
async function* forRequestedSqsLetters<R extends { letterId: string; sha256: string }, P, Out>(
  c: SqsMoveContext,
  dlq: string,
  requests: R[],
  signal: AbortSignal | undefined,
  step: SqsStep<R, P>,
  toResult: (s: Settled<R>) => Out,
): AsyncGenerator<Out> {
  const opened = await c.open();
  const d: Opened = {
    ...opened,
    dlqFifo: opened.summary.queueType === "fifo",
    dlqArn: parseQueueArn(opened.attrs.QueueArn),
  };
  await step.before?.(d);
  const settled = (req: R, outcome: Settled<R>["outcome"], reason: string | null): Settled<R> => ({
    req,
    outcome,
    destination: null,
    reason,
    orderingKey: null,
  });

  // What is asked for: letter id → MessageId (base) and occurrence.
  const wanted: Array<Wanted<R>> = [];
  const seen = new Set<string>();
  for (const req of requests) {
    if (seen.has(req.letterId)) {
      yield toResult(settled(req, "failed", `This letter was asked for twice in one call; it is ${step.past} once.`));
      continue;
    }
    seen.add(req.letterId);
    if (!isSqsLetterId(req.letterId)) {
      yield toResult(settled(req, "missing", "No letter with this id is in the DLQ (it is not an SQS MessageId)."));
      continue;
    }
    const tilde = req.letterId.indexOf("~");
    wanted.push({
      req,
      base: tilde < 0 ? req.letterId : req.letterId.slice(0, tilde),
      nth: tilde < 0 ? 1 : Number(req.letterId.slice(tilde + 1)),
    });
  }
  if (wanted.length === 0) return;
  const need = new Map<string, number>();
  for (const w of wanted) need.set(w.base, Math.max(need.get(w.base) ?? 0, w.nth));

  const holds = new Holds(c, d.url);
  const copies = new Map<string, Array<{ key: SortKey; m: Message }>>();
  let outstanding = need.size;
  // Every requested letter is in the DLQ or missing, so the DLQ holds at least as many letters as
  // are asked for, whatever its approximate depth says (a count taken right after letters were
  // released can still miss them).
  const total = Math.max(1, Math.min(Math.max(d.summary.depth ?? c.maxScan, wanted.length), d.room, c.maxScan));

  const receive = async (want: number, waitSeconds: number, maxEmpty: number, concurrency: number) => {
    let received = 0;
    let reserved = 0;
    let empties = 0;
    let stop = false;
    let failure: unknown = null;
    const worker = async () => {
      while (!stop && !failure && outstanding > 0 && !signal?.aborted) {
        const n = Math.min(10, want - received - reserved);
        if (n <= 0) return;
        reserved += n;
        let msgs: Message[];
        try {
          await holds.extendIfDue();
          const out = await c.sqs.send(
            new ReceiveMessageCommand({
              QueueUrl: d.url,
              MaxNumberOfMessages: n,
              VisibilityTimeout: c.visibilityTimeout,
              WaitTimeSeconds: waitSeconds,
              MessageSystemAttributeNames: ["All"],
              MessageAttributeNames: ["All"],
            }),
            { abortSignal: signal },
          );
          msgs = out.Messages ?? [];
        } catch (e) {
          if (signal?.aborted) stop = true;
          else failure ??= e;
          return;
        } finally {
          reserved -= n;
        }
        for (const m of msgs) {
          if (m.ReceiptHandle) holds.add(m.ReceiptHandle);
          received++;
          const base = baseIdOf(m.MessageId ?? "");
          const n2 = need.get(base);
          if (n2 === undefined) continue;
          const list = copies.get(base) ?? [];
          list.push({ key: sortKeyOf(m), m });
          copies.set(base, list);
          if (list.length === n2) outstanding--;
        }
        if (msgs.length === 0) {
          if (++empties >= maxEmpty) stop = true;
        } else empties = 0;
        if (received >= want) stop = true;
      }
    };
    await Promise.all(Array.from({ length: Math.max(1, Math.min(concurrency, Math.ceil(want / 10))) }, worker));
    if (failure) throw failure;
    return received;
  };

  const done = new Set<Wanted<R>>();
  try {
    // FIFO: a group's later letters are only handed out once its earlier ones are deleted, so rounds
    // repeat while settling letters unblocks more of a group. Standard: one round reads everything.
    for (let round = 0; round < 1000; round++) {
      let received: number;
      try {
        received = await receive(total, 1, c.maxEmptyReceives, c.receiveConcurrency);
        if (received >= total && outstanding > 0 && !signal?.aborted)
          received += await receive(Math.min(100, total), 0, 1, 1);
      } catch (e) {
        throw c.err(e, dlq);
      }
      if (signal?.aborted) return;

      // Letters found and not settled yet, each matched to its request by occurrence, in DLQ order.
      const found: Array<Found<R>> = [];
      for (const w of wanted) {
        if (done.has(w)) continue;
        const list = copies.get(w.base);
        if (!list || list.length < w.nth) continue;
        list.sort((a, b) => compareKeys(a.key, b.key));
        found.push({ w, m: list[w.nth - 1].m, key: list[w.nth - 1].key });
      }
      found.sort((a, b) => compareKeys(a.key, b.key));
      let removed = 0;
      for await (const r of settleFound(c, d, found, holds, signal, step)) {
        done.add(r.w);
        if (r.settled.outcome === "done") removed++;
        yield toResult(r.settled);
      }
      if (signal?.aborted) return;
      const more = d.dlqFifo && removed > 0 && wanted.some((w) => !done.has(w));
      if (!more) break;
      // Letters that are held again are received again: count them afresh.
      await holds.releaseAll();
      copies.clear();
      need.clear();
      for (const w of wanted) if (!done.has(w)) need.set(w.base, Math.max(need.get(w.base) ?? 0, w.nth));
      outstanding = need.size;
      if (received === 0) break;
    }
    for (const w of wanted) {
      if (done.has(w)) continue;
      done.add(w);
      yield toResult(
        settled(
          w.req,
          "missing",
          "This letter is no longer in the DLQ (moved or deleted since it was read), or another reader is holding it hidden right now.",
        ),
      );
    }
  } finally {
    await holds.releaseAll();
  }
}

/** Settles letters already received, in the order given; yields each as it settles. */
async function* settleFound<R extends { letterId: string; sha256: string }, P>(
  c: SqsMoveContext,
  d: Opened,
  found: Array<Found<R>>,
  holds: Holds,
  signal: AbortSignal | undefined,
  step: SqsStep<R, P>,
): AsyncIterable<{ w: Wanted<R>; settled: Settled<R> }> {
  const out = (
    f: Found<R>,
    outcome: Settled<R>["outcome"],
    destination: string | null,
    reason: string | null,
    copyId?: string,
  ) => ({
    w: f.w,
    settled: {
      req: f.w.req,
      outcome,
      destination,
      reason,
      orderingKey: groupOf(f.m),
      ...(copyId !== undefined ? { copyId } : {}),
    } as Settled<R>,
  });
  const handle = (f: Found<R>) => f.m.ReceiptHandle ?? "";
  const brokenGroups = new Map<string, string>();
  let fatal: BrokerError | null = null;
  const breakGroup = (f: Found<R>, why: string) => {
    const g = groupOf(f.m);
    if (step.keepsGroupOrder && g && !brokenGroups.has(g)) brokenGroups.set(g, why);
  };

  /** Checks per letter; letters that stay are released at once by the caller. */
  const prepare = async (f: Found<R>): Promise<Ready<R, P> | { done: ReturnType<typeof out>; why: string }> => {
    const group = groupOf(f.m);
    if (fatal)
      return {
        done: out(f, "failed", null, `Not ${step.past}: ${errText(fatal)}. The letter stays in the DLQ.`),
        why: "SQS could not be reached",
      };
    if (group && step.heldGroups.has(group))
      return { done: out(f, "failed", null, heldBackReason(group)), why: "it was held back" };
    if (group && brokenGroups.has(group)) {
      return {
        done: out(
          f,
          "failed",
          null,
          `Not ${step.past}: an earlier letter of its message group "${group}" was not (${brokenGroups.get(group)}), and going ahead would break the group's order. It stays in the DLQ.`,
        ),
        why: "an earlier letter of its group stayed",
      };
    }
    if (sha256Hex(Buffer.from(f.m.Body ?? "", "utf8")) !== f.w.req.sha256.toLowerCase()) {
      return {
        done: out(
          f,
          "checksum_mismatch",
          null,
          `The letter's bytes no longer match the checksum recorded when it was indexed: it was not ${step.past} and stays in the DLQ. Re-scan the DLQ and check the letter first.`,
        ),
        why: "its checksum did not match",
      };
    }
    const p = await step.prepare(f, d);
    if ("stays" in p)
      return { done: out(f, "failed", p.stays.destination, p.stays.reason), why: `it could not be ${step.past}` };
    return { f, ...p };
  };

  /** Delivers one batch and deletes what was delivered; every letter settles. */
  const deliverBatch = async (batch: Array<Ready<R, P>>): Promise<Array<ReturnType<typeof out>>> => {
    const results: Array<ReturnType<typeof out>> = [];
    // Refresh the hold: the full timeout is left for the delivery and the delete.
    let refused: Set<string>;
    try {
      refused = await holds.change(
        batch.map((b) => handle(b.f)),
        c.visibilityTimeout,
      );
    } catch (e) {
      const be = c.err(e);
      fatal = be.kind === "unreachable" || be.kind === "auth" || be.kind === "throttled" ? be : null;
      for (const b of batch) {
        breakGroup(b.f, "SQS could not be reached");
        results.push(
          out(b.f, "failed", b.destination, `Not ${step.past}: ${errText(be)}. The letter stays in the DLQ.`),
        );
      }
      await holds.release(batch.map((b) => handle(b.f)));
      return results;
    }
    const live = batch.filter((b) => !refused.has(handle(b.f)));
    for (const b of batch) {
      if (!refused.has(handle(b.f))) continue;
      holds.forget(handle(b.f));
      breakGroup(b.f, "its hold ran out");
      results.push(
        out(
          b.f,
          "failed",
          b.destination,
          `Not ${step.past}: the console's hold on this letter ran out first (it became visible and may have been received by a consumer). Nothing was done with it; it is still in the DLQ.`,
        ),
      );
    }
    if (live.length === 0) return results;
    const delivered = await step.deliver(live);
    if (delivered.fatal) fatal = delivered.fatal;
    // Delete only what was delivered.
    const deleteFailed = new Map<number, string>();
    const toDelete = live.map((b, i) => ({ b, i })).filter(({ i }) => delivered.results[i].ok);
    if (toDelete.length) {
      try {
        const r = await c.sqs.send(
          new DeleteMessageBatchCommand({
            QueueUrl: d.url,
            Entries: toDelete.map(({ b, i }) => ({ Id: String(i), ReceiptHandle: handle(b.f) })),
          }),
        );
        for (const f of r.Failed ?? []) deleteFailed.set(Number(f.Id), f.Code ?? "error");
      } catch (e) {
        const be = c.err(e);
        for (const { i } of toDelete) deleteFailed.set(i, be.kind);
      }
    }
    const release: string[] = [];
    live.forEach((b, i) => {
      const r = delivered.results[i];
      if (r.ok && !deleteFailed.has(i)) {
        holds.forget(handle(b.f));
        results.push(out(b.f, "done", b.destination, null, r.copyId));
      } else if (r.ok) {
        holds.forget(handle(b.f));
        breakGroup(b.f, "it is now in two places");
        results.push(out(b.f, "failed", b.destination, step.notDeleted(b, r.note, deleteFailed.get(i)!)));
      } else {
        release.push(handle(b.f));
        breakGroup(b.f, `it could not be ${step.past}`);
        results.push(out(b.f, "failed", b.destination, r.reason));
      }
    });
    await holds.release(release);
    return results;
  };

  const batchSize = Math.max(1, Math.min(10, c.sendBatchSize ?? 10));
  let pending: Array<Ready<R, P>> = [];
  let pendingBytes = 0;
  const flush = async () => {
    const b = pending;
    pending = [];
    pendingBytes = 0;
    return b.length ? deliverBatch(b) : [];
  };
  for (const f of found) {
    if (signal?.aborted) break;
    await holds.extendIfDue();
    const p = await prepare(f);
    if ("done" in p) {
      breakGroup(f, p.why);
      await holds.release([handle(f)]);
      yield p.done;
      continue;
    }
    // FIFO: one at a time, in order. Otherwise batches of up to 10 of one key, within the batch size limit.
    if (
      pending.length &&
      (pending[0].batchKey !== p.batchKey || pending.length >= batchSize || pendingBytes + p.size > c.maxBatchBytes)
    ) {
      for (const r of await flush()) yield r;
      if (signal?.aborted) break;
    }
    pending.push(p);
    pendingBytes += p.size;
    if (p.single || d.dlqFifo) for (const r of await flush()) yield r;
  }
  if (!signal?.aborted) for (const r of await flush()) yield r;
  // Whatever was prepared but not delivered (aborted) is released by the caller's releaseAll.
}

// ---------------------------------------------------------------------------------------------
// Move: deliver = SendMessage(Batch) to the target.

export function moveSqsLetters(
  c: SqsMoveContext,
  dlq: string,
  requests: MoveRequest[],
  opts: MoveOptions = {},
): AsyncIterable<MoveResult> {
  const beforeRemove = opts.beforeRemove;
  const repairing = requests.some((r) => r.repair);
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
  type Send = { target: Target; entry: Omit<SendMessageBatchRequestEntry, "Id"> };

  /** After a repaired copy was sent: the original archived through `beforeRemove`, or why it stays. */
  const archiveOriginal = async (b: Ready<MoveRequest, Send>, newMessageId: string): Promise<Delivered> => {
    try {
      await beforeRemove!(letterCopyOf(c, b.f.m, b.f.w.req.letterId));
      return { ok: true, note: newMessageId, copyId: newMessageId };
    } catch (e) {
      // An AppError's operator message is written for the operator; anything else is not shown.
      const why = isAppError(e) ? e.userMessage.replace(/\.$/, "") : "the console could not record the original's copy";
      return {
        ok: false,
        reason: `The repaired copy was published to "${b.payload.target.name}" (new MessageId ${newMessageId}, x-dlq-replay-id ${b.f.w.req.markers.replayId}), but the original was not removed: ${why}. The original stays in the DLQ, so the letter is now in both places; check the copy before repairing it again.`,
      };
    }
  };

  const walk = forRequestedSqsLetters<MoveRequest, Send, MoveResult>(
    c,
    dlq,
    requests,
    opts.signal,
    {
      past: "moved",
      heldGroups: new Set(opts.heldKeys ?? []),
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
        const refusal = f.w.req.repair ? repairRequestProblem(f.w.req.repair) : null;
        if (refusal) return { stays: { reason: refusal, destination: null } };
        let r: Resolved;
        if (f.w.req.target.kind === "queue") r = await resolve(f.w.req.target.name);
        else {
          const o = originFor(f.m, d.summary.origins, d.dlqArn, c.region);
          r = "reason" in o ? { ok: false, reason: o.reason } : await resolve(o.name, o.account);
        }
        if (!r.ok) return { stays: { reason: r.reason, destination: null } };
        const s = sendEntryFor(f.m, f.w.req.markers, r.target, d.dlqFifo, f.w.req.repair);
        if ("reason" in s) return { stays: { reason: s.reason, destination: `queue ${r.target.name}` } };
        const size = entrySize(s.entry);
        if (f.w.req.repair && size > c.maxBatchBytes) {
          return {
            stays: {
              reason: `Not repaired: the repaired message would be ${size} bytes (payload and message attributes), more than the ${c.maxBatchBytes} bytes SQS accepts here. Nothing was sent; the letter stays in the DLQ.`,
              destination: `queue ${r.target.name}`,
            },
          };
        }
        // A repaired letter goes alone: its original is archived and deleted before the next one is sent.
        return {
          batchKey: r.target.url,
          single: r.target.fifo || Boolean(f.w.req.repair),
          size,
          payload: { target: r.target, entry: s.entry },
          destination: `queue ${r.target.name}`,
        };
      },
      async deliver(live) {
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
          else if (b.f.w.req.repair) results.push(await archiveOriginal(b, sent.get(i)!));
          else results.push({ ok: true, note: sent.get(i)! });
        }
        return { fatal, results };
      },
      notDeleted: (b, newMessageId, code) =>
        b.f.w.req.repair
          ? `The repaired copy was sent to "${b.payload.target.name}" (new MessageId ${newMessageId}) and the original archived, but SQS did not delete the original from the DLQ (${code}): its receipt handle had expired. The original is still in the DLQ as well; the copy carries x-dlq-replay-id ${b.f.w.req.markers.replayId}. Nothing is lost; check before repairing it again.`
          : `Sent to "${b.payload.target.name}" (new MessageId ${newMessageId}), but SQS did not delete it from the DLQ (${code}): its receipt handle had expired. The letter is now in both queues; the copy in "${b.payload.target.name}" carries x-dlq-replay-id ${b.f.w.req.markers.replayId}. Nothing is lost; check before redriving it again.`,
    },
    (s): MoveResult => ({
      letterId: s.req.letterId,
      outcome: s.outcome === "done" ? "moved" : s.outcome,
      destination: s.destination,
      reason: s.reason,
      orderingKey: s.orderingKey,
      ...(s.req.repair ? { copyId: s.copyId ?? null } : {}),
    }),
  );

  if (!repairing) return walk;
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

/** The complete copy of a received letter, as a discard archives it and a repair archives its original. */
function letterCopyOf(c: SqsMoveContext, m: Message, letterId: string): LetterCopy {
  const letter = toLetter(m, letterId, 0, c.letterOptions?.() ?? { soleSource: null, configOrigin: null });
  const envelope = encodeEnvelope<SqsEnvelope>("sqs", Buffer.from(m.Body ?? "", "utf8"), envelopeOf(m));
  return { letterId, letter, envelope };
}

// ---------------------------------------------------------------------------------------------
// Remove (discard): deliver = hand the complete copy to beforeRemove, one letter at a time.

/** Everything `republish` needs besides the body: message attributes, AWSTraceHeader, FIFO ids. */
export interface SqsEnvelope {
  messageId: string | null;
  /** As ReceiveMessage gave them; BinaryValue as base64. */
  attributes: Record<string, { DataType: string; StringValue?: string; BinaryValue?: string }>;
  awsTraceHeader: string | null;
  messageGroupId: string | null;
  messageDeduplicationId: string | null;
  /** The system attributes as received (SentTimestamp, ApproximateReceiveCount, DeadLetterQueueSourceArn ...): for the record only. */
  system: Record<string, string>;
}

export function envelopeOf(m: Message): SqsEnvelope {
  const sys = (m.Attributes ?? {}) as Record<string, string>;
  const attributes: SqsEnvelope["attributes"] = {};
  for (const [k, v] of Object.entries(m.MessageAttributes ?? {})) {
    attributes[k] = {
      DataType: v.DataType ?? "String",
      ...(v.StringValue !== undefined ? { StringValue: v.StringValue } : {}),
      ...(v.BinaryValue !== undefined ? { BinaryValue: b64(v.BinaryValue) } : {}),
    };
  }
  return {
    messageId: m.MessageId ?? null,
    attributes,
    awsTraceHeader: sys.AWSTraceHeader ?? null,
    messageGroupId: sys.MessageGroupId ?? null,
    messageDeduplicationId: sys.MessageDeduplicationId ?? null,
    system: sys,
  };
}

export function removeSqsLetters(
  c: SqsMoveContext,
  dlq: string,
  requests: RemoveRequest[],
  opts: RemoveOptions,
): AsyncIterable<RemoveResult> {
  return forRequestedSqsLetters<RemoveRequest, null, RemoveResult>(
    c,
    dlq,
    requests,
    opts.signal,
    {
      past: "discarded",
      heldGroups: new Set(),
      keepsGroupOrder: false,
      async prepare() {
        return { batchKey: "dlq", single: false, size: 0, payload: null, destination: null };
      },
      async deliver(live) {
        // One letter at a time, never concurrently; the deletes of the batch go together afterwards.
        const results: Delivered[] = [];
        for (const b of live) {
          try {
            await opts.beforeRemove(letterCopyOf(c, b.f.m, b.f.w.req.letterId));
            results.push({ ok: true, note: "" });
          } catch (e) {
            results.push({ ok: false, reason: beforeRemoveFailure(e) });
          }
        }
        return { results, fatal: null };
      },
      notDeleted: (_b, _note, code) =>
        `Its copy is in the archive, but SQS did not delete it from the DLQ (${code}): its receipt handle had expired. It is still in the DLQ as well; discard it again to remove it.`,
    },
    (s) => ({ letterId: s.req.letterId, outcome: s.outcome === "done" ? "removed" : s.outcome, reason: s.reason }),
  );
}
