import "server-only";
import type { Channel } from "amqplib";
import amqp from "amqplib";
import type { RabbitConnectionConfig } from "@/lib/config";
import { secretFromEnv } from "@/lib/config";
import { BrokerError } from "@/lib/brokers/contract/errors";
import type { AdapterSetup, BrokerAdapter } from "@/lib/brokers/contract/adapter";
import type { BrokerCapabilities, BrokerVocabulary } from "@/lib/brokers/contract/capabilities";
import type { BrokerInspection, InspectOptions } from "@/lib/brokers/contract/inspection";
import type { BrowseOptions, DlqSummary, LetterPage, ReadRisk, StreamOptions } from "@/lib/brokers/contract/dlq";
import type { DlqWarning, HeaderEntry, Letter } from "@/lib/brokers/contract/letter";
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
import { toDisplayValue } from "@/lib/brokers/display";
import { repairRefusal } from "@/lib/brokers/move-rules";
import {
  AmqpConnection,
  closeQuietly,
  isResourceLocked,
  mapAmqpError,
  vhostOf,
} from "@/lib/brokers/rabbitmq/connection";
import { ManagementClient, ManagementError, type MgmtQueue } from "@/lib/brokers/rabbitmq/management";
import { discoverDlqs, queueKindOf, safeCopiesOf, type QueueKind } from "@/lib/brokers/rabbitmq/discovery";
import { ANSWER_MS, QueueReader } from "@/lib/brokers/rabbitmq/reader";
import { MOVER_LOCK_GRACE_MS, READ_LOCK_PREFIX, ReadLocks, readLockName } from "@/lib/brokers/rabbitmq/read-lock";
import { readRiskOf } from "@/lib/brokers/rabbitmq/risk";
import { OccurrenceCounter, baseLetterId, isLetterId, twinOf } from "@/lib/brokers/rabbitmq/identity";
import { letterIdOf, toLetter } from "@/lib/brokers/rabbitmq/letter";
import { RABBITMQ_MANAGED_HEADERS } from "@/lib/brokers/rabbitmq/managed-headers";
import { moveLetters, removeLetters } from "@/lib/brokers/rabbitmq/mover";
import type { MoverContext } from "@/lib/brokers/rabbitmq/walk";
import { REPAIR_RULES } from "@/lib/brokers/rabbitmq/repair";
import { republishRabbit } from "@/lib/brokers/rabbitmq/republish";
import {
  DEFAULT_SAFE_QUEUE_SUFFIX,
  moveToSafety,
  planSafeMove,
  type SafeMoveContext,
} from "@/lib/brokers/rabbitmq/safe-move";
import { inspectRabbit } from "@/lib/brokers/rabbitmq/inspect";
import { rabbitSampleWatch } from "@/lib/brokers/rabbitmq/sample-watch";
import type { SampleWatchOps } from "@/lib/brokers/target-readers";

export const RABBITMQ_CAPABILITIES: BrokerCapabilities = {
  discovery: true,
  readHidesLetters: false,
  readCountsAsDelivery: false,
  randomAccess: false,
  perLetterRemoval: true,
  nativeBulkMove: true,
  orderedKeys: false,
  stableOrder: true,
  binaryBodies: true,
  maxBodyBytes: null,
  producerMessageIds: true,
  republishLimits: [
    "An undone discard goes to the back of the DLQ, with delivery-mode 2 (persistent); every other property and header is as it was.",
  ],
  removalUnconfirmed: true,
};

export const RABBITMQ_VOCABULARY: BrokerVocabulary = { queue: "queue", letterId: "message id", origin: "origin queue" };

export interface RabbitMqAdapterOptions extends AdapterSetup {
  /**
   * A read ends when no letter arrives for this long (default 1000 ms) and the queue holds none
   * ready; while it holds some, the read waits up to `slowReadMs` (default 120 s).
   */
  idleMs?: number;
  slowReadMs?: number;
  /**
   * How long a stream (background work: a scan, a redrive's return check) waits, after an idle
   * spell, for the broker to say how many letters it still holds ready, before it takes the broker
   * for stopped (default 60 s). Browse and single letters, which answer a page, wait ANSWER_MS (5 s).
   * A classic queue of 1,000,000 letters loading them from disk (RabbitMQ 3.10) did not answer for
   * longer than 5 s, and a scan ended short at 847,639 of them (docs/benchmarks.md, 2026-12-06).
   */
  streamAnswerMs?: number;
  /** Letters buffered ahead of the caller, in bytes (default 16 MiB). */
  readBufferBytes?: number;
  /** How long a read waits for another reader of the same queue to finish (default 10 s). */
  busyWaitMs?: number;
  /** Letters published and not yet confirmed at once while moving (default 64): the crash window. */
  moveInFlight?: number;
  /** How long the mover's read lock stays declared after a call, for its next call (default MOVER_LOCK_GRACE_MS). */
  moverLockGraceMs?: number;
  /** How long management snapshots are reused (default 3 s). */
  snapshotTtlMs?: number;
  connectTimeoutMs?: number;
}

interface Snapshot {
  at: number;
  queues: Map<string, MgmtQueue> | null;
  discovered: Map<string, string[]>;
  /** Safe copy → its DLQ, for queues the console declared as safe copies (their queue argument says so). */
  safeCopies: Map<string, string>;
  /** `rabbitmq_version` from the management API, when it answered. */
  version: string | null;
  warning: DlqWarning | null;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Channels side by side when listing DLQs (each asks the broker for one queue's depth at a time). */
const LIST_LANES = 4;

export class RabbitMqAdapter implements BrokerAdapter {
  readonly kind = "rabbitmq" as const;
  readonly connectionId: string;
  readonly displayName: string;
  readonly capabilities = RABBITMQ_CAPABILITIES;
  readonly vocabulary = RABBITMQ_VOCABULARY;
  readonly managedHeaders = RABBITMQ_MANAGED_HEADERS;

  private readonly amqp: AmqpConnection;
  private readonly mgmt: ManagementClient | null;
  private readonly vhost: string;
  private readonly opts: Required<Omit<RabbitMqAdapterOptions, "allManagedHeaders">>;
  /** Every broker's and the console's managed names (`AdapterSetup`): a repair may touch none. */
  private readonly isManagedHeader: ManagedHeaderMatcher;
  private snapshotCache: Snapshot | null = null;
  private readonly probed = new Map<string, { at: number; kind: QueueKind }>();
  /** Safe copy → its DLQ, for those this adapter declared (known without the management API). */
  private readonly madeSafe = new Map<string, string>();
  /** One console read of a queue at a time, here and on every other console (read-lock.ts). */
  private readonly readLocks: ReadLocks;

  constructor(
    private readonly config: RabbitConnectionConfig,
    options: RabbitMqAdapterOptions,
  ) {
    this.connectionId = config.id;
    this.isManagedHeader = managedHeaderMatcher(options.allManagedHeaders);
    this.displayName = config.name ?? config.id;
    this.vhost = vhostOf(config.url);
    this.opts = {
      idleMs: options.idleMs ?? 1000,
      slowReadMs: options.slowReadMs ?? 120_000,
      streamAnswerMs: options.streamAnswerMs ?? 60_000,
      readBufferBytes: options.readBufferBytes ?? 16 * 1024 * 1024,
      busyWaitMs: options.busyWaitMs ?? 10_000,
      snapshotTtlMs: options.snapshotTtlMs ?? 3000,
      moveInFlight: options.moveInFlight ?? 64,
      moverLockGraceMs: options.moverLockGraceMs ?? MOVER_LOCK_GRACE_MS,
      connectTimeoutMs: options.connectTimeoutMs ?? 5000,
    };
    this.amqp = new AmqpConnection({
      url: config.url,
      username: secretFromEnv(config.usernameEnv, "guest")!,
      password: secretFromEnv(config.passwordEnv, "guest")!,
      connectTimeoutMs: this.opts.connectTimeoutMs,
    });
    this.readLocks = new ReadLocks({
      endpoint: this.amqp.endpoint,
      channel: () => this.amqp.channel(),
      busyWaitMs: this.opts.busyWaitMs,
    });
    this.mgmt = config.management
      ? new ManagementClient(
          config.management.url,
          secretFromEnv(config.management.usernameEnv, "guest")!,
          secretFromEnv(config.management.passwordEnv, "guest")!,
          this.opts.connectTimeoutMs,
        )
      : null;
  }

  private configEntry(name: string) {
    return this.config.dlqs.find((d) => d.name === name);
  }

  private get safeSuffix(): string {
    return this.config.safeQueueSuffix ?? DEFAULT_SAFE_QUEUE_SUFFIX;
  }

  /**
   * The DLQ whose letters `name` holds after a move to safety, or null: a queue the console
   * declared as a safe copy, or one named after a DLQ it knows (config or discovery) + the suffix.
   */
  private safeCopyOf(name: string, snap: Snapshot | null): string | null {
    const marked = snap?.safeCopies.get(name) ?? this.madeSafe.get(name);
    if (marked !== undefined) return marked;
    const suffix = this.safeSuffix;
    if (name.length <= suffix.length || !name.endsWith(suffix)) return null;
    const base = name.slice(0, -suffix.length);
    return this.configEntry(base) !== undefined || snap?.discovered.has(base) ? base : null;
  }

  /** The configured origin of a DLQ; a safe copy has its DLQ's. */
  private configOriginOf(name: string): string | null {
    const own = this.configEntry(name)?.origin;
    if (own) return own;
    const of = this.safeCopyOf(name, this.snapshotCache);
    return of !== null ? (this.configEntry(of)?.origin ?? null) : null;
  }

  /** The broker's version, asked once (it changes only with an upgrade, which restarts connections anyway). */
  private versionAsked: Promise<string | null> | null = null;
  private brokerVersion(): Promise<string | null> {
    this.versionAsked ??= this.mgmt!.brokerVersion().catch(() => {
      this.versionAsked = null; // ask again next time
      return null;
    });
    return this.versionAsked;
  }

  /** Queues, discovered DLQs and a warning when the management API cannot help. Reused for a few seconds. */
  private async snapshot(fresh = false): Promise<Snapshot> {
    const c = this.snapshotCache;
    if (!fresh && c && Date.now() - c.at < this.opts.snapshotTtlMs) return c;
    let snap: Snapshot;
    if (!this.mgmt) {
      snap = {
        at: Date.now(),
        queues: null,
        discovered: new Map(),
        safeCopies: new Map(),
        version: null,
        warning: this.config.discover
          ? {
              code: "management_unconfigured",
              label: "discovery off",
              message: "No management API is configured for this connection: only DLQs named in the config are shown.",
            }
          : null,
      };
    } else {
      try {
        const [queues, bindings, exchanges, version] = await Promise.all([
          this.mgmt.listQueues(this.vhost),
          this.config.discover ? this.mgmt.listBindings(this.vhost) : Promise.resolve([]),
          this.config.discover ? this.mgmt.listExchanges(this.vhost) : Promise.resolve([]),
          this.brokerVersion(),
        ]);
        snap = {
          at: Date.now(),
          queues: new Map(queues.map((q) => [q.name, q])),
          discovered: this.config.discover ? discoverDlqs(queues, bindings, exchanges) : new Map(),
          safeCopies: safeCopiesOf(queues),
          version,
          warning: null,
        };
      } catch (e) {
        const why = e instanceof ManagementError ? e.message : String(e);
        snap = {
          at: Date.now(),
          queues: null,
          discovered: new Map(),
          safeCopies: new Map(),
          version: null,
          warning: {
            code: "management_unavailable",
            label: "no management API",
            message: `The RabbitMQ management API is not available (${why}): only DLQs named in the config are shown, without discovery.`,
          },
        };
      }
    }
    this.snapshotCache = snap;
    return snap;
  }

  /** Queue type and delivery limit: management API, else config, else a probe that delivers nothing from a quorum queue. */
  private async queueKind(name: string, q: MgmtQueue | undefined): Promise<{ kind: QueueKind; source: string }> {
    if (q) return { kind: queueKindOf(q, this.snapshotCache?.version ?? null), source: "management" };
    const entry = this.configEntry(name);
    if (entry?.queueType)
      return {
        kind: { queueType: entry.queueType, deliveryLimit: entry.deliveryLimit ?? null, ownDeadLetterExchange: null },
        source: "config",
      };
    const cached = this.probed.get(name);
    // A read of this console holds the queue (its own look came first, so a probe is cached): the
    // probe would wait on it, or take a letter from under it. The last answer stands meanwhile.
    if (cached && (Date.now() - cached.at < 300_000 || this.readLocks.holds(name)))
      return { kind: cached.kind, source: "probe" };
    // The probe's consumer may take one letter for a moment: under the read lock, as any read.
    const lease = await this.readLocks.acquire(name);
    try {
      const kind = await this.probeQueueType(name);
      this.probed.set(name, { at: Date.now(), kind });
      return { kind, source: "probe" };
    } finally {
      await lease.release();
    }
  }

  /**
   * RabbitMQ refuses a consumer on a channel with a global prefetch for quorum and stream queues,
   * before delivering anything (it closes the connection with 540, so the probe uses its own).
   * A classic queue accepts it; the one letter it may deliver is returned when the probe closes.
   */
  private async probeQueueType(name: string): Promise<QueueKind> {
    const u = new URL(this.config.url);
    u.username = encodeURIComponent(secretFromEnv(this.config.usernameEnv, "guest")!);
    u.password = encodeURIComponent(secretFromEnv(this.config.passwordEnv, "guest")!);
    let conn: amqp.ChannelModel | null = null;
    let closedWith = "";
    try {
      conn = await amqp.connect(u.toString(), { timeout: this.opts.connectTimeoutMs });
      conn.on("error", (e: Error) => {
        closedWith = e.message;
      });
      const ch = await conn.createChannel();
      ch.on("error", () => undefined);
      await ch.prefetch(1, true);
      const ok = await ch.consume(name, () => undefined, { noAck: false });
      await ch.cancel(ok.consumerTag);
      await ch.close();
      return { queueType: "classic", deliveryLimit: null, ownDeadLetterExchange: null };
    } catch (e) {
      const msg = `${(e as Error).message ?? ""} ${closedWith}`;
      if (/global qos|NOT.IMPLEMENTED/i.test(msg))
        return { queueType: "unknown-not-classic", deliveryLimit: null, ownDeadLetterExchange: null };
      throw mapAmqpError(e, { endpoint: this.amqp.endpoint, queue: name });
    } finally {
      await conn?.close().catch(() => undefined);
    }
  }

  private async summarize(name: string, snap: Snapshot, channelFor: () => Promise<Channel>): Promise<DlqSummary> {
    const entry = this.configEntry(name);
    const origins = new Set<string>(snap.discovered.get(name) ?? []);
    if (entry?.origin) origins.add(entry.origin);
    const warnings: DlqWarning[] = snap.warning ? [snap.warning] : [];
    const facts: HeaderEntry[] = [];
    const safeOf = this.safeCopyOf(name, snap);
    if (safeOf !== null) {
      for (const o of snap.discovered.get(safeOf) ?? []) origins.add(o);
      const o = this.configEntry(safeOf)?.origin;
      if (o) origins.add(o);
      facts.push({
        name: "safe copy",
        value: { t: "string", v: `safe copy of "${safeOf}", made by the console's move to safety` },
      });
    }
    let depth: number | null = null;
    let inFlight: number | null = null;
    let consumers: number | null = null;
    const q = snap.queues?.get(name);
    if (snap.queues && !q) throw this.notFound(name);
    if (q) {
      inFlight = q.messages_unacknowledged ?? null;
      if (q.arguments && Object.keys(q.arguments).length)
        facts.push({ name: "arguments", value: toDisplayValue(q.arguments) });
      if (q.policy) facts.push({ name: "policy", value: { t: "string", v: q.policy } });
    }
    // First: without the management API its probe may wait for a read (the read lock), after which
    // the depth below is the one that read left.
    const { kind, source: kindSource } = await this.queueKind(name, q);
    // Depth and consumers from AMQP: exact now, where management statistics lag by seconds.
    const ch = await channelFor();
    try {
      const ok = await ch.checkQueue(name);
      depth = ok.messageCount;
      consumers = ok.consumerCount;
    } catch (e) {
      throw mapAmqpError(e, { endpoint: this.amqp.endpoint, queue: name });
    }
    facts.push({ name: "queue type source", value: { t: "string", v: kindSource } });
    if (kind.deliveryLimit !== null)
      facts.push({ name: "delivery limit", value: { t: "number", v: String(kind.deliveryLimit) } });
    // A console read (this one's or another replica's) is a consumer too, and holds the letters it
    // read: the depth leaves them out until it ends. Say so, and do not call it a stranger.
    if (consumers && (await this.consoleReading(name))) {
      consumers--;
      warnings.push({
        code: "console_reading",
        label: "being read",
        message:
          "The console is reading this DLQ right now (a page, a scan or a move): the depth leaves out the letters that read holds until it ends.",
      });
    }
    if (consumers)
      warnings.push({
        code: "consumers_attached",
        label: "consumers attached",
        message: `${consumers} consumer(s) are attached to this DLQ: they may take letters while you look, and the console cannot read it while they hold it exclusively.`,
      });
    if (this.readLocks.unshared)
      warnings.push({
        code: "read_lock_refused",
        label: "reads not kept apart",
        message: `RabbitMQ refuses the console's user the right to declare its read lock queue (${readLockName(name)}): two console replicas reading this DLQ at once may each see it short. Grant that user configure permission on "^${READ_LOCK_PREFIX.replaceAll(".", "\\.")}".`,
      });
    if (kind.queueType === "quorum" && kind.deliveryLimit === null) {
      warnings.push({
        code: "quorum_delivery_count",
        label: "reads count deliveries",
        message:
          "Quorum queue: every read raises the letters' x-delivery-count (no delivery limit is set, so nothing is dropped).",
      });
    }
    const fromConfig = entry !== undefined;
    const fromDiscovery = snap.discovered.has(name);
    return {
      connectionId: this.connectionId,
      name,
      kind: "rabbitmq",
      queueType: kind.queueType === "unknown-not-classic" ? "unknown" : kind.queueType,
      depth,
      inFlight,
      consumers,
      origins: [...origins].sort(),
      source: fromConfig && fromDiscovery ? "config+discovered" : fromConfig ? "config" : "discovered",
      readRisk: readRiskOf(kind, name),
      warnings,
      facts,
    };
  }

  private notFound(name: string) {
    return new BrokerError("not_found", {
      userMessage: `DLQ "${name}" was not found on ${this.displayName}. It may have been deleted, or it is not a DLQ the console knows about.`,
    });
  }

  /**
   * The DLQs listDlqs lists: configured, discovered, and safe copies. Without the management API
   * (`queues` null), safe copies are candidates that a passive check must find.
   */
  private dlqNames(snap: Pick<Snapshot, "queues" | "discovered" | "safeCopies">): {
    names: string[];
    safeCopies: Set<string>;
  } {
    const names = new Set<string>([...this.config.dlqs.map((d) => d.name), ...snap.discovered.keys()]);
    // Safe copies are listed where they exist; without the management API, where a passive check finds them.
    const safeCopies = new Set<string>([...snap.safeCopies.keys(), ...this.madeSafe.keys()]);
    for (const dlq of names) safeCopies.add(`${dlq}${this.safeSuffix}`);
    for (const name of safeCopies) {
      if (names.has(name) || (snap.queues && !snap.queues.has(name))) safeCopies.delete(name);
      else names.add(name);
    }
    return { names: [...names].sort(), safeCopies };
  }

  async listDlqs(): Promise<DlqSummary[]> {
    await this.ping();
    const snap = await this.snapshot(true);
    const { names, safeCopies } = this.dlqNames(snap);
    const found = new Map<string, DlqSummary>();
    // A checkQueue is one round trip and a channel carries one at a time: a few channels side by
    // side list a thousand DLQs in a quarter of the time. A queue that is gone closes its channel
    // (404), so each lane opens a new one after an error.
    const queue = [...names];
    const lane = async () => {
      let ch: Channel | null = null;
      const channelFor = async () => (ch ??= await this.amqp.channel());
      try {
        for (let name = queue.shift(); name !== undefined; name = queue.shift()) {
          try {
            found.set(name, await this.summarize(name, snap, channelFor));
          } catch (e) {
            await closeQuietly(ch);
            ch = null;
            if (!(e instanceof BrokerError && e.kind === "not_found")) {
              queue.length = 0; // the other lanes stop at their next name
              throw e;
            }
            if (!safeCopies.has(name)) found.set(name, this.missingFromBroker(name));
          }
        }
      } finally {
        await closeQuietly(ch);
      }
    };
    const lanes = Math.min(LIST_LANES, Math.max(1, names.length));
    const results = await Promise.allSettled(Array.from({ length: lanes }, lane));
    const failed = results.find((r): r is PromiseRejectedResult => r.status === "rejected");
    if (failed) throw failed.reason;
    return names.flatMap((n) => found.get(n) ?? []);
  }

  /** A DLQ named in the config that the broker does not have: listed, with a warning saying so. */
  private missingFromBroker(name: string): DlqSummary {
    const origin = this.configEntry(name)?.origin;
    return {
      connectionId: this.connectionId,
      name,
      kind: "rabbitmq",
      queueType: "unknown",
      depth: null,
      inFlight: null,
      consumers: null,
      origins: origin ? [origin] : [],
      source: "config",
      readRisk: null,
      warnings: [
        {
          code: "missing",
          label: "does not exist",
          message: `Queue "${name}" is named in the config but does not exist on the broker.`,
        },
      ],
      facts: [],
    };
  }

  /** A snapshot in which `name` is a DLQ the console knows (refreshed once if not); else not_found. */
  private async snapshotKnowing(name: string): Promise<Snapshot> {
    let snap = await this.snapshot();
    const known = (s: Snapshot) =>
      this.configEntry(name) !== undefined || s.discovered.has(name) || this.safeCopyOf(name, s) !== null;
    if (!known(snap) || (snap.queues && !snap.queues.has(name))) snap = await this.snapshot(true);
    if (!known(snap)) {
      await this.ping();
      // Discovered DLQs are known through the management API only: while it does not answer (a
      // timeout under load, a restart), such a DLQ is not "not found", and a redrive or discard
      // must pause and retry rather than fail.
      if (snap.warning?.code === "management_unavailable") {
        throw new BrokerError("unreachable", {
          userMessage: `Could not confirm that "${name}" is a DLQ on ${this.displayName}: ${snap.warning.message} Try again in a moment.`,
        });
      }
      throw this.notFound(name);
    }
    return snap;
  }

  /**
   * Does a console read of `name` run now? Here: the read lock's map. Elsewhere: its lock queue
   * exists, and RabbitMQ answers a passive declare of another connection's exclusive queue with 405.
   */
  private async consoleReading(name: string): Promise<boolean> {
    if (this.readLocks.holds(name)) return true;
    // Its lock kept after a read (its grace): no read runs.
    if (this.readLocks.keeps(name)) return false;
    const ch = await this.amqp.channel();
    try {
      // Declared on this connection yet neither held nor kept here: a lock no read holds.
      await ch.checkQueue(readLockName(name));
      return false;
    } catch (e) {
      return isResourceLocked(e);
    } finally {
      await closeQuietly(ch);
    }
  }

  /** `describeDlq(name).readRisk` without its AMQP round trips while the snapshot is fresh (see MoverContext.readRisk). */
  private async readRiskOf(name: string): Promise<ReadRisk | null> {
    const snap = await this.snapshotKnowing(name);
    if (snap.queues && !snap.queues.has(name)) throw this.notFound(name);
    return readRiskOf((await this.queueKind(name, snap.queues?.get(name))).kind, name);
  }

  async describeDlq(name: string): Promise<DlqSummary> {
    const snap = await this.snapshotKnowing(name);
    let ch: Channel | null = null;
    try {
      return await this.summarize(name, snap, async () => (ch ??= await this.amqp.channel()));
    } finally {
      await closeQuietly(ch);
    }
  }

  /**
   * Opens a read: risk guard, the read lock (read-lock.ts), passive check, first exclusive consumer
   * (retried while a consumer that is not the console's holds the queue). The caller closes the
   * channel, then releases the lease.
   */
  private async openRead(
    name: string,
    opts: StreamOptions,
    maxFromDepth: (depth: number) => number,
    answerMs: number = ANSWER_MS,
  ) {
    const summary = await this.describeDlq(name);
    if (summary.readRisk && !opts.acceptRisk) {
      throw new BrokerError("risky_read", {
        userMessage: summary.readRisk.message,
        details: { readRisk: summary.readRisk },
      });
    }
    // The depth is asked under the lock: no other console read holds letters it would not count.
    const lease = await this.readLocks.acquire(name, 0, opts.turn);
    const started = Date.now();
    for (let attempt = 0; ; attempt++) {
      let ch: Channel | null = null;
      try {
        ch = await this.amqp.channel();
        const read = ch;
        const ok = await read.checkQueue(name);
        const reader = new QueueReader(read, name, {
          max: maxFromDepth(ok.messageCount),
          idleMs: this.opts.idleMs,
          readyCount: async () => (await read.checkQueue(name)).messageCount,
          slowMs: this.opts.slowReadMs,
          answerMs,
          bufferBytes: this.opts.readBufferBytes,
          minWindow: 4,
          maxWindow: 5000,
          exclusive: true,
        });
        await reader.start();
        return { ch: read, reader, depth: ok.messageCount, summary, lease };
      } catch (e) {
        await closeQuietly(ch);
        const mapped = mapAmqpError(e, { endpoint: this.amqp.endpoint, queue: name });
        if (mapped.kind === "throttled" && Date.now() - started < this.opts.busyWaitMs) {
          await sleep(Math.min(1000, 50 * 2 ** attempt));
          continue;
        }
        await lease.release();
        throw mapped;
      }
    }
  }

  async browse(name: string, opts: BrowseOptions): Promise<LetterPage> {
    const offset = Math.max(0, Math.floor(opts.offset));
    const limit = Math.max(1, Math.min(1000, Math.floor(opts.limit)));
    const { ch, reader, depth, lease } = await this.openRead(name, opts, (d) => Math.min(d, offset + limit + 1));
    const configOrigin = this.configOriginOf(name);
    const letters: Letter[] = [];
    let hasMore = false;
    try {
      const occ = new OccurrenceCounter();
      for (let pos = 0; ; pos++) {
        const m = await reader.next(opts.signal);
        if (!m) break;
        const ident = letterIdOf(m, occ);
        if (pos >= offset + limit) {
          hasMore = true;
          break;
        }
        if (pos >= offset) letters.push(toLetter(m, ident, pos, { maxBodyBytes: opts.maxBodyBytes, configOrigin }));
      }
    } catch (e) {
      throw mapAmqpError(e, { endpoint: this.amqp.endpoint, queue: name });
    } finally {
      await closeQuietly(ch);
      await lease.release();
    }
    return { letters, offset, limit, hasMore, depth };
  }

  async *stream(name: string, opts: StreamOptions = {}): AsyncIterable<Letter> {
    const { ch, reader, depth, lease } = await this.openRead(name, opts, (d) => d, this.opts.streamAnswerMs);
    const configOrigin = this.configOriginOf(name);
    try {
      const occ = new OccurrenceCounter();
      for (let pos = 0; ; pos++) {
        let m: Awaited<ReturnType<typeof reader.next>>;
        try {
          m = await reader.next(opts.signal);
        } catch (e) {
          throw mapAmqpError(e, { endpoint: this.amqp.endpoint, queue: name });
        }
        if (!m) {
          if (reader.stoppedIdle && !opts.signal?.aborted && opts.onShortfall) {
            // Nothing came for idleMs before the count taken at the start was read, and the broker,
            // asked then, held none ready (or did not answer, or held some and sent none for
            // slowReadMs). RabbitMQ counts letters it has sent to a channel as delivered before
            // they arrive, so only that order of answers tells a slow read from a short one.
            const unread = Math.max(0, depth - reader.count);
            opts.onShortfall({ reason: shortReadReason(reader, depth, this.opts.idleMs), unread });
          }
          return;
        }
        yield toLetter(m, letterIdOf(m, occ), pos, { maxBodyBytes: opts.maxBodyBytes, configOrigin });
      }
    } finally {
      await closeQuietly(ch);
      await lease.release();
    }
  }

  async getLetter(name: string, id: string, opts: StreamOptions = {}): Promise<Letter | null> {
    if (!isLetterId(id)) {
      await this.describeDlq(name);
      return null;
    }
    const { ch, reader, lease } = await this.openRead(name, opts, (d) => d);
    const configOrigin = this.configOriginOf(name);
    try {
      const occ = new OccurrenceCounter();
      // No letter with exactly this id, but a twin (same content, another occurrence number: `k-X`
      // once `k-X~2`'s twin left): that twin is the letter, so its URL keeps working.
      let twin: Letter | null = null;
      for (let pos = 0; ; pos++) {
        const m = await reader.next(opts.signal);
        if (!m) return opts.signal?.aborted ? null : twin;
        const ident = letterIdOf(m, occ);
        if (ident.id === id) return toLetter(m, ident, pos, { maxBodyBytes: opts.maxBodyBytes, configOrigin });
        if (!twin && twinOf(ident.id) === twinOf(id))
          twin = toLetter(m, ident, pos, { maxBodyBytes: opts.maxBodyBytes, configOrigin });
      }
    } catch (e) {
      throw mapAmqpError(e, { endpoint: this.amqp.endpoint, queue: name });
    } finally {
      await closeQuietly(ch);
      await lease.release();
    }
  }

  /** See `BrokerAdapter.moveLetters`; the logic and its crash window are in mover.ts. */
  moveLetters(dlq: string, requests: MoveRequest[], opts: MoveOptions = {}): AsyncIterable<MoveResult> {
    return moveLetters(this.moverContext(dlq), dlq, requests, opts);
  }

  private moverContext(dlq: string): MoverContext {
    return {
      endpoint: this.amqp.endpoint,
      username: secretFromEnv(this.config.usernameEnv, "guest")!,
      configOrigin: this.configOriginOf(dlq),
      describe: (name) => this.describeDlq(name),
      readRisk: (name) => this.readRiskOf(name),
      confirmChannel: async () => {
        const model = await this.amqp.get();
        try {
          const ch = await model.createConfirmChannel();
          ch.on("error", () => undefined);
          return ch;
        } catch (e) {
          throw mapAmqpError(e, { endpoint: this.amqp.endpoint, queue: dlq });
        }
      },
      channel: () => this.amqp.channel(),
      readLock: (queue) => this.readLocks.acquire(queue, this.opts.moverLockGraceMs),
      idleMs: this.opts.idleMs,
      bufferBytes: this.opts.readBufferBytes,
      busyWaitMs: this.opts.busyWaitMs,
      maxInFlight: this.opts.moveInFlight,
      isManagedHeader: this.isManagedHeader,
    };
  }

  /** See `BrokerAdapter.removeLetters`: the same walk as moveLetters (mover.ts, walk.ts), delivering to `beforeRemove`. */
  removeLetters(dlq: string, requests: RemoveRequest[], opts: RemoveOptions): AsyncIterable<RemoveResult> {
    return removeLetters(this.moverContext(dlq), dlq, requests, opts);
  }

  /** See `BrokerAdapter.republish` and republish.ts. */
  republish(dlq: string, requests: RepublishRequest[], opts: RepublishOptions = {}): AsyncIterable<RepublishResult> {
    return republishRabbit(this.moverContext(dlq), dlq, requests, opts);
  }

  /** See `RepairOps`: moveLetters applies `MoveRequest.repair` (repair.ts). */
  readonly repair: RepairOps = {
    // A repaired copy's message_id is its copyId, and dead-lettering keeps it.
    copyLetterId: (copyId) => (copyId === "" ? null : baseLetterId(copyId, () => "")),
    refusal: (repair) => repairRefusal(repair, REPAIR_RULES, this.isManagedHeader),
  };

  /** See `SafeMoveOps` and safe-move.ts: the target is the DLQ's name + `safeQueueSuffix`. */
  readonly safeMove: SafeMoveOps = {
    plan: (dlq) => planSafeMove(this.safeMoveContext(dlq), dlq, `${dlq}${this.safeSuffix}`),
    move: (dlq, target, opts = {}) => moveToSafety(this.safeMoveContext(dlq), dlq, target, opts),
  };

  private safeMoveContext(dlq: string): SafeMoveContext {
    return {
      ...this.moverContext(dlq),
      vhost: this.vhost,
      management: this.mgmt !== null,
      discovery: this.mgmt !== null && this.config.discover,
      targetProblem: (target) => this.safeTargetProblem(target),
      declared: (target, of) => {
        this.madeSafe.set(target, of);
        this.snapshotCache = null;
      },
    };
  }

  /**
   * A policy (or operator policy) that would expire, drop or delete letters in the safe queue, or
   * null. Its declared arguments are checked by the declare itself; without a management API that
   * answers, policies cannot be seen, and the move goes ahead on the arguments alone.
   */
  private async safeTargetProblem(target: string): Promise<string | null> {
    if (!this.mgmt) return null;
    let q: MgmtQueue;
    try {
      q = await this.mgmt.getQueue(this.vhost, target);
    } catch {
      return null;
    }
    if (q.type && q.type !== "classic")
      return `The queue "${target}" is a ${q.type} queue, not a classic one: reading it could cost letters too.`;
    const policy =
      q.effective_policy_definition && !Array.isArray(q.effective_policy_definition)
        ? q.effective_policy_definition
        : {};
    const unsafe = ["message-ttl", "expires", "max-length", "max-length-bytes"].filter((k) => k in policy);
    if (unsafe.length)
      return `A policy on the queue "${target}" sets ${unsafe.join(", ")}: RabbitMQ would expire, drop or delete letters moved there.`;
    return null;
  }

  private watchOps: SampleWatchOps | null = null;
  /** See `BrokerAdapter.sampleWatch` and sample-watch.ts: consumers and counters of a target queue, no message read. */
  get sampleWatch(): SampleWatchOps {
    this.watchOps ??= rabbitSampleWatch({
      endpoint: this.amqp.endpoint,
      vhost: this.vhost,
      channel: () => this.amqp.channel(),
      mgmt: this.mgmt,
    });
    return this.watchOps;
  }

  /** See `BrokerAdapter.inspect` and inspect.ts: the same DLQs as listDlqs, from a constant number of management requests. */
  inspect(opts: InspectOptions): Promise<BrokerInspection> {
    return inspectRabbit(
      {
        vhost: this.vhost,
        endpoint: this.amqp.endpoint,
        displayName: this.displayName,
        mgmt: this.mgmt,
        discover: this.config.discover,
        configured: this.config.dlqs,
        dlqNames: (snap) => this.dlqNames(snap),
        channel: () => this.amqp.channel(),
      },
      opts,
    );
  }

  async ping(): Promise<void> {
    const ch = await this.amqp.channel();
    await closeQuietly(ch);
  }

  async close(): Promise<void> {
    await this.readLocks.close();
    await this.amqp.close();
  }
}

/** Why a RabbitMQ read ended before the letters counted at its start, in the operator's words. */
function shortReadReason(reader: QueueReader, depth: number, idleMs: number): string {
  const stop = reader.stopReason;
  const head = `RabbitMQ delivered nothing for ${idleMs.toLocaleString("en-US")} ms after ${reader.count.toLocaleString("en-US")} of the ${depth.toLocaleString("en-US")} letters counted at the start`;
  switch (stop?.kind) {
    case "empty":
      return `${head}, and held none ready: the others expired or were taken meanwhile.`;
    case "slow":
      return `${head}; it still held ${stop.ready.toLocaleString("en-US")} ready but sent none for ${Math.round(stop.waitedMs / 1000).toLocaleString("en-US")} s, so the read stopped: the broker was too slow to deliver them.`;
    case "unanswered":
      return `${head}, and did not say within ${(reader.answerWaitMs / 1000).toLocaleString("en-US")} s how many it still held: the others may have expired or been taken meanwhile, or the broker or the network stopped.`;
    default:
      return `${head}; the others may have expired or been taken meanwhile, or the broker was too slow to deliver them.`;
  }
}
