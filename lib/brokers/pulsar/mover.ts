/**
 * Letters leaving a Pulsar DLQ topic: redrive (publish the copy, wait for the producer's
 * confirmation, then acknowledge the letter on the console's subscription), discard (archive
 * first, then acknowledge) and undo (publish the archived letter to the DLQ topic again).
 *
 * One read of the DLQ per call finds the requested letters in log order; letters not requested
 * are neither acknowledged nor reordered. Acknowledgements go through a Shared consumer in pull
 * mode on the console's subscription, which asks for no message, so the broker delivers it none:
 * it only carries acknowledgements of message ids, and closing it flushes them.
 */
import {
  REDRIVE_HEADERS,
  REPAIR_HEADER,
  heldBackReason,
  type Letter,
  type LetterCopy,
  type MoveOptions,
  type MoveRequest,
  type MoveResult,
  type RemoveOptions,
  type RemoveRequest,
  type RemoveResult,
  type RepublishOptions,
  type RepublishRequest,
  type RepublishResult,
} from "@/lib/brokers/types";
import { BrokerError } from "@/lib/brokers/types";
import { b64, beforeRemoveFailure, encodeEnvelope, openEach, republishFailed } from "@/lib/brokers/envelope";
import { isAppError } from "@/lib/errors";
import {
  PulsarSocket,
  parseTopicName,
  shortName,
  topicPath,
  type PulsarAdmin,
  type PulsarEndpoint,
  type TopicName,
} from "@/lib/brokers/pulsar/client";
import {
  bareTopic,
  toLetter,
  REAL_TOPIC,
  type LetterContext,
  type PulsarMessageFrame,
} from "@/lib/brokers/pulsar/letter";
import { decodeMessageId, encodeMessageId, letterIdOf, messageIdText } from "@/lib/brokers/pulsar/message-id";
import { archiveFailure, repairProblem, repairProperties } from "@/lib/brokers/pulsar/repair";
import { missingTopic, readUnacked, type ReadMessage } from "@/lib/brokers/pulsar/reader";

export interface MoverDeps {
  subscription: string;
  /** True when the console's subscription exists (created if allowed). */
  ensureSubscription(t: TopicName): Promise<boolean>;
  letterContext(name: string): LetterContext;
}

/** The letters of one entry still in the DLQ, and the requested ones among them. */
interface EntryGroup<R> {
  members: ReadMessage[];
  picked: Array<{ req: R; msg: ReadMessage }>;
}

/** What an archived Pulsar letter keeps besides its body (`LetterCopy.envelope`). */
interface PulsarEnvelope {
  topic: string;
  messageId: string;
  properties: Array<[string, string]>;
  key: string | null;
  eventTime: string | null;
  publishTime: string | null;
}

const reasonOf = (e: unknown) =>
  isAppError(e) ? e.userMessage : "Pulsar refused it for a reason the console could not read.";

/**
 * A producer on one topic. Several messages may be in flight at once (each confirmation is matched
 * to its message by the frame's context); Pulsar stores one producer's messages in the order sent.
 */
class Producer {
  private seq = 0;
  private readonly waiting = new Map<
    string,
    { resolve: (id: string) => void; reject: (e: BrokerError) => void; timer: NodeJS.Timeout }
  >();
  private pumping = false;
  private constructor(
    private readonly socket: PulsarSocket,
    private readonly ep: PulsarEndpoint,
  ) {}

  static async open(ep: PulsarEndpoint, t: TopicName): Promise<Producer> {
    return new Producer(
      await PulsarSocket.open(
        ep,
        `producer/persistent/${topicPath(t)}?sendTimeoutMillis=${ep.timeoutMs}`,
        `publish to topic ${shortName(t)}`,
      ),
      ep,
    );
  }

  /** The new message's id once Pulsar confirmed it was stored; rejects with a BrokerError when refused or unconfirmed. */
  send(msg: {
    payload: Uint8Array;
    properties: Record<string, string>;
    key: string | null;
    eventTime: string | null;
  }): Promise<string> {
    const context = String(++this.seq);
    const confirmed = new Promise<string>((resolve, reject) => {
      const limit = this.ep.timeoutMs + 5000;
      const timer = setTimeout(() => {
        this.waiting.delete(context);
        reject(
          new BrokerError("unreachable", {
            userMessage: `Pulsar did not confirm the copy within ${Math.round(limit / 1000)} s; it may or may not have been stored. The letter stays in the DLQ.`,
          }),
        );
      }, limit);
      this.waiting.set(context, { resolve, reject, timer });
    });
    try {
      this.socket.send({
        payload: b64(msg.payload),
        properties: msg.properties,
        context,
        ...(msg.key !== null ? { key: msg.key } : {}),
        ...(msg.eventTime ? { eventTime: msg.eventTime } : {}),
      });
    } catch (e) {
      this.settle(context, e instanceof BrokerError ? e : this.socket.closedError());
    }
    void this.pump();
    return confirmed;
  }

  private settle(context: string, outcome: string | BrokerError): void {
    const w = this.waiting.get(context);
    if (!w) return;
    this.waiting.delete(context);
    clearTimeout(w.timer);
    if (typeof outcome === "string") w.resolve(outcome);
    else w.reject(outcome);
  }

  /** Reads confirmations while any message waits for one. */
  private async pump(): Promise<void> {
    if (this.pumping) return;
    this.pumping = true;
    while (this.waiting.size > 0) {
      const f = await this.socket.next(1000);
      if (!f) {
        if (this.socket.endedWith) for (const c of [...this.waiting.keys()]) this.settle(c, this.socket.closedError());
        continue;
      }
      const context = String(f.context ?? "");
      if (f.result === "ok" && typeof f.messageId === "string") this.settle(context, f.messageId);
      else
        this.settle(
          context,
          new BrokerError("bad_request", {
            message: JSON.stringify(f),
            userMessage: `Pulsar refused the copy (${String(f.result)}${f.errorMsg ? `: ${String(f.errorMsg).slice(0, 200)}` : ""}).`,
          }),
        );
    }
    this.pumping = false;
  }

  close() {
    return this.socket.close();
  }
}

export class PulsarMover {
  constructor(
    private readonly ep: PulsarEndpoint,
    private readonly admin: PulsarAdmin,
    private readonly deps: MoverDeps,
  ) {}

  private async topicExists(t: TopicName): Promise<boolean> {
    const what = `look up topic ${shortName(t)}`;
    if (await this.admin.get(`persistent/${topicPath(t)}/stats`, what, { notFound: "null" })) return true;
    return !!(await this.admin.get(`persistent/${topicPath(t)}/partitioned-stats`, what, { notFound: "null" }));
  }

  /** The DLQ exists and the console can acknowledge on it; else a BrokerError before anything moves. */
  private async prepare(dlq: TopicName): Promise<void> {
    if (!(await this.deps.ensureSubscription(dlq))) {
      throw new BrokerError("bad_request", {
        userMessage: `Topic ${shortName(dlq)} has no subscription "${this.deps.subscription}", and the connection does not let the console create it (createSubscription is off): letters cannot be taken off the DLQ without it. Create it from the earliest message, then retry.`,
      });
    }
  }

  private ackSocket(dlq: TopicName): Promise<PulsarSocket> {
    return PulsarSocket.open(
      this.ep,
      `consumer/persistent/${topicPath(dlq)}/${encodeURIComponent(this.deps.subscription)}?subscriptionType=Shared&pullMode=true`,
      `acknowledge letters on ${shortName(dlq)}`,
    );
  }

  /**
   * The requested letters as the DLQ holds them, in log order, entry by entry: each entry that
   * holds a requested letter comes with every letter of it still in the DLQ (more than one where a
   * batching producer wrote several letters into one entry) and the requests among them.
   */
  private async *entries<R extends { letterId: string }>(
    dlq: TopicName,
    requests: R[],
    signal?: AbortSignal,
  ): AsyncGenerator<EntryGroup<R>> {
    const wanted = new Map(requests.map((r) => [r.letterId, r]));
    let group: EntryGroup<R> | null = null;
    const flush = function* () {
      if (group?.picked.length) yield group;
      group = null;
    };
    for await (const msg of readUnacked(this.ep, this.admin, dlq, this.deps.subscription, { signal })) {
      if (group && (group.members[0].id.ledger !== msg.id.ledger || group.members[0].id.entry !== msg.id.entry)) {
        yield* flush();
        if (wanted.size === 0 || signal?.aborted) return;
      }
      group ??= { members: [], picked: [] };
      group.members.push(msg);
      const req = wanted.get(letterIdOf(msg.id));
      if (req) {
        wanted.delete(req.letterId);
        group.picked.push({ req, msg });
      }
    }
    yield* flush();
  }

  /** What acknowledges a whole entry: its message id without the batch index. */
  private static entryAck(members: ReadMessage[]): string {
    const id = members[0].id;
    return members.length === 1 && id.batchIndex < 0
      ? members[0].frame.messageId
      : encodeMessageId({ ledger: id.ledger, entry: id.entry, partition: id.partition });
  }

  /** Why the picked letters of a batched entry cannot leave alone (Pulsar removes whole entries), or null when they can. */
  private static partialBatch(group: EntryGroup<unknown & { letterId: string }>): string | null {
    if (group.picked.length === group.members.length) return null;
    const others = group.members.length - group.picked.length;
    return `This letter shares one Pulsar entry with ${others} other letter${others === 1 ? "" : "s"} not selected (a batching producer wrote them together), and Pulsar removes whole entries only. Select every letter of the entry (${group.members.map((m) => letterIdOf(m.id)).join(", ")}) to move it. It stays in the DLQ.`;
  }

  private resolveTarget(
    dlq: TopicName,
    req: MoveRequest,
    frame: PulsarMessageFrame,
    configOrigin: string | null,
  ): TopicName | string {
    if (req.target.kind === "queue") {
      const named = req.target.name.includes("/")
        ? parseTopicName(req.target.name)
        : { tenant: dlq.tenant, namespace: dlq.namespace, topic: req.target.name };
      return (
        named ?? `"${req.target.name}" is not a topic name (tenant/namespace/topic, or a topic of the DLQ's namespace).`
      );
    }
    const real = frame.properties?.[REAL_TOPIC];
    const origin = real ? bareTopic(real) : configOrigin;
    if (!origin)
      return "The letter has no REAL_TOPIC property and the DLQ has no configured origin: choose a target topic.";
    return (
      parseTopicName(origin) ?? `The letter's origin "${origin}" is not a persistent topic the console can publish to.`
    );
  }

  async *move(dlq: TopicName, requests: MoveRequest[], opts: MoveOptions = {}): AsyncGenerator<MoveResult> {
    if (requests.length === 0) return;
    if (requests.some((r) => r.repair) && !opts.beforeRemove) {
      throw new BrokerError("bad_request", {
        userMessage:
          "A repair must archive the original letter before it leaves the DLQ, and this request gave no archive. Nothing was read or published.",
      });
    }
    await this.prepare(dlq);
    const name = shortName(dlq);
    const ctx = this.deps.letterContext(name);
    const held = new Set(opts.heldKeys ?? []);
    const producers = new Map<string, Producer | BrokerError>();
    const exists = new Map<string, boolean>();
    const seen = new Set<string>();
    const acks = await this.ackSocket(dlq);

    /**
     * Checks one letter and sends its copy; resolves to its result once settled ("moved" meaning
     * confirmed at the target, not yet acknowledged). The outer promise resolves once the copy is
     * sent, so the caller can send the next before this one is confirmed.
     */
    const dispatch = async (req: MoveRequest, msg: ReadMessage): Promise<{ settled: Promise<MoveResult> }> => {
      const letter = toLetter(msg.frame, msg.id, 0, ctx);
      const key = letter.orderingKey;
      const result = (
        outcome: MoveResult["outcome"],
        destination: string | null,
        reason: string | null,
      ): { settled: Promise<MoveResult> } => ({
        settled: Promise.resolve({ letterId: req.letterId, outcome, destination, reason, orderingKey: key }),
      });
      if (letter.sha256 !== req.sha256)
        return result(
          "checksum_mismatch",
          null,
          "The letter's bytes differ from those indexed: it changed since the scan. It stays in the DLQ; scan again.",
        );
      if (req.repair) {
        const problem = repairProblem(req.repair);
        if (problem) return result("failed", null, problem);
        if (msg.id.batchIndex >= 0)
          return result(
            "failed",
            null,
            "A letter of a batched Pulsar entry cannot be repaired on its own (Pulsar removes whole entries). It stays in the DLQ.",
          );
      }
      if (key !== null && held.has(key)) return result("failed", null, heldBackReason(key));
      const target = this.resolveTarget(dlq, req, msg.frame, ctx.configOrigin);
      if (typeof target === "string") return result("failed", null, `${target} It stays in the DLQ.`);
      const tName = shortName(target);
      const destination = `topic ${tName}`;
      const failed = (e: unknown): MoveResult => ({
        letterId: req.letterId,
        outcome: "failed",
        destination,
        reason: `${reasonOf(e).replace(/\.$/, "")}. The letter stays in the DLQ.`,
        orderingKey: key,
      });
      try {
        if (tName === name) throw new BrokerError("bad_request", { userMessage: "The target is the DLQ itself." });
        if (!exists.has(tName)) exists.set(tName, await this.topicExists(target));
        if (!exists.get(tName))
          throw new BrokerError("not_found", {
            userMessage: `Topic ${tName} does not exist (the console does not create topics by publishing to them).`,
          });
        let producer = producers.get(tName);
        if (!producer) {
          producer = await Producer.open(this.ep, target).catch((e: unknown) =>
            e instanceof BrokerError ? e : new BrokerError("protocol", { userMessage: reasonOf(e) }),
          );
          producers.set(tName, producer);
        }
        if (producer instanceof BrokerError) throw producer;
        const properties = withMarkers(
          req.repair
            ? repairProperties(msg.frame.properties ?? {}, req.repair, req.markers.replayId)
            : (msg.frame.properties ?? {}),
          req,
          letter.messageId,
        );
        if (req.repair) properties[REPAIR_HEADER] = req.repair.operationId;
        const confirmed = producer.send({
          payload: req.repair?.body ?? letter.body,
          properties,
          key,
          eventTime: msg.frame.eventTime ?? null,
        });
        return {
          settled: confirmed.then(
            (id): MoveResult => ({
              letterId: req.letterId,
              outcome: "moved",
              destination,
              reason: null,
              orderingKey: key,
              ...(req.repair ? { copyId: `${tName}/${messageIdText(decodeMessageId(id))}` } : {}),
            }),
            failed,
          ),
        };
      } catch (e) {
        return { settled: Promise.resolve(failed(e)) };
      }
    };
    const publish = async (req: MoveRequest, msg: ReadMessage): Promise<MoveResult> =>
      (await dispatch(req, msg)).settled;

    // Copies in flight, oldest first: at most `window`, and at most one per ordering key, so a key's
    // letters are confirmed (or held back) in DLQ order. Each is acknowledged once confirmed.
    const window = Math.max(1, Math.min(256, opts.maxInFlight ?? 32));
    const pending: Array<{
      settled: Promise<MoveResult>;
      key: string | null;
      ackId: string;
      req: MoveRequest;
      msg: ReadMessage;
    }> = [];
    const keysInFlight = new Map<string, number>();
    /** A repaired letter's original goes to the archive (one at a time) once its copy is confirmed, before it leaves. */
    const archived = async (r: MoveResult, req: MoveRequest, msg: ReadMessage): Promise<MoveResult> => {
      if (r.outcome !== "moved" || !req.repair) return r;
      try {
        await opts.beforeRemove!(copyOf(name, req.letterId, toLetter(msg.frame, msg.id, 0, ctx), msg.frame));
        return r;
      } catch (e) {
        return {
          ...r,
          outcome: "failed",
          reason: archiveFailure(e, r.destination?.replace(/^topic /, "") ?? "?", r.copyId ?? null),
        };
      }
    };
    const settleOldest = async (): Promise<MoveResult> => {
      const p = pending.shift()!;
      const r = await archived(await p.settled, p.req, p.msg);
      if (p.key !== null) keysInFlight.set(p.key, (keysInFlight.get(p.key) ?? 1) - 1);
      if (r.outcome === "moved") acks.send({ messageId: p.ackId });
      else if (r.orderingKey !== null) held.add(r.orderingKey);
      return r;
    };

    try {
      for await (const group of this.entries(dlq, requests, opts.signal)) {
        if (group.members.length === 1 && group.members[0].id.batchIndex < 0) {
          const { req, msg } = group.picked[0];
          seen.add(req.letterId);
          const key = msg.frame.key ?? null;
          while (pending.length > 0 && ((key !== null && (keysInFlight.get(key) ?? 0) > 0) || pending.length >= window))
            yield await settleOldest();
          pending.push({ settled: (await dispatch(req, msg)).settled, key, ackId: msg.frame.messageId, req, msg });
          if (key !== null) keysInFlight.set(key, (keysInFlight.get(key) ?? 0) + 1);
          continue;
        }
        // A batched entry: everything before it settles first, then its letters go together or not at all.
        while (pending.length > 0) yield await settleOldest();
        const partial = PulsarMover.partialBatch(group);
        const results: MoveResult[] = [];
        for (const { req, msg } of group.picked) {
          seen.add(req.letterId);
          if (partial) {
            results.push({
              letterId: req.letterId,
              outcome: "failed",
              destination: null,
              reason: partial,
              orderingKey: msg.frame.key ?? null,
            });
            continue;
          }
          results.push(await publish(req, msg));
        }
        const allMoved = results.every((r) => r.outcome === "moved");
        if (allMoved) acks.send({ messageId: PulsarMover.entryAck(group.members) });
        for (const r of results) {
          if (r.outcome !== "moved" && r.orderingKey !== null) held.add(r.orderingKey);
          if (r.outcome === "moved" && !allMoved) {
            // A batched entry goes as a whole or not at all: its other letter failed, so this one's copy is a duplicate.
            if (r.orderingKey !== null) held.add(r.orderingKey);
            yield {
              ...r,
              outcome: "failed",
              reason: `Its copy was published to ${r.destination}, but another letter of the same Pulsar entry failed, and Pulsar removes whole entries only: it stays in the DLQ (the copy at the target is a duplicate).`,
            };
          } else yield r;
        }
      }
      // Copies already sent are settled (and acknowledged when confirmed) even when the move was stopped.
      while (pending.length > 0) yield await settleOldest();
    } finally {
      await acks.close();
      for (const p of producers.values()) if (!(p instanceof BrokerError)) await p.close();
    }
    if (opts.signal?.aborted) return;
    for (const r of requests) {
      if (!seen.has(r.letterId))
        yield {
          letterId: r.letterId,
          outcome: "missing",
          destination: null,
          reason: "The letter is no longer in the DLQ.",
          orderingKey: null,
        };
    }
  }

  async *remove(dlq: TopicName, requests: RemoveRequest[], opts: RemoveOptions): AsyncGenerator<RemoveResult> {
    if (requests.length === 0) return;
    await this.prepare(dlq);
    const name = shortName(dlq);
    const ctx = this.deps.letterContext(name);
    const seen = new Set<string>();
    const acks = await this.ackSocket(dlq);

    /** Checks one letter and hands its complete copy over; "removed" meaning archived, not yet acknowledged. */
    const archive = async (req: RemoveRequest, msg: ReadMessage): Promise<RemoveResult> => {
      const letter = toLetter(msg.frame, msg.id, 0, ctx);
      if (letter.sha256 !== req.sha256)
        return {
          letterId: req.letterId,
          outcome: "checksum_mismatch",
          reason: "The letter's bytes differ from those indexed: it changed since the scan. It stays in the DLQ.",
        };
      try {
        await opts.beforeRemove(copyOf(name, req.letterId, letter, msg.frame));
      } catch (e) {
        return { letterId: req.letterId, outcome: "failed", reason: beforeRemoveFailure(e) };
      }
      return { letterId: req.letterId, outcome: "removed", reason: null };
    };

    try {
      for await (const group of this.entries(dlq, requests, opts.signal)) {
        const partial = PulsarMover.partialBatch(group);
        const results: RemoveResult[] = [];
        for (const { req, msg } of group.picked) {
          seen.add(req.letterId);
          results.push(
            partial
              ? { letterId: req.letterId, outcome: "failed", reason: partial.replace("to move it", "to discard it") }
              : await archive(req, msg),
          );
        }
        const all = results.every((r) => r.outcome === "removed");
        if (all) acks.send({ messageId: PulsarMover.entryAck(group.members) });
        for (const r of results) {
          yield r.outcome === "removed" && !all
            ? {
                ...r,
                outcome: "failed",
                reason:
                  "Archived, but another letter of the same Pulsar entry was not, and Pulsar removes whole entries only: it stays in the DLQ (and its copy is in the archive).",
              }
            : r;
        }
      }
    } finally {
      await acks.close();
    }
    if (opts.signal?.aborted) return;
    for (const r of requests)
      if (!seen.has(r.letterId))
        yield { letterId: r.letterId, outcome: "missing", reason: "The letter is no longer in the DLQ." };
  }

  async *republish(
    dlq: TopicName,
    requests: RepublishRequest[],
    opts: RepublishOptions = {},
  ): AsyncGenerator<RepublishResult> {
    if (requests.length === 0) return;
    if (!(await this.topicExists(dlq))) throw missingTopic(dlq);
    let producer: Producer | null = null;
    try {
      for (const item of openEach<PulsarEnvelope>("pulsar", requests, opts.signal)) {
        if ("failed" in item) {
          yield item.failed;
          continue;
        }
        const { req, env } = item;
        try {
          producer ??= await Producer.open(this.ep, dlq);
          const id = await producer.send({
            payload: req.body,
            properties: Object.fromEntries(env.properties),
            key: env.key,
            eventTime: env.eventTime,
          });
          yield {
            id: req.id,
            outcome: "published",
            how: "published",
            letterId: letterIdOf(decodeMessageId(id)),
            reason: null,
          };
        } catch (e) {
          yield republishFailed(req, `${reasonOf(e).replace(/\.$/, "")}. Nothing was published.`);
        }
      }
    } finally {
      await producer?.close();
    }
  }
}

/** The letter's properties in their order, the console's markers replaced (never appended). */
function withMarkers(
  properties: Record<string, string>,
  req: MoveRequest,
  messageId: string | null,
): Record<string, string> {
  const out: Record<string, string> = {};
  const previousOriginal = properties[REDRIVE_HEADERS.originalMessageId];
  for (const [k, v] of Object.entries(properties)) {
    if (
      k === REDRIVE_HEADERS.redriveId ||
      k === REDRIVE_HEADERS.replayId ||
      k === REDRIVE_HEADERS.redriveCount ||
      k === REDRIVE_HEADERS.originalMessageId
    )
      continue;
    out[k] = v;
  }
  out[REDRIVE_HEADERS.redriveId] = req.markers.redriveId;
  out[REDRIVE_HEADERS.replayId] = req.markers.replayId;
  out[REDRIVE_HEADERS.redriveCount] = String(req.markers.redriveCount);
  const original = previousOriginal ?? req.markers.originalMessageId ?? messageId;
  if (original) out[REDRIVE_HEADERS.originalMessageId] = original;
  return out;
}

/** The complete copy of a DLQ letter handed to `beforeRemove` (discard, and the original of a repair). */
function copyOf(dlq: string, letterId: string, letter: Letter, frame: PulsarMessageFrame): LetterCopy {
  const envelope: PulsarEnvelope = {
    topic: dlq,
    messageId: letter.messageId ?? "",
    properties: Object.entries(frame.properties ?? {}),
    key: frame.key ?? null,
    eventTime: frame.eventTime ?? null,
    publishTime: frame.publishTime ?? null,
  };
  return { letterId, letter, envelope: encodeEnvelope("pulsar", letter.body, envelope) };
}
