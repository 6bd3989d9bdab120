import "server-only";
import { authorize } from "@/lib/auth/authorize";
import { can } from "@/lib/auth/permissions";
import type { Actor, RequestMeta } from "@/lib/auth/session";
import type { RecordAt } from "@/lib/brokers/contract/consumer-groups";
import type { BrokerAdapter } from "@/lib/brokers/contract/adapter";
import { consumerGroupsConfigOf, loadConfig, type ConsumerGroupsConfig } from "@/lib/config";
import { listAdapters } from "@/lib/connections/registry";
import { letterDetailOf, VIEW_MAX_BODY_BYTES, type LetterDetail } from "@/lib/dlq/view-letter";
import { AppError } from "@/lib/errors";
import { maskingPolicy } from "@/lib/masking/policy";
import { audited } from "@/lib/use-case/audited";
import { adapterFor, withTimeout } from "@/lib/use-case/connection";
import { withLiveOffsets, type LiveOffsets } from "./stuck";
import { groupDetail, listGroupRows, partitionRow, roundOf, type GroupRow, type PartitionRow } from "./store";

/**
 * Reading consumer groups: what the operations sampler recorded (lib/consumer-groups/
 * sampler.ts) per Kafka connection, group and partition, with the partitions stuck behind a record,
 * and the record a stuck partition waits on, read live from the broker under the letter page's
 * masking. Every role with groups:read sees offsets and lag; a record's payload follows the same
 * rules as a letter's (letter:view-payload, masking for the record's topic).
 */

const READ_TIMEOUT_MS = 30_000;

export interface GroupsConnection {
  connectionId: string;
  name: string;
  stuckAfterMs: number;
  /** The last sampling round: when, and the broker's error if it did not answer. Null: never sampled yet. */
  round: { sampledAt: Date; error: string | null; groups: number } | null;
  groups: GroupRow[];
}

function groupsConfig(connectionId: string): ConsumerGroupsConfig | null {
  const groups = consumerGroupsConfigOf(loadConfig().connections.find((x) => x.id === connectionId));
  return groups?.sample ? groups : null;
}

/** The connections whose consumer groups the console samples. */
function sampledAdapters(): BrokerAdapter[] {
  return listAdapters().filter((a) => a.consumerGroups && groupsConfig(a.connectionId));
}

function requireSampled(connectionId: string): { adapter: BrokerAdapter; stuckAfterMs: number } {
  const cfg = groupsConfig(connectionId);
  const adapter = cfg ? adapterFor(connectionId) : null;
  if (!cfg || !adapter?.consumerGroups) {
    throw new AppError("not_found:connection", {
      userMessage:
        "This connection has no consumer groups the console samples (only Kafka connections do, unless their consumerGroups.sample is off).",
    });
  }
  return { adapter, stuckAfterMs: cfg.stuckAfterSeconds * 1000 };
}

export async function listConsumerGroups(
  actor: Actor,
  meta: RequestMeta,
  input: { now?: Date } = {},
): Promise<GroupsConnection[]> {
  await authorize(actor, "groups:read", { action: "groups.list", meta });
  const now = input.now ?? new Date();
  return Promise.all(
    sampledAdapters().map(async (a) => {
      const stuckAfterMs = groupsConfig(a.connectionId)!.stuckAfterSeconds * 1000;
      const [round, groups] = await Promise.all([
        roundOf(a.connectionId),
        listGroupRows(a.connectionId, { now, stuckAfterMs }),
      ]);
      return {
        connectionId: a.connectionId,
        name: a.displayName,
        stuckAfterMs,
        round: round ? { sampledAt: round.sampledAt, error: round.error, groups: round.groups } : null,
        groups,
      };
    }),
  );
}

export interface GroupView {
  connectionId: string;
  connectionName: string;
  stuckAfterMs: number;
  round: { sampledAt: Date; error: string | null } | null;
  group: GroupRow;
  partitions: PartitionRow[];
}

export async function viewConsumerGroup(
  actor: Actor,
  meta: RequestMeta,
  input: { connectionId: string; groupId: string; now?: Date },
): Promise<GroupView> {
  const { connectionId, groupId } = input;
  await authorize(actor, "groups:read", { action: "groups.view", connectionId, target: groupId, meta });
  const { adapter, stuckAfterMs } = requireSampled(connectionId);
  const [round, detail] = await Promise.all([
    roundOf(connectionId),
    groupDetail(connectionId, groupId, { now: input.now ?? new Date(), stuckAfterMs }),
  ]);
  if (!detail)
    throw new AppError("not_found:group", {
      userMessage: `The console has not seen a consumer group "${groupId}" on this connection (it is sampled every round; a group with no members and no committed offsets is not listed).`,
    });
  return {
    connectionId,
    connectionName: adapter.displayName,
    stuckAfterMs,
    round: round ? { sampledAt: round.sampledAt, error: round.error } : null,
    ...detail,
  };
}

export type PartitionRecord =
  | { kind: "record"; offset: string; letter: LetterDetail }
  | { kind: "gone"; start: string; end: string }
  | { kind: "none"; start: string; end: string };

export interface PartitionView extends GroupView {
  /** Offsets and lag as the broker holds them now when `live`; otherwise as the last round sampled them. */
  partition: PartitionRow;
  /** When the broker was read for this view; null when it did not answer (then `partition` is the sample). */
  liveAt: Date | null;
  /** The record the group's consumer gets next (at its committed offset), read now. */
  record: PartitionRecord;
}

/**
 * One partition of a group and the record at its committed offset (the one a stuck consumer keeps
 * failing on), read from the broker without joining the group. Audited like a letter view.
 */
export async function viewGroupPartition(
  actor: Actor,
  meta: RequestMeta,
  input: { connectionId: string; groupId: string; topic: string; partition: number; now?: Date },
): Promise<PartitionView> {
  const { connectionId, groupId, topic, partition } = input;
  const scope = { action: "groups.record_view", connectionId, queue: topic, target: `${groupId}/${partition}` };
  await authorize(actor, "groups:read", { ...scope, meta });
  await authorize(actor, "letter:read", { ...scope, meta });
  const policy = await maskingPolicy(actor.role, connectionId, topic);
  const showPayload = can(actor.role, "letter:view-payload") && policy.payload !== "none";
  return audited<PartitionView>(
    actor,
    meta,
    scope,
    async () => {
      const group = await viewConsumerGroup(actor, meta, input);
      const { adapter, stuckAfterMs } = requireSampled(connectionId);
      const now = input.now ?? new Date();
      const stored = await partitionRow(connectionId, groupId, topic, partition, { now, stuckAfterMs });
      if (!stored)
        throw new AppError("not_found:partition", {
          userMessage: `Group "${groupId}" has no committed offset or assignment on ${topic} partition ${partition}.`,
        });
      // The sample can be minutes old, and an action (a skip) may have moved the offset since: look now.
      const live = await liveOffsets(adapter, groupId, topic, partition);
      const row = live ? withLiveOffsets(stored, live.offsets, live.at, stuckAfterMs) : stored;
      const at: RecordAt = await withTimeout(
        adapter.consumerGroups!.recordAt(
          { topic, partition, offset: row.committed },
          { maxBodyBytes: showPayload ? VIEW_MAX_BODY_BYTES : 0 },
        ),
        READ_TIMEOUT_MS,
        "recordAt",
      );
      const record: PartitionRecord =
        at.kind === "record"
          ? { kind: "record", offset: at.offset.toString(), letter: letterDetailOf(at.letter, policy, showPayload) }
          : { kind: at.kind, start: at.start.toString(), end: at.end.toString() };
      return { ...group, partition: row, liveAt: live?.at ?? null, record };
    },
    (r) => ({
      found: r.record.kind === "record",
      offset: r.record.kind === "record" ? r.record.offset : null,
      payloadShown: r.record.kind === "record" && r.record.letter.payload !== null,
      sensitive: policy.sensitive,
    }),
  );
}

/** One group partition's offsets read from the broker now; null when the broker did not answer or no longer has it. */
async function liveOffsets(
  adapter: BrokerAdapter,
  groupId: string,
  topic: string,
  partition: number,
): Promise<{ at: Date; offsets: LiveOffsets } | null> {
  try {
    const round = await withTimeout(adapter.consumerGroups!.read(), READ_TIMEOUT_MS, "read consumer groups");
    const p = round.groups
      .find((g) => g.groupId === groupId)
      ?.partitions.find((x) => x.topic === topic && x.partition === partition);
    if (!p || p.end === null || p.lag === null) return null;
    return { at: round.sampledAt, offsets: { committed: p.committed, start: p.start, end: p.end, lag: p.lag } };
  } catch (e) {
    console.warn(`[groups] live offsets of ${groupId} ${topic}[${partition}] not read: ${(e as Error).message}`);
    return null;
  }
}
