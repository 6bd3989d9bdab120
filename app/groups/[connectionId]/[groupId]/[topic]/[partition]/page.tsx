import type { Metadata } from "next";
import Link from "@/components/ui/link";
import { notFound } from "next/navigation";
import { offsetText, PartitionState } from "@/components/consumer-groups/figures";
import { PartitionRecordView } from "@/components/consumer-groups/partition-record";
import { SkipPanel } from "@/components/consumer-groups/skip-panel";
import { Problem } from "@/components/ui/problem";
import { RelativeTime } from "@/components/ui/relative-time";
import { EscapeBack } from "@/components/ui/escape-back";
import { can } from "@/lib/auth/permissions";
import { requestMeta, requirePageActor } from "@/lib/auth/session";
import { groupHref, groupsHref, partitionHref } from "@/lib/consumer-groups/links";
import { listSkips } from "@/lib/consumer-groups/skip";
import { viewGroupPartition, type PartitionView } from "@/lib/consumer-groups/use-cases";
import { decodeParam } from "@/lib/dlq/links";
import { asAppError } from "@/lib/errors";

export const dynamic = "force-dynamic";

type Params = { connectionId: string; groupId: string; topic: string; partition: string };

export async function generateMetadata({ params }: { params: Promise<Params> }): Promise<Metadata> {
  const p = await params;
  return {
    title: `${decodeParam(p.topic).slice(0, 40)} [${decodeParam(p.partition)}] · ${decodeParam(p.groupId).slice(0, 30)}`,
  };
}

/**
 * One partition of a consumer group: its offsets, whether it is stuck, the record at its committed
 * offset (the one the group's consumer gets next, read now without joining the group, masked like
 * a letter), the skips of this partition, and for admins the move of that record to the DLT.
 */
export default async function GroupPartitionPage({ params }: { params: Promise<Params> }) {
  const p = await params;
  const connectionId = decodeParam(p.connectionId);
  const groupId = decodeParam(p.groupId);
  const topic = decodeParam(p.topic);
  const partition = Number.parseInt(decodeParam(p.partition), 10);
  const actor = await requirePageActor(partitionHref(connectionId, groupId, topic, partition));
  const back = groupHref(connectionId, groupId);
  if (!Number.isSafeInteger(partition) || partition < 0) notFound();
  let v: PartitionView;
  try {
    v = await viewGroupPartition(actor, await requestMeta(), { connectionId, groupId, topic, partition });
  } catch (e) {
    const err = asAppError(e);
    if (!err) throw e;
    if (err.type === "not_found") notFound();
    return (
      <main className="page">
        <Problem title="The partition could not be read." back={{ href: back, label: "← The group" }}>
          <p>{err.userMessage}</p>
        </Problem>
      </main>
    );
  }
  const meta = await requestMeta();
  const skips = await listSkips(actor, meta, { connectionId, groupId });
  const mine = skips.filter((s) => s.params.topic === topic && s.params.partition === partition);
  const r = v.partition;
  return (
    <main className="page">
      <EscapeBack href={back} />
      <div className="breadcrumbs">
        <Link href={groupsHref()}>Consumer groups</Link> / {v.connectionName} /{" "}
        <Link href={back} className="mono">
          {groupId}
        </Link>{" "}
        /{" "}
        <span className="mono">
          {topic} [{partition}]
        </span>
      </div>
      <div className="page-head">
        <h1 className="wrap-anywhere">
          {topic} <span className="muted">partition {partition}</span>
        </h1>
        <PartitionState lag={r.lag} stuck={r.stuck} since={r.since} stuckForMs={r.stuckForMs} />
        <span className="meta">
          committed{" "}
          <span className="mono" data-testid="partition-committed">
            {offsetText(r.committed)}
          </span>{" "}
          · end <span className="mono">{offsetText(r.end)}</span> · lag{" "}
          <span className="mono" data-testid="partition-lag">
            {offsetText(r.lag)}
          </span>{" "}
          ·{" "}
          {v.liveAt ? (
            <span data-testid="partition-live">
              read from the broker <RelativeTime value={v.liveAt.toISOString()} />
            </span>
          ) : (
            <span data-testid="partition-sampled">
              the broker did not answer now: as sampled <RelativeTime value={r.sampledAt.toISOString()} />
            </span>
          )}
        </span>
      </div>
      {r.stuck ? (
        <div className="banner banner-danger" role="status" data-testid="stuck-note">
          <strong>Stuck.</strong> Group <span className="mono">{groupId}</span> has not moved past offset{" "}
          {offsetText(r.committed)} since <RelativeTime value={r.since!.toISOString()} /> while {offsetText(r.lag)}{" "}
          record(s) wait behind it. Its consumer probably fails on the record below every time.
        </div>
      ) : null}
      <PartitionRecordView record={v.record} canReveal={can(actor.role, "payload:reveal")} />
      <SkipPanel
        connectionId={connectionId}
        groupId={groupId}
        topic={topic}
        partition={partition}
        committed={r.committed === null ? null : r.committed.toString()}
        end={r.end.toString()}
        canSkip={can(actor.role, "groups:skip") && v.record.kind === "record"}
        skips={mine}
      />
    </main>
  );
}
