import "server-only";
import {
  GetQueueAttributesCommand,
  GetQueueUrlCommand,
  ListDeadLetterSourceQueuesCommand,
  ListMessageMoveTasksCommand,
  ListQueuesCommand,
  type Message,
  type SQSClient,
} from "@aws-sdk/client-sqs";
import type { SqsConnectionConfig } from "@/lib/config";
import { BrokerError } from "@/lib/brokers/contract/errors";
import type { AdapterSetup, BrokerAdapter } from "@/lib/brokers/contract/adapter";
import type { BrokerCapabilities, BrokerVocabulary } from "@/lib/brokers/contract/capabilities";
import type { BrokerInspection, InspectOptions } from "@/lib/brokers/contract/inspection";
import type { BrowseOptions, DlqSummary, LetterPage, StreamOptions, StreamShortfall } from "@/lib/brokers/contract/dlq";
import type { Letter } from "@/lib/brokers/contract/letter";
import { managedHeaderMatcher, type ManagedHeaderMatcher } from "@/lib/brokers/contract/markers";
import type { MoveOptions, MoveRequest, MoveResult, RepairOps } from "@/lib/brokers/contract/move";
import type {
  RemoveOptions,
  RemoveRequest,
  RemoveResult,
  RepublishOptions,
  RepublishRequest,
  RepublishResult,
} from "@/lib/brokers/contract/remove";
import type { SafeMoveOps } from "@/lib/brokers/contract/safe-move";
import { SQS_MANAGED_HEADERS } from "@/lib/brokers/sqs/managed-headers";
import { moveSqsLetters } from "@/lib/brokers/sqs/mover";
import { sqsRepairRefusal } from "@/lib/brokers/sqs/repair";
import { moveVisibilitySeconds } from "@/lib/brokers/sqs/holds";
import { removeSqsLetters } from "@/lib/brokers/sqs/remove";
import type { SqsMoveContext } from "@/lib/brokers/sqs/step";
import { republishSqs } from "@/lib/brokers/sqs/republish";
import {
  dlqOfSafeQueueName,
  moveSqsToSafety,
  planSqsSafeMove,
  type SafeMoveContext,
} from "@/lib/brokers/sqs/safe-move";
import { createSqsClient } from "@/lib/brokers/sqs/client";
import { inspectSqs } from "@/lib/brokers/sqs/inspect";
import { AWS_COUNTS_SETTLE_MS, isAwsEndpoint, sqsSampleWatch } from "@/lib/brokers/sqs/sample-watch";
import type { SampleWatchOps } from "@/lib/brokers/target-readers";
import { mapSqsError } from "@/lib/brokers/sqs/errors";
import { discoverDlqs, listQueueUrls, mapLimit, queueNameOfUrl } from "@/lib/brokers/sqs/discovery";
import { buildSummary, type Attrs, type SourceInfo } from "@/lib/brokers/sqs/summary";
import { HeldLetters, receiveUpTo, type ReaderOptions } from "@/lib/brokers/sqs/reader";
import { OccurrenceCounter } from "@/lib/brokers/occurrence";
import { baseIdOf, compareKeys, isSqsLetterId, sortKeyOf, toLetter, type SortKey } from "@/lib/brokers/sqs/letter";

export const SQS_VOCABULARY: BrokerVocabulary = { queue: "queue", letterId: "MessageId", origin: "source queue" };

/** SQS's limit of in-flight (received, not deleted) messages per queue. */
export const SQS_IN_FLIGHT_LIMIT = 120_000;

export function sqsCapabilities(c: SqsConnectionConfig): BrokerCapabilities {
  return {
    discovery: c.discover,
    readHidesLetters: true,
    readCountsAsDelivery: true,
    randomAccess: false,
    perLetterRemoval: true,
    nativeBulkMove: c.messageMoveTasks,
    // FIFO letters carry a MessageGroupId whose order matters on redrive; standard ones have none.
    orderedKeys: true,
    // Standard queues have no order: pages are sorted by SentTimestamp within what one read receives.
    stableOrder: false,
    binaryBodies: false,
    maxBodyBytes: c.maxMessageBytes ?? (c.endpoint ? 256 * 1024 : 1024 * 1024),
    producerMessageIds: false,
    republishLimits: [
      "SQS gives an undone letter a new MessageId (the old one stays in the archive), and sets SentTimestamp, ApproximateReceiveCount and DeadLetterQueueSourceArn anew.",
      "It goes to the back of the DLQ.",
    ],
    removalUnconfirmed: false,
  };
}

export interface SqsAdapterOptions extends AdapterSetup {
  /** Long-poll seconds of a browse receive (default 1) and of a stream receive (default 2). */
  browseWaitSeconds?: number;
  streamWaitSeconds?: number;
  /** Concurrent receives per read (default 4) and concurrent attribute reads (default 8). */
  receiveConcurrency?: number;
  describeConcurrency?: number;
  /** Consecutive empty receives that end a read (default 2). */
  maxEmptyReceives?: number;
  /** Letters a browse may hold at once: offset + limit (default 10,000). */
  maxBrowseWindow?: number;
  /** Letters a stream or a lookup by id may hold (default 100,000, always under the in-flight limit). */
  maxScan?: number;
  /** Letters converted and sorted together while streaming (default 200). */
  streamChunk?: number;
  /** Payload bytes a browse keeps across its whole window (default 64 MiB); letters are cut further to fit. */
  browseBufferBytes?: number;
  /** Kept free under the in-flight limit for the queue's own consumers (default 1,000). */
  inFlightMargin?: number;
  maxAttempts?: number;
  connectTimeoutMs?: number;
  /** How often a move to safety asks SQS for the move task's progress (default 500 ms). */
  safeMovePollMs?: number;
  /** MaxNumberOfMessagesPerSecond of a move to safety's task (default: none, SQS's fastest). */
  safeMoveMaxPerSecond?: number;
}

interface Described {
  url: string;
  attrs: Attrs;
  summary: DlqSummary;
}

/** Rounds past an approximate depth: one receive at a time, no waiting, ending at the first empty answer. */
const shortRounds = (o: ReaderOptions): ReaderOptions => ({
  ...o,
  waitSeconds: 0,
  maxEmptyReceives: 1,
  concurrency: 1,
});

const SOURCE_DESCRIBE_MAX = 25;

export class SqsAdapter implements BrokerAdapter {
  readonly kind = "sqs" as const;
  readonly connectionId: string;
  readonly displayName: string;
  readonly capabilities: BrokerCapabilities;
  readonly vocabulary = SQS_VOCABULARY;
  readonly managedHeaders = SQS_MANAGED_HEADERS;

  private readonly sqs: SQSClient;
  private readonly endpoint: string;
  /** Every broker's and the console's managed names (`AdapterSetup`): a repair may touch none. */
  private readonly isManagedHeader: ManagedHeaderMatcher;
  private readonly o: Required<Omit<SqsAdapterOptions, "safeMoveMaxPerSecond" | "allManagedHeaders">> &
    Pick<SqsAdapterOptions, "safeMoveMaxPerSecond">;
  private readonly urls = new Map<string, string>();
  private readonly oldestSeen = new Map<string, { sentMs: number; atMs: number }>();

  constructor(
    private readonly config: SqsConnectionConfig,
    options: SqsAdapterOptions,
  ) {
    this.connectionId = config.id;
    this.isManagedHeader = managedHeaderMatcher(options.allManagedHeaders);
    this.displayName = config.name ?? config.id;
    this.capabilities = sqsCapabilities(config);
    this.endpoint = config.endpoint ?? `SQS ${config.region}`;
    this.o = {
      browseWaitSeconds: options.browseWaitSeconds ?? 1,
      streamWaitSeconds: options.streamWaitSeconds ?? 2,
      receiveConcurrency: options.receiveConcurrency ?? 4,
      describeConcurrency: options.describeConcurrency ?? 8,
      maxEmptyReceives: options.maxEmptyReceives ?? 2,
      maxBrowseWindow: options.maxBrowseWindow ?? 10_000,
      maxScan: options.maxScan ?? 100_000,
      streamChunk: options.streamChunk ?? 200,
      browseBufferBytes: options.browseBufferBytes ?? 64 * 1024 * 1024,
      inFlightMargin: options.inFlightMargin ?? 1000,
      maxAttempts: options.maxAttempts ?? 2,
      connectTimeoutMs: options.connectTimeoutMs ?? 3000,
      safeMovePollMs: options.safeMovePollMs ?? 500,
      safeMoveMaxPerSecond: options.safeMoveMaxPerSecond,
    };
    this.sqs = createSqsClient(config, {
      maxAttempts: this.o.maxAttempts,
      connectTimeoutMs: this.o.connectTimeoutMs,
      requestTimeoutMs: (Math.max(this.o.browseWaitSeconds, this.o.streamWaitSeconds) + 20) * 1000,
    });
    if (config.messageMoveTasks)
      this.safeMove = {
        plan: (name) => planSqsSafeMove(this.safeMoveContext(), name),
        move: (name, target, opts = {}) => moveSqsToSafety(this.safeMoveContext(), name, target, opts),
      };
  }

  private err(e: unknown, queue?: string) {
    return mapSqsError(e, { endpoint: this.endpoint, queue });
  }

  private configEntry(name: string) {
    return this.config.dlqs.find((d) => d.name === name);
  }

  private notFound(name: string) {
    return new BrokerError("not_found", {
      userMessage: `DLQ "${name}" was not found on ${this.displayName}. It may have been deleted, or no queue's redrive policy names it and it is not in the config.`,
    });
  }

  private async urlOf(name: string): Promise<string> {
    const cached = this.urls.get(name);
    if (cached) return cached;
    try {
      const { QueueUrl } = await this.sqs.send(new GetQueueUrlCommand({ QueueName: name }));
      if (!QueueUrl) throw this.notFound(name);
      this.urls.set(name, QueueUrl);
      return QueueUrl;
    } catch (e) {
      const mapped = this.err(e, name);
      throw mapped.kind === "not_found" ? this.notFound(name) : mapped;
    }
  }

  private async attrsOf(name: string, url: string): Promise<Attrs> {
    try {
      return ((await this.sqs.send(new GetQueueAttributesCommand({ QueueUrl: url, AttributeNames: ["All"] })))
        .Attributes ?? {}) as Attrs;
    } catch (e) {
      const mapped = this.err(e, name);
      if (mapped.kind === "not_found") {
        this.urls.delete(name);
        throw this.notFound(name);
      }
      throw mapped;
    }
  }

  private async sourcesOf(url: string): Promise<{ names: string[]; truncated: boolean }> {
    const names: string[] = [];
    let token: string | undefined;
    do {
      const out = await this.sqs.send(
        new ListDeadLetterSourceQueuesCommand({ QueueUrl: url, MaxResults: 1000, NextToken: token }),
      );
      names.push(...(out.queueUrls ?? []).map(queueNameOfUrl));
      token = out.NextToken;
      if (names.length >= 1000) return { names: names.sort(), truncated: true };
    } while (token);
    return { names: names.sort(), truncated: false };
  }

  /** Attributes, sources and summary; throws `not_found` for a missing queue or one the console does not count as a DLQ. */
  private async describe(name: string, discovered?: Map<string, string[]>): Promise<Described> {
    const url = await this.urlOf(name);
    const attrs = await this.attrsOf(name, url);
    let sources: { names: string[]; truncated: boolean };
    try {
      sources = await this.sourcesOf(url);
    } catch (e) {
      throw this.err(e, name);
    }
    const entry = this.configEntry(name);
    const fromDiscovery = sources.names.length > 0 || (discovered?.has(name) ?? false);
    const inScope = !this.config.queueNamePrefix || name.startsWith(this.config.queueNamePrefix);
    const counted = entry !== undefined || (this.config.discover && fromDiscovery && inScope);
    const safeCopyOf = counted ? null : await this.safeCopyOf(name, discovered);
    if (!counted && !safeCopyOf) throw this.notFound(name);
    const described = sources.names.slice(0, SOURCE_DESCRIBE_MAX);
    const sourceInfos: SourceInfo[] = await mapLimit(described, this.o.describeConcurrency, async (s) => {
      try {
        const u = await this.urlOf(s);
        return {
          name: s,
          attrs: ((
            await this.sqs.send(
              new GetQueueAttributesCommand({
                QueueUrl: u,
                AttributeNames: ["RedrivePolicy", "MessageRetentionPeriod", "QueueArn"],
              }),
            )
          ).Attributes ?? {}) as Attrs,
        };
      } catch {
        return { name: s, attrs: null };
      }
    });
    const summary = buildSummary({
      connectionId: this.connectionId,
      name,
      attrs,
      sources: sourceInfos,
      sourcesTruncated: sources.truncated || sources.names.length > SOURCE_DESCRIBE_MAX,
      configOrigin: entry?.origin ?? null,
      source: entry && fromDiscovery ? "config+discovered" : entry ? "config" : "discovered",
      readVisibilitySeconds: this.config.readVisibilityTimeoutSeconds,
      nativeBulkMove: this.capabilities.nativeBulkMove,
      oldestSeen: this.oldestSeen.get(name) ?? null,
      now: Date.now(),
      safeCopyOf,
    });
    return { url, attrs, summary };
  }

  /**
   * A queue named like a DLQ's safe queue (`<dlq>-safe`, safe-move.ts) counts as a DLQ while that
   * DLQ does: it holds the DLQ's letters and shares its origins. Null when the name does not fit or
   * the DLQ is gone or not one the console counts.
   */
  private async safeCopyOf(
    name: string,
    discovered?: Map<string, string[]>,
  ): Promise<{ dlq: string; origins: string[] } | null> {
    const dlq = dlqOfSafeQueueName(name);
    if (!dlq) return null;
    try {
      return { dlq, origins: (await this.describe(dlq, discovered)).summary.origins };
    } catch (e) {
      if (e instanceof BrokerError && e.kind === "not_found") return null;
      throw e;
    }
  }

  async listDlqs(): Promise<DlqSummary[]> {
    await this.ping();
    let discovered = new Map<string, string[]>();
    const safeQueues: string[] = [];
    if (this.config.discover) {
      try {
        const { urls } = await listQueueUrls(this.sqs, this.config.queueNamePrefix, 20_000);
        discovered = await discoverDlqs(this.sqs, urls, this.o.describeConcurrency);
        for (const url of urls) {
          const name = queueNameOfUrl(url);
          const dlq = dlqOfSafeQueueName(name);
          if (dlq && (discovered.has(dlq) || this.configEntry(dlq))) safeQueues.push(name);
        }
      } catch (e) {
        throw this.err(e);
      }
    }
    const names = [...new Set([...this.config.dlqs.map((d) => d.name), ...discovered.keys(), ...safeQueues])].sort();
    const out = await mapLimit(names, 4, async (name): Promise<DlqSummary | null> => {
      try {
        return (await this.describe(name, discovered)).summary;
      } catch (e) {
        if (!(e instanceof BrokerError && e.kind === "not_found")) throw e;
        const entry = this.configEntry(name);
        if (!entry) return null; // Deleted since discovery.
        return {
          connectionId: this.connectionId,
          name,
          kind: "sqs",
          queueType: "unknown",
          depth: null,
          inFlight: null,
          consumers: null,
          origins: entry.origin ? [entry.origin] : [],
          source: "config",
          readRisk: null,
          facts: [],
          warnings: [
            {
              code: "missing",
              label: "does not exist",
              message: `Queue "${name}" is named in the config but does not exist on ${this.displayName} (region ${this.config.region}).`,
            },
          ],
        };
      }
    });
    return out.filter((x): x is DlqSummary => x !== null);
  }

  async describeDlq(name: string): Promise<DlqSummary> {
    return (await this.describe(name)).summary;
  }

  /**
   * How a read receives. A FIFO queue is read one receive at a time: SQS hands out a message
   * group's letters only in the call that takes its earlier ones, so concurrent calls would split a
   * group between them and the later call would get none of it.
   */
  private readerOptions(d: Described, waitSeconds: number, signal?: AbortSignal): ReaderOptions {
    const concurrency = d.summary.queueType === "fifo" ? 1 : this.o.receiveConcurrency;
    return {
      queueUrl: d.url,
      visibilityTimeout: this.config.readVisibilityTimeoutSeconds,
      waitSeconds,
      concurrency,
      maxEmptyReceives: this.o.maxEmptyReceives,
      signal,
    };
  }

  /** Risk guard plus how many letters may still be hidden without reaching SQS's in-flight limit. */
  private async openRead(name: string, opts: StreamOptions): Promise<Described & { room: number }> {
    const d = await this.describe(name);
    if (d.summary.readRisk && !opts.acceptRisk)
      throw new BrokerError("risky_read", {
        userMessage: d.summary.readRisk.message,
        details: { readRisk: d.summary.readRisk },
      });
    const room = SQS_IN_FLIGHT_LIMIT - this.o.inFlightMargin - (d.summary.inFlight ?? 0);
    return { ...d, room: Math.max(0, room) };
  }

  private tooManyInFlight(name: string, wanted: number, inFlight: number | null) {
    return new BrokerError("throttled", {
      userMessage: `Reading ${wanted} letters of "${name}" would hide them all at once, and ${inFlight ?? 0} messages are already in flight: SQS allows ${SQS_IN_FLIGHT_LIMIT.toLocaleString("en-US")} per queue. Read a smaller page, or wait for in-flight messages to be released.`,
    });
  }

  /**
   * Receives up to `want` letters and holds them. Stops at the observed depth, then makes one short
   * extra round for letters the approximate depth did not count.
   */
  private async receiveWindow(
    d: Described,
    want: number,
    held: HeldLetters,
    opts: ReaderOptions,
    onMessage: (m: Message) => void,
  ) {
    const depth = d.summary.depth ?? want;
    const first = await receiveUpTo(this.sqs, held, Math.min(want, depth), opts, onMessage, want);
    let received = first.received;
    if (received < want && received >= depth && !opts.signal?.aborted) {
      const extra = await receiveUpTo(this.sqs, held, want - received, shortRounds(opts), onMessage);
      received += extra.received;
    }
    return received;
  }

  private noteOldest(name: string, keys: SortKey[], coveredQueue: boolean) {
    if (!coveredQueue) return;
    if (keys.length === 0) this.oldestSeen.delete(name);
    else this.oldestSeen.set(name, { sentMs: Math.min(...keys.map((k) => k.sent)), atMs: Date.now() });
  }

  async browse(name: string, opts: BrowseOptions): Promise<LetterPage> {
    const offset = Math.max(0, Math.floor(opts.offset));
    const limit = Math.max(1, Math.min(1000, Math.floor(opts.limit)));
    const want = offset + limit + 1;
    if (want - 1 > this.o.maxBrowseWindow) {
      throw new BrokerError("bad_request", {
        userMessage: `SQS has no positions to jump to: a page at offset ${offset} would hide ${want - 1} letters to reach it (at most ${this.o.maxBrowseWindow} per read). Use filters on the triage index for deeper pages.`,
      });
    }
    const d = await this.openRead(name, opts);
    if (offset + limit > d.room) throw this.tooManyInFlight(name, offset + limit, d.summary.inFlight);
    // Letters outside the page are dropped after sorting; until then their bodies share one budget
    // (a letter cut further than asked says so in bodyTruncated, with the size and sha256 of the whole).
    const maxBodyBytes = Math.min(
      opts.maxBodyBytes ?? Infinity,
      Math.max(4096, Math.floor(this.o.browseBufferBytes / want)),
    );
    const ctx = {
      soleSource: d.summary.origins.length === 1 && !this.configEntry(name)?.origin ? d.summary.origins[0] : null,
      configOrigin: this.configEntry(name)?.origin ?? null,
    };
    const held = new HeldLetters(this.sqs, this.readerOptions(d, this.o.browseWaitSeconds, opts.signal));
    const window: Array<{ key: SortKey; letter: Letter }> = [];
    const reach = Math.min(want, d.room);
    let unreached: StreamShortfall | null = null;
    try {
      const received = await this.receiveWindow(
        d,
        reach,
        held,
        this.readerOptions(d, this.o.browseWaitSeconds, opts.signal),
        (m) => {
          window.push({ key: sortKeyOf(m), letter: toLetter(m, "", 0, { ...ctx, maxBodyBytes }) });
        },
      );
      window.sort((a, b) => compareKeys(a.key, b.key));
      this.noteOldest(
        name,
        window.map((w) => w.key),
        received < want,
      );
      // The read ended before the page's end: this is the last page it could reach. Letters the DLQ
      // holds beyond it (in flight with another reader or consumer, later letters of a FIFO group)
      // are on no page; asked while this read still holds its own, so they are not counted.
      if (received < want && !opts.signal?.aborted)
        unreached = await this.shortfall(d, held.count, received >= reach, true);
    } catch (e) {
      throw this.err(e, name);
    } finally {
      await held.release();
    }
    const occ = new OccurrenceCounter();
    const letters: Letter[] = [];
    window.forEach((w, pos) => {
      const id = occ.next(baseIdOf(w.letter.messageId ?? ""));
      if (pos >= offset && pos < offset + limit) letters.push({ ...w.letter, id, position: pos });
    });
    return { letters, offset, limit, hasMore: window.length > offset + limit, depth: d.summary.depth, unreached };
  }

  async *stream(name: string, opts: StreamOptions = {}): AsyncIterable<Letter> {
    const d = await this.openRead(name, opts);
    const limit = Math.min(d.room, this.o.maxScan);
    const total = Math.min(d.summary.depth ?? this.o.maxScan, limit);
    const ctx = {
      soleSource: d.summary.origins.length === 1 && !this.configEntry(name)?.origin ? d.summary.origins[0] : null,
      configOrigin: this.configEntry(name)?.origin ?? null,
    };
    const ro = this.readerOptions(d, this.o.streamWaitSeconds, opts.signal);
    // Past the observed depth (an approximate count can be short): short rounds while they still
    // bring letters, up to the read limit.
    const extra = shortRounds(ro);
    const held = new HeldLetters(this.sqs, ro);
    const occ = new OccurrenceCounter();
    let pos = 0;
    try {
      let remaining = total;
      let read = 0;
      while (read < limit && !opts.signal?.aborted) {
        const chunk: Message[] = [];
        const past = remaining <= 0;
        let r: Awaited<ReturnType<typeof receiveUpTo>>;
        try {
          const want = Math.min(this.o.streamChunk, past ? limit - read : remaining);
          r = await receiveUpTo(
            this.sqs,
            held,
            want,
            past ? extra : ro,
            (m) => chunk.push(m),
            Math.min(this.o.streamChunk, limit - read),
          );
        } catch (e) {
          throw this.err(e, name);
        }
        remaining -= r.received;
        read += r.received;
        const keyed = chunk.map((m) => ({ key: sortKeyOf(m), m })).sort((a, b) => compareKeys(a.key, b.key));
        for (const { m } of keyed) {
          yield toLetter(m, occ.next(baseIdOf(m.MessageId ?? "")), pos++, { ...ctx, maxBodyBytes: opts.maxBodyBytes });
          await held.extendIfDue().catch(() => undefined);
        }
        if (r.exhausted) break;
      }
      if (!opts.signal?.aborted && opts.onShortfall) {
        const short = await this.shortfall(d, held.count, read >= limit);
        if (short) opts.onShortfall(short);
      }
    } finally {
      await held.release();
    }
  }

  /**
   * Whether a stream that ended left letters unread, asked while it still holds what it read:
   * letters still visible (on a FIFO queue, the later letters of groups it holds: SQS hands them
   * out only after the earlier ones are deleted), letters in flight beyond its own (another reader
   * holds them), or the read limit reached. SQS's counts are approximate, so this errs towards
   * "not everything was read": a scan then marks nothing gone, and the next one catches up.
   */
  private async shortfall(
    d: Described & { room: number },
    held: number,
    capped: boolean,
    /** A page's read (its limit is what the in-flight limit leaves), not a scan's. */
    page = false,
  ): Promise<StreamShortfall | null> {
    const words = (n: number) => `${n.toLocaleString("en-US")} letter${n === 1 ? "" : "s"}`;
    if (capped) {
      const limit = page
        ? `, less the ${(d.summary.inFlight ?? 0).toLocaleString("en-US")} already in flight when it began and a margin of ${this.o.inFlightMargin.toLocaleString("en-US")}`
        : `, and this console reads at most ${this.o.maxScan.toLocaleString("en-US")} per scan`;
      return {
        reason: `The read stopped at ${words(held)}: SQS lets one reader hold at most ${SQS_IN_FLIGHT_LIMIT.toLocaleString("en-US")} letters in flight per queue${limit}.`,
        unread: d.summary.depth === null ? null : Math.max(0, d.summary.depth - held),
      };
    }
    let attrs: Attrs;
    try {
      attrs = await this.attrsOf(d.summary.name, d.url);
    } catch {
      return {
        reason: "SQS did not answer when asked whether letters were left unread, so this read may be incomplete.",
        unread: null,
      };
    }
    const visible = Number(attrs.ApproximateNumberOfMessages ?? 0) || 0;
    const othersHold = Math.max(0, (Number(attrs.ApproximateNumberOfMessagesNotVisible ?? 0) || 0) - held);
    if (visible === 0 && othersHold === 0) return null;
    const parts: string[] = [];
    if (visible > 0) {
      parts.push(
        d.summary.queueType === "fifo"
          ? `${words(visible)} wait behind the letters read, in their message groups: SQS hands out the later letters of a FIFO group only after the earlier ones are deleted, so they cannot be read without removing letters`
          : `${words(visible)} were still waiting when the read ended (they arrived meanwhile, or SQS's approximate count is behind)`,
      );
    }
    if (othersHold > 0) parts.push(`${words(othersHold)} were in flight, held by another reader or consumer`);
    return { reason: `${parts.join("; ")}.`, unread: visible + othersHold };
  }

  async getLetter(name: string, id: string, opts: StreamOptions = {}): Promise<Letter | null> {
    if (!isSqsLetterId(id)) {
      await this.describeDlq(name);
      return null;
    }
    const [base, nth] = id.includes("~")
      ? [id.slice(0, id.indexOf("~")), Number(id.slice(id.indexOf("~") + 1))]
      : [id, 1];
    const d = await this.openRead(name, opts);
    const total = Math.min(d.summary.depth ?? this.o.maxScan, d.room, this.o.maxScan);
    const ctx = {
      soleSource: d.summary.origins.length === 1 && !this.configEntry(name)?.origin ? d.summary.origins[0] : null,
      configOrigin: this.configEntry(name)?.origin ?? null,
    };
    const ro = this.readerOptions(d, this.o.browseWaitSeconds, opts.signal);
    const held = new HeldLetters(this.sqs, ro);
    // Keys of every letter (for its position) and only the letters that carry this MessageId.
    const keys: SortKey[] = [];
    const matches: Array<{ key: SortKey; m: Message }> = [];
    try {
      const received = await this.receiveWindow(
        { ...d, summary: { ...d.summary, depth: total } },
        Math.max(total, 1),
        held,
        ro,
        (m) => {
          const key = sortKeyOf(m);
          keys.push(key);
          if (baseIdOf(m.MessageId ?? "") === base) matches.push({ key, m });
        },
      );
      this.noteOldest(name, keys, total === d.summary.depth || received < total);
      // Not among the letters read: "gone" only if no letter of the DLQ was out of this read's reach
      // (in flight with another reader or consumer, or past the read limit), asked while it still
      // holds what it read.
      if (matches.length < nth) {
        const short = await this.shortfall(d, held.count, received >= Math.min(d.room, this.o.maxScan));
        if (short)
          throw new BrokerError("throttled", {
            userMessage: `Letter ${id} was not among the ${received.toLocaleString("en-US")} letters SQS handed out just now, and not every letter of "${name}" could be read: ${short.reason} It may be one of them, so it is not called gone. Try again in a moment.`,
          });
      }
    } catch (e) {
      throw this.err(e, name);
    } finally {
      await held.release();
    }
    matches.sort((a, b) => compareKeys(a.key, b.key));
    const hit = matches[nth - 1];
    if (!hit) return null;
    keys.sort(compareKeys);
    const position = keys.indexOf(hit.key);
    return toLetter(hit.m, id, position, { ...ctx, maxBodyBytes: opts.maxBodyBytes });
  }

  /** The write side lives in mover.ts; this only hands it the adapter's client and lookups. */
  moveLetters(name: string, requests: MoveRequest[], opts: MoveOptions = {}): AsyncIterable<MoveResult> {
    return moveSqsLetters(this.moveContext(name, opts), name, requests, opts);
  }

  private moveContext(name: string, opts: { acceptRisk?: boolean }): SqsMoveContext {
    const requestTimeoutMs = (Math.max(this.o.browseWaitSeconds, this.o.streamWaitSeconds) + 20) * 1000;
    let soleSource: string | null = null;
    return {
      sqs: this.sqs,
      open: async () => {
        const d = await this.openRead(name, { acceptRisk: opts.acceptRisk });
        soleSource = d.summary.origins.length === 1 && !this.configEntry(name)?.origin ? d.summary.origins[0] : null;
        return d;
      },
      urlOf: async (queue, account) => {
        if (!account) return this.urlOf(queue);
        try {
          const { QueueUrl } = await this.sqs.send(
            new GetQueueUrlCommand({ QueueName: queue, QueueOwnerAWSAccountId: account }),
          );
          if (!QueueUrl) throw this.notFound(queue);
          return QueueUrl;
        } catch (e) {
          throw this.err(e, queue);
        }
      },
      queueAttrs: async (_queue, url) =>
        ((
          await this.sqs.send(
            new GetQueueAttributesCommand({ QueueUrl: url, AttributeNames: ["FifoQueue", "QueueArn"] }),
          )
        ).Attributes ?? {}) as Attrs,
      err: (e, queue) => this.err(e, queue),
      region: this.config.region,
      visibilityTimeout: moveVisibilitySeconds(
        this.config.readVisibilityTimeoutSeconds,
        requestTimeoutMs,
        this.o.maxAttempts,
      ),
      receiveConcurrency: this.o.receiveConcurrency,
      maxEmptyReceives: this.o.maxEmptyReceives,
      maxScan: this.o.maxScan,
      maxBatchBytes: this.capabilities.maxBodyBytes ?? 256 * 1024,
      letterOptions: () => ({ soleSource, configOrigin: this.configEntry(name)?.origin ?? null }),
      isManagedHeader: this.isManagedHeader,
    };
  }

  /** See `BrokerAdapter.removeLetters`: the same walk as moveLetters (walk.ts), delivering to `beforeRemove` (remove.ts). */
  removeLetters(name: string, requests: RemoveRequest[], opts: RemoveOptions): AsyncIterable<RemoveResult> {
    return removeSqsLetters(this.moveContext(name, opts), name, requests, opts);
  }

  /** See `BrokerAdapter.republish` and republish.ts. */
  republish(name: string, requests: RepublishRequest[], opts: RepublishOptions = {}): AsyncIterable<RepublishResult> {
    return republishSqs(
      {
        sqs: this.sqs,
        open: async () => {
          const d = await this.describe(name);
          return { url: d.url, fifo: d.summary.queueType === "fifo" };
        },
        err: (e, queue) => this.err(e, queue),
      },
      name,
      requests,
      opts,
    );
  }

  /**
   * See `RepairOps`: moveLetters applies `MoveRequest.repair` (repair.ts): a new body must be SQS
   * text, edits are String attributes.
   */
  readonly repair: RepairOps = {
    // The copy's MessageId (SendMessage's answer) is kept by the redrive policy's move.
    copyLetterId: (copyId) => (copyId === "" ? null : baseIdOf(copyId)),
    refusal: (repair) => sqsRepairRefusal(repair, this.isManagedHeader),
  };

  /**
   * See `SafeMoveOps` and safe-move.ts: a native move task, polled. Only where the server has
   * message move tasks: only a move task moves letters without a receive that counts against the DLQ.
   */
  readonly safeMove?: SafeMoveOps;

  private safeMoveContext(): SafeMoveContext {
    return {
      sqs: this.sqs,
      enabled: this.config.messageMoveTasks,
      displayName: this.displayName,
      describe: (name) => this.describe(name),
      lookup: async (name) => {
        let url: string;
        try {
          url = await this.urlOf(name);
        } catch (e) {
          if (e instanceof BrokerError && e.kind === "not_found") return null;
          throw e;
        }
        try {
          return { url, attrs: await this.attrsOf(name, url) };
        } catch (e) {
          if (e instanceof BrokerError && e.kind === "not_found") return null;
          throw e;
        }
      },
      created: (name, url) => this.urls.set(name, url),
      err: (e, queue) => this.err(e, queue),
      pollMs: this.o.safeMovePollMs,
      maxPerSecond: this.o.safeMoveMaxPerSecond,
    };
  }

  private watchOps: SampleWatchOps | null = null;
  /** See `BrokerAdapter.sampleWatch` and sample-watch.ts: a target queue's counts, never a receive. */
  get sampleWatch(): SampleWatchOps {
    this.watchOps ??= sqsSampleWatch({
      sqs: this.sqs,
      endpoint: this.endpoint,
      settleMs: isAwsEndpoint(this.config.endpoint) ? AWS_COUNTS_SETTLE_MS : 0,
    });
    return this.watchOps;
  }

  /** See `BrokerAdapter.inspect` and inspect.ts: attributes only, never a receive. */
  inspect(opts: InspectOptions): Promise<BrokerInspection> {
    return inspectSqs(
      {
        sqs: this.sqs,
        config: this.config,
        concurrency: this.o.describeConcurrency,
        err: (e, queue) => this.err(e, queue),
      },
      opts,
    );
  }

  async ping(): Promise<void> {
    try {
      await this.sqs.send(
        new ListQueuesCommand({ MaxResults: 1, QueueNamePrefix: this.config.queueNamePrefix || undefined }),
      );
    } catch (e) {
      throw this.err(e);
    }
  }

  /**
   * Whether this server answers ListMessageMoveTasks for the queue: the check behind the
   * `messageMoveTasks` config flag (moto does not implement it).
   */
  async supportsMessageMoveTasks(name: string): Promise<boolean> {
    const d = await this.describe(name);
    if (!d.attrs.QueueArn) return false;
    try {
      await this.sqs.send(new ListMessageMoveTasksCommand({ SourceArn: d.attrs.QueueArn, MaxResults: 1 }));
      return true;
    } catch (e) {
      const mapped = this.err(e, name);
      if (mapped.kind === "unreachable" || mapped.kind === "auth") throw mapped;
      return false;
    }
  }

  async close(): Promise<void> {
    this.sqs.destroy();
  }
}
