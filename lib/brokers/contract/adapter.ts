/**
 * The broker boundary. Everything above `lib/brokers` talks to this interface and the types of
 * lib/brokers/contract only; nothing outside this folder branches on broker kind. Adapters convert
 * their client's types to these at the edge.
 */
import type {
  BrokerCapabilities,
  BrokerKind,
  BrokerVocabulary,
  ConnectionCapabilities,
} from "@/lib/brokers/contract/capabilities";
import type { ConsumerGroupOps } from "@/lib/brokers/contract/consumer-groups";
import type { BrowseOptions, DlqSummary, LetterPage, StreamOptions } from "@/lib/brokers/contract/dlq";
import type { BrokerInspection, InspectOptions } from "@/lib/brokers/contract/inspection";
import type { Letter } from "@/lib/brokers/contract/letter";
import type { ManagedHeaders } from "@/lib/brokers/contract/markers";
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
import type { SampleWatchOps } from "@/lib/brokers/target-readers";
import type { TailOps } from "@/lib/brokers/tail";

export interface BrokerAdapter {
  readonly kind: BrokerKind;
  readonly connectionId: string;
  readonly displayName: string;
  readonly capabilities: BrokerCapabilities;
  readonly vocabulary: BrokerVocabulary;
  /**
   * The header names this broker writes and keeps (its folder's managed-headers.ts). A repair on any
   * broker refuses them: the registry unions every adapter's declaration and the console's and hands
   * the union to each adapter it builds (`AdapterSetup`).
   */
  readonly managedHeaders: ManagedHeaders;

  /** Configured plus discovered DLQs. A broker that is down throws `unavailable:broker`. */
  listDlqs(): Promise<DlqSummary[]>;
  /** One DLQ; throws `not_found:queue` when it does not exist. */
  describeDlq(name: string): Promise<DlqSummary>;
  /** One page of letters, without removing any from the DLQ. */
  browse(name: string, opts: BrowseOptions): Promise<LetterPage>;
  /** Every letter from the head, one at a time, in bounded memory; returns all letters to the DLQ when the iteration ends or is broken off. */
  stream(name: string, opts?: StreamOptions): AsyncIterable<Letter>;
  /** The letter with this id, or null when it is no longer in the DLQ. */
  getLetter(name: string, id: string, opts?: StreamOptions): Promise<Letter | null>;
  /**
   * Moves these letters out of the DLQ, each in turn: verify its checksum, publish it to its target
   * and wait for the broker's confirmation (RabbitMQ publisher confirm with mandatory + persistent,
   * a basic.return or nack being a failure; SQS SendMessage success; Kafka acks=all), and only then
   * remove it from the DLQ (ack; DeleteMessage; on Kafka, record its offset as handled). A failure
   * leaves the letter where it was; a crash between publish and removal may duplicate, never lose.
   * Letters not requested are untouched and keep their order. Letters sharing an ordering key are
   * moved in DLQ order, one at a time. Results are yielded as letters settle; `signal` stops the
   * move between letters. A DLQ or target that does not exist throws a typed BrokerError before
   * anything moves when that can be known up front, else yields "failed" per letter.
   */
  moveLetters(dlq: string, requests: MoveRequest[], opts?: MoveOptions): AsyncIterable<MoveResult>;
  /**
   * Discard (conservation first, DESIGN.md): removes these letters from the DLQ, each in turn: read
   * it, verify its checksum ("checksum_mismatch": nothing happens to it), hand its complete copy to
   * `opts.beforeRemove`, and only after that resolved remove it (RabbitMQ ack; SQS DeleteMessage;
   * Kafka: its offset recorded as handled with outcome "discarded" under `opts.operationId`). If
   * `beforeRemove` throws, the letter stays and the result is "failed". Letters not found are
   * "missing". Letters not requested are untouched and keep their order. A crash after
   * `beforeRemove` and before the removal leaves the letter in the DLQ AND in the archive (never
   * lost). A DLQ that does not exist throws `not_found` before anything is read.
   */
  removeLetters(dlq: string, requests: RemoveRequest[], opts: RemoveOptions): AsyncIterable<RemoveResult>;
  /**
   * Undo of a discard: puts each archived letter back into `dlq`, body bytes, message id,
   * correlation id and headers/attributes as they were, and yields "published" only once the broker
   * confirmed it (RabbitMQ confirm channel, mandatory + persistent; SQS SendMessage success; Kafka
   * idempotent producer, acks=all). What cannot be kept is listed per adapter in
   * `capabilities.republishLimits`. Kafka: a record still in the log is restored by clearing its handled
   * mark (same offset, same letter); one deleted by retention is produced again. A DLQ that does not
   * exist throws `not_found` before anything is published; an envelope of another broker kind or a
   * body that does not match it is "failed".
   */
  republish(dlq: string, requests: RepublishRequest[], opts?: RepublishOptions): AsyncIterable<RepublishResult>;
  /** Repair and resubmit, where the broker has it (see `RepairOps`). */
  readonly repair?: RepairOps;
  /** Move to safety, where the broker has it (see `SafeMoveOps`). */
  readonly safeMove?: SafeMoveOps;
  /** Consumer groups and their committed offsets (Kafka; lib/brokers/contract/consumer-groups.ts). Absent on other brokers. */
  readonly consumerGroups?: ConsumerGroupOps;
  /** Who reads a redrive target and whether a sample's copies were taken (lib/brokers/target-readers.ts). */
  readonly sampleWatch?: SampleWatchOps;
  /** Reads only the letters after remembered positions, at no cost to them (lib/brokers/tail.ts). Absent where reads start at the head. */
  readonly tail?: TailOps;
  /** The sampler's look at every DLQ and the configuration checks (see `BrokerInspection`). */
  inspect(opts: InspectOptions): Promise<BrokerInspection>;
  /** Cheap reachability check. */
  ping(): Promise<void>;
  close(): Promise<void>;
}

/** What every adapter is handed when it is built, whatever its broker. */
export interface AdapterSetup {
  /**
   * Every declaration of header names no repair may set or remove: each adapter's own and the
   * console's (the registry's union, lib/connections/managed-headers.ts). The adapter's repairs
   * refuse all of them, not only its own broker's: a letter bridged from another broker keeps the
   * history that broker wrote.
   */
  allManagedHeaders: readonly ManagedHeaders[];
}

/** The UI's flags of a connection: its capabilities, and each optional feature there exactly when its object is. */
export function capabilitiesOf(
  a: Pick<BrokerAdapter, "capabilities" | "safeMove" | "repair" | "consumerGroups">,
): ConnectionCapabilities {
  return {
    ...a.capabilities,
    safeMove: a.safeMove !== undefined,
    repair: a.repair !== undefined,
    consumerGroups: a.consumerGroups !== undefined,
  };
}
