import "server-only";
/**
 * Reading a dead-letter topic as letters: a page (browse), every letter from the log start or from
 * remembered offsets (stream, tail), and one letter by id. Records are fetched by offset with plain
 * Fetches (no group, nothing committed); each letter carries the console's handled mark, looked up
 * in the handled store once per range or per Fetch. A share-group dead letter read by id is joined
 * with its original record.
 */
import { BrokerError } from "@/lib/brokers/contract/errors";
import type { BrowseOptions, LetterPage, StreamOptions } from "@/lib/brokers/contract/dlq";
import type { Letter } from "@/lib/brokers/contract/letter";
import type { InternalRecord } from "@/lib/brokers/kafka/client";
import { readPartition, readPartitionConcurrently, type FetchedBatch } from "@/lib/brokers/kafka/fetcher";
import { parseLetterId } from "@/lib/brokers/kafka/discovery";
import { toLetter } from "@/lib/brokers/kafka/letter";
import {
  markApplies,
  refKey,
  type HandledMark,
  type HandledStore,
  type RecordRef,
} from "@/lib/brokers/kafka/handled-store";
import { planPage, type Segment } from "@/lib/brokers/kafka/paging";
import { originalRef, type OriginalLookup } from "@/lib/brokers/kafka/share-dlq";
import { joinedLetter, type OriginalRef } from "@/lib/brokers/kafka/share-original";
import { originOf } from "@/lib/brokers/kafka/headers";
import type { KafkaTopics, TopicKey, TopicState } from "@/lib/brokers/kafka/topics";

const MAX_PAGE = 1000;
const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);

export interface ReaderDeps {
  /** Throws `not_found` when `name` is not a DLT the console knows (summary.ts's `known`). */
  known(name: string): Promise<unknown>;
  /** The original record of a share-group dead letter, while its topic retains it (share-original.ts). */
  originalOf(ref: OriginalRef): Promise<OriginalLookup>;
}

export class KafkaReader {
  constructor(
    private readonly topics: KafkaTopics,
    private readonly store: HandledStore | null,
    private readonly deps: ReaderDeps,
  ) {}

  private get connectionId() {
    return this.topics.connectionId;
  }

  /**
   * The marks that count for these records of one partition: legacy marks (see handled-store.ts)
   * only for records no younger than the mark, and those are then given the topic's id.
   */
  private settleMarks(
    key: TopicKey,
    partition: number,
    records: InternalRecord[],
    marks: Map<string, HandledMark> | undefined,
  ): Map<string, HandledMark> {
    const out = new Map<string, HandledMark>();
    if (!marks?.size) return out;
    const adopt: RecordRef[] = [];
    for (const r of records) {
      const k = refKey(partition, r.offset);
      const m = marks.get(k);
      if (!markApplies(m, r.timestamp)) continue;
      out.set(k, m);
      if (m.legacy) adopt.push({ partition, offset: BigInt(r.offset) });
    }
    if (adopt.length && key.id && this.store?.adoptLegacy) {
      this.store
        .adoptLegacy(this.connectionId, key, adopt)
        .catch((e) => console.warn(`[kafka] adopting handled offsets of ${key.name}: ${(e as Error).message}`));
    }
    return out;
  }

  /** Records of [from, to) of one partition, as letters (handled marks looked up once for the lot). */
  private async readRange(
    name: string,
    seg: Segment,
    firstPosition: number,
    opts: { maxBodyBytes?: number; signal?: AbortSignal },
  ): Promise<Letter[]> {
    const cluster = await this.topics.getCluster(name);
    const configOrigin = this.topics.configEntry(name)?.origin ?? null;
    const records: InternalRecord[] = [];
    try {
      for await (const r of readPartition(
        cluster,
        name,
        seg.partition,
        seg.from,
        seg.to,
        this.topics.limits,
        opts.signal,
      )) {
        records.push(r);
      }
    } catch (e) {
      throw this.topics.err(e, name);
    }
    // The id is asked after the read: if the topic was recreated meanwhile, the records are checked
    // against the new topic's marks and at worst shown as not handled, never the other way round.
    let marks = new Map<string, HandledMark>();
    if (records.length && this.store) {
      const key = await this.topics.topicKey(name).catch((e: unknown) => {
        if (e instanceof BrokerError && e.kind === "not_found") throw e;
        console.warn(`[kafka] topic id of ${name}: ${(e as Error).message}`);
        return null;
      });
      if (key)
        marks = this.settleMarks(
          key,
          seg.partition,
          records,
          await this.marksBetween(
            key,
            seg.partition,
            BigInt(records[0].offset),
            BigInt(records[records.length - 1].offset),
          ),
        );
    }
    return records.map((r) =>
      toLetter(name, seg.partition, r, firstPosition + Number(BigInt(r.offset) - seg.from), {
        maxBodyBytes: opts.maxBodyBytes,
        configOrigin,
        handled: marks.get(refKey(seg.partition, r.offset)),
      }),
    );
  }

  /** Marks of these records (in offset order, one partition): one range query where the store has it. */
  private async marksBetween(
    key: TopicKey,
    partition: number,
    first: bigint,
    last: bigint,
  ): Promise<Map<string, HandledMark>> {
    if (!this.store || last < first) return new Map();
    if (!this.store.handledBetween) {
      const refs: Array<{ offset: string }> = [];
      for (let o = first; o <= last && refs.length < 100_000; o++) refs.push({ offset: o.toString() });
      return this.marksFor(key, partition, refs);
    }
    try {
      return await this.store.handledBetween(this.connectionId, key, partition, first, last);
    } catch (e) {
      console.warn(`[kafka] handled offsets for ${key.name}: ${(e as Error).message}`);
      return new Map();
    }
  }

  private async marksFor(
    key: TopicKey,
    partition: number,
    records: Array<{ offset: string }>,
  ): Promise<Map<string, HandledMark>> {
    if (!this.store || !records.length) return new Map();
    try {
      return await this.store.handledAmong(
        this.connectionId,
        key,
        records.map((r) => ({ partition, offset: BigInt(r.offset) })),
      );
    } catch (e) {
      console.warn(`[kafka] handled offsets for ${key.name}: ${(e as Error).message}`);
      return new Map();
    }
  }

  async browse(name: string, opts: BrowseOptions): Promise<LetterPage> {
    const offset = Math.max(0, Math.floor(opts.offset));
    const limit = Math.max(1, Math.min(MAX_PAGE, Math.floor(opts.limit)));
    const order = opts.order ?? "oldest";
    await this.deps.known(name);
    const state = await this.topics.topicState(name);
    let fromOffset: bigint | undefined;
    if (opts.fromOffset !== undefined) {
      if (!/^\d{1,19}$/.test(opts.fromOffset))
        throw new BrokerError("bad_request", {
          userMessage: `"${opts.fromOffset}" is not an offset: use a whole number.`,
        });
      fromOffset = BigInt(opts.fromOffset);
    }
    if (opts.partition !== undefined && !state.partitions.some((p) => p.partition === opts.partition)) {
      throw new BrokerError("bad_request", {
        userMessage: `Topic "${name}" has no partition ${opts.partition} (it has ${state.partitions.length}).`,
      });
    }
    const plan = planPage(state.partitions, { partition: opts.partition, fromOffset, order, offset, limit });
    const letters: Letter[] = [];
    for (const seg of plan.segments) {
      const got = await this.readRange(name, seg, 0, opts);
      // Positions count from the page's start in the chosen order.
      for (const l of order === "newest" ? got.reverse() : got) {
        const o = BigInt(l.id.slice(l.id.indexOf("-") + 1));
        letters.push({ ...l, position: seg.positionOf(o) });
      }
    }
    return {
      letters,
      offset,
      limit,
      hasMore: plan.hasMore,
      depth: state.total,
      partition: opts.partition ?? null,
      order,
    };
  }

  /** `readBatches`, letter by letter with each one's partition and offset (the tail's read). */
  async *readFrom(
    name: string,
    from: Map<number, bigint> | null,
    opts: StreamOptions,
  ): AsyncGenerator<{ letter: Letter; partition: number; offset: string }> {
    for await (const b of this.readBatches(name, from, opts))
      for (let i = 0; i < b.letters.length; i++)
        yield { letter: b.letters[i], partition: b.partition, offset: b.offsets[i] };
  }

  /**
   * Every letter from each partition's start (or `from`'s offset, where the log still has it) to
   * its end as observed when the read begins, partition by partition; the letter's position counts
   * from the log start. One Fetch response's letters at a time (one partition's, in offset order,
   * `offsets[i]` that of `letters[i]`): a stream hands them out one by one without a second
   * generator step per letter.
   */
  async *readBatches(
    name: string,
    from: Map<number, bigint> | null,
    opts: StreamOptions,
  ): AsyncGenerator<{ partition: number; offsets: string[]; letters: Letter[] }> {
    await this.deps.known(name);
    // End offsets observed now: letters that arrive while streaming are not read.
    const state = await this.topics.topicState(name);
    // A remembered offset outside [start, end] (deleted by retention, topic recreated): from the start.
    const startOf = (p: TopicState["partitions"][number]) => {
      const f = from?.get(p.partition);
      return f !== undefined && f >= p.start && f <= p.end ? f : p.start;
    };
    const cluster = await this.topics.getCluster(name);
    const configOrigin = this.topics.configEntry(name)?.origin ?? null;
    // The id before the read (the lookups run while fetching) and again after it (see the end).
    const key: TopicKey = this.store ? await this.topics.topicKey(name) : { name, id: null };
    // One count per partition first: partitions without handled offsets need no lookups at all.
    // Legacy rows (id "", a bare name) are counted apart: they too need the lookup, to be checked.
    const count = (k: TopicKey | string) => this.store!.handledCounts(this.connectionId, k, state.partitions);
    const handledCounts = this.store
      ? await Promise.all([count(key), key.id === null ? null : count(name)]).catch(() => null)
      : null;
    const open = (p: TopicState["partitions"][number]) => {
      const lookup =
        this.store !== null && (handledCounts === null || handledCounts.some((c) => (c?.get(p.partition) ?? 0) > 0));
      // The handled lookup of a batch runs as soon as its Fetch response is in: one range query per Fetch.
      const annotate = lookup
        ? (first: bigint, last: bigint) => this.marksBetween(key, p.partition, first, last)
        : undefined;
      return readPartitionConcurrently(
        cluster,
        name,
        p.partition,
        startOf(p),
        p.end,
        this.topics.limits,
        opts.signal,
        annotate,
      );
    };
    let base = 0;
    let ahead: {
      iter: ReturnType<typeof open>;
      first: Promise<IteratorResult<FetchedBatch<Map<string, HandledMark>>>>;
    } | null = null;
    for (let k = 0; k < state.partitions.length; k++) {
      const p = state.partitions[k];
      const iter = ahead?.iter ?? open(p);
      let first = ahead?.first ?? null;
      ahead = null;
      // Positions in plain numbers when every offset of the partition is a safe integer (always, in practice).
      const exact = p.end <= MAX_SAFE;
      const start = Number(p.start);
      let finished = false;
      try {
        for (;;) {
          let step: IteratorResult<FetchedBatch<Map<string, HandledMark>>>;
          try {
            step = await (first ?? iter.next());
          } catch (e) {
            throw this.topics.err(e, name);
          }
          first = null;
          if (step.done) break;
          const { records, meta: marks, last } = step.value;
          if (last && k + 1 < state.partitions.length && !ahead) {
            // This partition has no Fetch left: request the next partition's first batch meanwhile.
            const nextIter = open(state.partitions[k + 1]);
            const nextFirst = nextIter.next();
            nextFirst.catch(() => undefined);
            ahead = { iter: nextIter, first: nextFirst };
          }
          const settled =
            marks !== undefined && marks.size > 0 ? this.settleMarks(key, p.partition, records, marks) : null;
          const letters: Letter[] = new Array(records.length);
          const offsets: string[] = new Array(records.length);
          for (let i = 0; i < records.length; i++) {
            const r = records[i];
            const position = base + (exact ? Number(r.offset) - start : Number(BigInt(r.offset) - p.start));
            letters[i] = toLetter(name, p.partition, r, position, {
              maxBodyBytes: opts.maxBodyBytes,
              configOrigin,
              handled: settled?.get(refKey(p.partition, r.offset)),
            });
            offsets[i] = r.offset;
          }
          yield { partition: p.partition, offsets, letters };
        }
        finished = true;
      } finally {
        if (!finished) {
          // Stopped early (break, abort, error): let this partition's reader and the read-ahead go.
          void iter.return(undefined).catch(() => undefined);
          if (ahead) void ahead.iter.return(undefined).catch(() => undefined);
        }
      }
      base += Number(p.end - p.start);
    }
    // Recreated while it was read: the marks may belong to the other topic. The read does not count.
    if (key.id !== null && (await this.topics.topicKey(name)).id !== key.id) {
      throw new BrokerError("not_found", {
        userMessage: `Topic "${name}" was deleted and created again while it was read. Read it again.`,
      });
    }
  }

  async getLetter(name: string, id: string, opts: StreamOptions = {}): Promise<Letter | null> {
    await this.deps.known(name);
    const ref = parseLetterId(id);
    if (!ref) return null;
    const state = await this.topics.topicState(name);
    let before = 0;
    for (const p of state.partitions) {
      if (p.partition === ref.partition) {
        if (ref.offset < p.start || ref.offset >= p.end) return null;
        const got = await this.readRange(
          name,
          { partition: p.partition, from: ref.offset, to: ref.offset + 1n, positionOf: () => 0 },
          before + Number(ref.offset - p.start),
          opts,
        );
        const l = got.find((x) => x.id === id);
        if (!l) return null;
        const found = { ...l, position: before + Number(ref.offset - p.start) };
        return originOf(found.headers).convention === "share" ? this.withOriginal(name, ref, found, opts) : found;
      }
      before += Number(p.end - p.start);
    }
    return null;
  }

  /** A share-group dead letter joined with its original record, or warned that it is gone. */
  private async withOriginal(
    name: string,
    at: { partition: number; offset: bigint },
    letter: Letter,
    opts: StreamOptions,
  ): Promise<Letter> {
    const record = await this.topics.recordAt(name, at.partition, at.offset).catch((e: unknown) => {
      throw this.topics.err(e, name);
    });
    const ref = record ? originalRef(record.headers) : null;
    if (!record || !ref) return letter;
    return joinedLetter(letter, record, await this.deps.originalOf(ref), ref, { maxBodyBytes: opts.maxBodyBytes });
  }
}
